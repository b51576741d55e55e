#!/usr/bin/env bash
# Check the golden-vector readers shown in docs/guide/golden-languages.md against Python.
#
# The JavaScript reader (node) always runs; the C++ reader runs when g++ and nlohmann/json
# (Debian: nlohmann-json3-dev) are present; the Rust hex-float parser's tests run when
# rustc is present.  Each reader decodes every float64 of the golden files and must find
# exactly the doubles Python's float.fromhex finds.  Without golden files yet, a sample
# written with posenc_ref_conformance/golden/_format.py (edge cases: subnormals, extremes) is used.
# A small exported set (posenc-ref golden export --binary always) adds .npy arrays, which
# the readers must decode to the doubles NumPy reads; the Rust .npy parser's tests run too.
set -euo pipefail
cd "$(dirname "$0")/.."
examples=docs/examples/golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t files < <(find posenc_ref_conformance/golden/vectors -name '*.json' 2>/dev/null | sort)
python - "$work/sample.json" <<'PY'
import sys
from posenc_ref_conformance.golden import _format as f
doc = {"format": "sample", "checksum": {"algorithm": "sha256", "value": f.CHECKSUM_PLACEHOLDER},
       "cases": [{"id": "edge", "expected": f.float_array([[3.141592653589793, 0.1, -2.5],
                                                          [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]]),
                  "index": f.int_array([0, -1, 2**40]), "mask": f.bool_array([True, False])}]}
open(sys.argv[1], "wb").write(f.dumps(doc))
PY
files+=("$work/sample.json")
posenc-ref golden export --hf-config tests/data/hf_configs/phi_2.json --out "$work/export" \
    --positions 0:300 --layout half --binary always > /dev/null
files+=("$work/export/rope_cos_sin.json" "$work/export/rope.json")

python - "${files[@]}" > "$work/python.txt" <<'PY'
import hashlib, json, pathlib, struct, sys
import numpy as np
def floats(array, directory):
    if "file" in array:  # a binary array of an exported set: the .npy beside the JSON
        return np.load(directory / array["file"]).ravel().tolist()
    return [float.fromhex(h) for h in array["hex"]]
def arrays(node):
    if isinstance(node, dict):
        if isinstance(node.get("dtype"), str) and isinstance(node.get("shape"), list):
            yield node; return
        for v in node.values(): yield from arrays(v)
    elif isinstance(node, list):
        for v in node: yield from arrays(v)
for name in sys.argv[1:]:
    doc = json.load(open(name))
    here = pathlib.Path(name).parent
    values = [v for a in arrays(doc) if a["dtype"] == "float64" for v in floats(a, here)]
    h = hashlib.sha256(b"".join(struct.pack("<d", v) for v in values)).hexdigest()
    fold = 0
    for v in values:
        fold = ((fold * 1099511628211) & (2**64 - 1)) ^ struct.unpack("<Q", struct.pack("<d", v))[0]
    print(f"{name} {len(values)} {h} {fold:x}")
PY

fail=0
echo "javascript (node $(node --version)):"
node "$examples/read_golden.mjs" "${files[@]}" > "$work/js.txt"
while read -r name count sha fold; do
    got=$(grep -A1 -F "$name: checksum" "$work/js.txt" | tail -n 1)
    status=$(grep -F "$name: checksum" "$work/js.txt")
    # every file has a checksum except the manifest index.json (which lists the files' sha256)
    if [[ "$got" != "float64 values: $count, bits sha256: $sha" || ( "$status" != *"checksum ok" \
          && ! ( "$status" == *"checksum none" && "$name" == *index.json ) ) ]]; then
        echo "  MISMATCH $name: python $count $sha; node: $status / $got"; fail=1
    fi
done < "$work/python.txt"
[ $fail = 0 ] && echo "  ${#files[@]} files read, values identical to Python's float.fromhex, checksums verified"

if command -v g++ >/dev/null && [ -f /usr/include/nlohmann/json.hpp ]; then
    g++ -std=c++17 -O1 "$examples/read_golden.cpp" -o "$work/read_golden"
    "$work/read_golden" "${files[@]}" > "$work/cpp.txt"
    while read -r name count sha fold; do
        if ! grep -q -F "$name: float64 values: $count, bits fold: $fold" "$work/cpp.txt"; then
            echo "  MISMATCH (C++) $name"; fail=1
        fi
    done < "$work/python.txt"
    [ $fail = 0 ] && echo "c++ (nlohmann/json, std::strtod): ${#files[@]} files, values identical"
else
    echo "c++: skipped (needs g++ and nlohmann-json3-dev)"
fi

if command -v rustc >/dev/null; then
    rustc --edition 2021 --test "$examples/hexfloat.rs" -o "$work/hexfloat" >/dev/null
    "$work/hexfloat" -q >/dev/null && echo "rust: hexfloat.rs tests pass" || { echo "rust: hexfloat.rs tests FAIL"; fail=1; }
    rustc --edition 2021 --test "$examples/npy.rs" -o "$work/npy" >/dev/null
    "$work/npy" -q >/dev/null && echo "rust: npy.rs tests pass" || { echo "rust: npy.rs tests FAIL"; fail=1; }
else
    echo "rust: skipped (no rustc)"
fi
exit $fail
