"""What the docs' prose says about results, tested against the tool's results today.

The sample outputs on the site are made by running the tool when it is built
(``docs/_ext/doc_runs.py`` lists the runs).  The prose around them says what those runs
find ("the RoPE failures are all large-position cases", "T5 buckets pass"), and a few
sentences state counts or limits of the suite.  Each such sentence is tested here: the
example checks are run with the very commands the pages show (``doc_runs.check_argv``),
the export sessions with the pages' options, and the counts are compared with the
constants and golden files they come from.  When a result changes, a test here fails
until the page says what the tool does.

Needs: mlx and torch for the MLX and PyTorch examples (skipped without them).  About 30 s.
"""

from __future__ import annotations

import importlib.util
import json
import math
import pathlib
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import doc_runs  # noqa: E402

GOLDEN = ROOT / "posenc_ref_conformance" / "golden" / "vectors"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
TIMES, EN_DASH, MINUS = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}", "\N{MINUS SIGN}"


def _page(relative: str) -> str:
    """A page's source with its whitespace runs made single spaces (prose wraps anywhere)."""
    return " ".join((ROOT / relative).read_text(encoding="utf-8").split())


def _power(value: int) -> str:
    """``2**20`` as the pages write it: ``2²⁰``."""
    exponent = value.bit_length() - 1
    assert value == 1 << exponent, value
    return f"2{str(exponent).translate(_SUPERSCRIPT)}"


def _cli(line: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """Run ``posenc-ref ...`` as the docs build does."""
    return _posenc_ref(shlex.split(line), cwd)


def _posenc_ref(argv: list[str], cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        doc_runs.command(argv),
        cwd=cwd,
        env=doc_runs.environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _golden_cases(function: str) -> list[dict[str, Any]]:
    return json.loads((GOLDEN / f"{function}.json").read_text(encoding="ascii"))["cases"]


def _values(array: dict[str, Any]) -> list[Any]:
    return array.get("values") or array["hex"]


# --------------------------------------------------------------------------------------
# The example checks of the guide: run once, with the pages' own commands
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict[str, Any]]]:
    """example -> (printed report, JSON report), for every example whose library is installed."""
    out = tmp_path_factory.mktemp("checks")
    found = {}
    for example, needs in doc_runs.CHECK_EXAMPLES.items():
        if importlib.util.find_spec(needs.split(".")[0]) is None:
            continue
        report = out / doc_runs.report_name(example)
        proc = _posenc_ref(doc_runs.check_argv(example, str(report)), ROOT)
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
        found[example] = (proc.stdout, json.loads(report.read_text()))
    return found


def _run(runs: dict[str, tuple[str, dict[str, Any]]], example: str) -> tuple[str, dict[str, Any]]:
    if example not in runs:
        pytest.skip(f"{doc_runs.CHECK_EXAMPLES[example]} is not installed")
    return runs[example]


def _failing(report: dict[str, Any], functions: Iterable[str] | None = None) -> list[dict[str, Any]]:
    wanted = None if functions is None else set(functions)
    return [
        r for r in report["results"] if r["status"] == "fail" and (wanted is None or r["function"] in wanted)
    ]


def _is_rope(result: dict[str, Any]) -> bool:
    return result["scheme"] == "rope" or result["id"].startswith("invariant/rope/")


# --- check.md, MLX ----------------------------------------------------------------------------


def test_mlx_example_passes_and_only_the_large_shift_invariant_is_beyond(runs: dict) -> None:
    """check.md: the MLX example declares the product class; the `beyond` results of the run are the
    relative-shift invariant in float32 (shift 2^20)."""
    _, report = _run(runs, "mlx_adapter.py")
    assert report["declared"]["phase"] == "product"
    beyond = [r for r in report["results"] if r["status"] == "beyond-precision"]
    assert beyond, "the page explains `beyond` results of this run"
    for r in beyond:
        assert r["id"].startswith("invariant/rope/relative-shift-large/") and r["dtype"] == "float32", r[
            "resultId"
        ]
    assert "in this run those are the relative-shift invariant in float32" in _page("docs/guide/check.md")


def test_mlx_teaching_copy_agrees_with_the_builtin_adapter(runs: dict, tmp_path: pathlib.Path) -> None:
    """check.md: the example and ``posenc-ref check mlx`` declare the same class, reach the same verdict,
    give every result both compare the same status; the built-in one compares more, rope_from_base too."""
    _, example = _run(runs, "mlx_adapter.py")
    proc = _cli(f"posenc-ref check mlx --json {tmp_path / 'builtin.json'}", ROOT)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    builtin = json.loads((tmp_path / "builtin.json").read_text())
    assert builtin["verdict"] == example["verdict"]
    assert builtin["declared"]["phase"] == example["declared"]["phase"]
    compared = {"pass", "fail", "xfail", "xpass", "beyond-precision"}
    mine = {r["resultId"]: r["status"] for r in example["results"] if r["status"] in compared}
    theirs = {r["resultId"]: r["status"] for r in builtin["results"] if r["status"] in compared}
    assert set(mine) < set(theirs)
    assert {k: theirs[k] for k in mine} == mine
    assert any(k.startswith("rope_from_base/") for k in set(theirs) - set(mine))


# --- check.md, PyTorch --------------------------------------------------------------------------


def test_torch_rope_fails_only_at_large_positions_in_both_dtypes(runs: dict) -> None:
    """check.md: the failing RoPE results are all of cases flagged LargePosition, in float32 and
    float64; float64 errors tiny but far outside tolerance, float32 ones fatal; judged exact, and the
    diagnosis names the product class and its declaration (also the suite's README)."""
    _, report = _run(runs, "torch_adapter.py")
    assert report["declared"]["phase"] == "exact"
    rope = [r for r in _failing(report) if _is_rope(r)]
    assert rope
    assert all("LargePosition" in r["flags"] for r in rope), [r["resultId"] for r in rope]
    assert {r["dtype"] for r in rope} == {"float32", "float64"}
    assert any(r["id"].startswith("invariant/rope/relative-shift-large/") for r in rope)
    f64 = [r for r in rope if r["dtype"] == "float64" and r["max_abs_err"] is not None]
    f32 = [r for r in rope if r["dtype"] == "float32" and r["max_abs_err"] is not None]
    assert max(r["max_abs_err"] for r in f64) < 1e-3 < min(r["tolerance_used"] for r in f64)
    assert max(r["max_abs_err"] for r in f32) > 0.1
    texts = [
        d["hypothesis"]
        for g in report["diagnosis"]
        if g["function"] in ("rope", "rope_cos_sin")
        for d in g["diagnoses"]
    ]
    assert any("product precision class" in t and 'declare "phase": "product"' in t for t in texts), texts


def _powers_of_two(values: Iterable[float]) -> bool:
    return all(math.frexp(v)[0] == 0.5 for v in values)


def test_torch_alibi_slopes_fail_in_float64_exactly_where_slopes_are_not_powers_of_two(runs: dict) -> None:
    """check.md: BLOOM's float32 slopes fail in float64 for exactly the head counts whose slopes are
    not powers of two, and pass in float32."""
    import posenc_ref as pr

    _, report = _run(runs, "torch_adapter.py")
    ran = [
        r for r in report["results"] if r["function"] == "alibi_slopes" and r["status"] in ("pass", "fail")
    ]
    inputs = {c["id"]: c["inputs"] for c in _golden_cases("alibi_slopes")}
    failing64 = {r["id"] for r in ran if r["status"] == "fail" and r["dtype"] == "float64"}
    valued = {r["id"] for r in ran if r["dtype"] == "float64" and "invalid" not in r["id"]}
    inexact = {
        i
        for i in valued
        if not _powers_of_two(
            np.asarray(pr.alibi_slopes(inputs[i]["num_heads"], max_bias=inputs[i]["max_bias"]))
        )
    }
    assert failing64 == inexact and inexact
    assert not [r for r in ran if r["status"] == "fail" and r["dtype"] == "float32"]


def test_torch_t5_buckets_pass(runs: dict) -> None:
    """check.md: T5 buckets pass."""
    _, report = _run(runs, "torch_adapter.py")
    t5 = report["schemes"]["t5"]
    assert t5["compared"] > 0 and not t5.get("fail")


def _matches(entry: str, result_id: str) -> bool:
    """An xfail entry names a run id, a case id or an id prefix ending where ``/`` or ``[`` follows."""
    return (
        result_id == entry
        or result_id.startswith((f"{entry}[", f"{entry}/"))
        or (entry.endswith("/") and result_id.startswith(entry))
    )


def test_the_xfail_example_names_failures_of_the_torch_example(runs: dict) -> None:
    """check.md, section 4: every line of the xfail example matches a failing result of the PyTorch run."""
    _, report = _run(runs, "torch_adapter.py")
    text = (ROOT / "docs/guide/check.md").read_text(encoding="utf-8")
    block = re.search(r"## 4\. Known failures.*?```text\n(.*?)```", text, re.S)
    assert block is not None
    entries = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    failing = [r["resultId"] for r in _failing(report)]
    for entry in filter(None, entries):
        assert any(_matches(entry, f) for f in failing), entry


def test_the_ulp_example_is_right() -> None:
    """check.md: a float64 1e-3 has an ulp of about 2.2e-19; an error of 3e-15 there is over 10,000 ulp."""
    ulp = float(np.spacing(1e-3))
    assert f"{ulp:.1e}" == "2.2e-19"
    assert 3e-15 / ulp > 10_000
    assert "an ulp of about 2.2e-19" in _page("docs/guide/check.md")


def test_the_case_ids_page_examples_name_existing_ids(runs: dict) -> None:
    """case-ids.md: each example xfail line matches a case or invariant (a full run lists them all)."""
    full = [r for e, r in runs.items() if not doc_runs.CHECK_ARGUMENTS.get(e)]
    if not full:
        pytest.skip("no example without --only could run")
    ids = [r["resultId"] for r in full[0][1]["results"]]
    text = (ROOT / "docs/guide/case-ids.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n# examples of xfail lines\n(.*?)```", text, re.S)
    assert block is not None
    entries = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    for entry in filter(None, entries):
        assert any(_matches(entry, i) for i in ids), entry


def test_the_isolation_limits_the_check_page_states() -> None:
    """check.md: the default --timeout and the adapter output kept."""
    from posenc_ref_conformance import isolation

    page = _page("docs/guide/check.md")
    assert f"(default {isolation.DEFAULT_TIMEOUT:g}; `POSENC_REF_TIMEOUT`)" in page
    assert f"(its last {isolation.MAX_OUTPUT >> 20} MiB)" in page


# --- report.md and the READMEs -----------------------------------------------------------------


def test_the_quoted_diagnosis_is_the_planted_bugs(runs: dict) -> None:
    """report.md and README.md quote the planted bug's diagnosis with its counts."""
    _, report = _run(runs, "planted_bug_adapter.py")
    group = next(g for g in report["diagnosis"] if g["function"] == "rope")
    shape = group["diagnoses"][0]
    counts = f"on {shape['results']} of {group['failing']} failing results"
    quoted = f"`consistent with: {shape['hypothesis']}, {counts}`"
    assert quoted in _page("docs/guide/report.md")
    assert f"`consistent with: {shape['hypothesis']}`" in _page("README.md")


def test_the_table_columns_the_readmes_name(runs: dict) -> None:
    """README.md and the suite's README name the report table's columns."""
    printed, _ = _run(runs, "planted_bug_adapter.py")
    header = next(line for line in printed.splitlines() if line.startswith("scheme "))
    for column in ("ran", "pass", "fail", "skip", "xfail", "beyond", "max abs err f32", "tol used f32"):
        assert column in header, column
    assert "max ulp" not in header
    assert "(pass/fail/skip, max abs error, tolerance used)" in _page("README.md")
    suite = _page("posenc_ref_conformance/README.md")
    assert "pass / fail / skip / xfail / beyond, max abs error and tolerance used per float dtype" in suite


def test_report_page_states_the_diagnosis_size_limit() -> None:
    from posenc_ref_conformance.diagnosis import MAX_ELEMENTS

    exponent = MAX_ELEMENTS.bit_length() - 1
    assert MAX_ELEMENTS == 1 << exponent
    assert f"Outputs of more than $2^{{{exponent}}}$ elements" in _page("docs/guide/report.md")


# --- family pages --------------------------------------------------------------------------------


def _ranges(values: list[int]) -> str:
    """``1-8, 12, 16 and 112`` (with an en dash): runs of three or more as ranges."""
    parts, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[i - 1] + 1:
            run = values[start:i]
            parts += [f"{run[0]}{EN_DASH}{run[-1]}"] if len(run) >= 3 else [str(v) for v in run]
            start = i
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]


def test_alibi_head_counts_of_the_golden_slopes() -> None:
    """families/relative.md lists the head counts the golden slopes cover."""
    heads = sorted(
        {c["inputs"]["num_heads"] for c in _golden_cases("alibi_slopes") if "invalid" not in c["id"]}
    )
    assert f"Golden slopes cover {_ranges(heads)} heads." in _page("docs/families/relative.md")


def test_t5_cases_sit_on_both_sides_of_the_stated_boundaries() -> None:
    """families/relative.md: 90/91 (bidirectional) and 112/113 (causal) for 32 buckets, max distance 128."""
    cases = {c["id"]: c for c in _golden_cases("t5_bucket")}
    for case_id, pair in (
        ("t5_bucket/bidirectional/32-128-range", (90, 91)),
        ("t5_bucket/causal/32-128-range", (-112, -113)),
    ):
        case = cases[case_id]
        assert (case["inputs"]["num_buckets"], case["inputs"]["max_distance"]) == (32, 128)
        relative = _values(case["inputs"]["relative"])
        buckets = dict(zip(relative, _values(case["expected"]["buckets"]), strict=True))
        assert buckets[pair[0]] != buckets[pair[1]], (case_id, pair)
    assert "(90/91 bidirectional and 112/113 causal for 32/128)" in _page("docs/families/relative.md")


def test_longrope_cases_at_and_after_the_switch() -> None:
    """families/rope.md: LongRoPE cases at L and L + 1."""
    for case in _golden_cases("rope_frequencies"):
        scaling = case["inputs"].get("scaling") or {}
        if scaling.get("rope_type") == "longrope":
            original = scaling["original_max_position_embeddings"]
            break
    seq_lens = {
        c["inputs"].get("seq_len")
        for c in _golden_cases("rope_frequencies")
        if (c["inputs"].get("scaling") or {}).get("original_max_position_embeddings") == original
    }
    assert {original, original + 1} <= seq_lens


def test_large_position_cases_fail_an_exact_float32_product(runs: dict) -> None:
    """families/rope.md: the golden cases at 2^20 and 2^24 + 1 fail a float32-product RoPE judged exact."""
    _, report = _run(runs, "torch_adapter.py")
    failing = {r["resultId"] for r in _failing(report)}
    assert {"rope/half/large-positions[float32]", "rope/half/large-block-2e24-llama3.1[float32]"} <= failing


# --- golden-languages.md and golden-format.md --------------------------------------------------------------


def _function_lines(path: pathlib.Path, start: str) -> int:
    """Lines of the function whose first line starts with ``start``, to its closing brace at column 0."""
    lines = path.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first, len(lines)) if lines[i] == "}")
    return last - first + 1


@pytest.mark.parametrize(
    ("claim", "file", "start"),
    [
        ("the 40-line `parse_hex_float`", "hexfloat.rs", "pub fn parse_hex_float"),
        ("the 20-line `parseHexFloat`", "read_golden.mjs", "export function parseHexFloat"),
    ],
)
def test_reader_line_counts(claim: str, file: str, start: str) -> None:
    stated = int(re.search(r"(\d+)-line", claim).group(1))
    actual = _function_lines(ROOT / "docs" / "examples" / "golden" / file, start)
    assert round(actual, -1) == stated, actual
    assert claim in _page("docs/guide/golden-languages.md")


def test_binary_threshold_and_a_pure_json_shipped_set() -> None:
    from posenc_ref_conformance.golden.export import BINARY_THRESHOLD

    assert f"arrays of more than {BINARY_THRESHOLD} elements as `.npy` files" in _page(
        "docs/guide/golden-format.md"
    )
    assert f"An array of more than {BINARY_THRESHOLD} elements (`--binary auto`)" in _page(
        "docs/guide/export.md"
    )
    assert not list(GOLDEN.rglob("*.npy"))


# --------------------------------------------------------------------------------------
# export.md
# --------------------------------------------------------------------------------------
def _row(page: str, start: str) -> str:
    """The line of ``docs/guide/export.md``'s table that starts with ``start``."""
    return next(line for line in page.splitlines() if line.startswith(start))


def test_export_bounds_table_states_the_bounds() -> None:
    from posenc_ref_conformance.golden import export
    from posenc_ref_conformance.golden import hf_config as h

    page = (ROOT / "docs/guide/export.md").read_text(encoding="utf-8")
    expect = {
        "| `head_dim`": f"1 to {h.MAX_HEAD_DIM};",
        "| `num_attention_heads`": f"1 to {h.MAX_HEADS} ",
        "| `hidden_size`": f"1 to {_power(h.MAX_HEADS * h.MAX_HEAD_DIM)} ",
        "| `max_position_embeddings`": f"1 to {_power(h.MAX_CONTEXT)};",
        "| `factor`": f"1 to {_power(h.MAX_FACTOR)} ",
        "| `attention_factor`": f"at most {h.MAX_ATTENTION} ",
        "| LongRoPE": f"(at most {h.MAX_HEAD_DIM // 2})",
        "| `relative_attention_num_buckets`": f"4 to {h.MAX_T5_BUCKETS} ",
        "| `relative_attention_max_distance`": f"at most {h.MAX_DISTANCE} ",
        "| layer types": f"at most {h.MAX_LAYER_TYPES},",
        "| `--positions`": f"at most {_power(export.MAX_POSITIONS)} positions",
        "| the config file": (
            f"at most {export.MAX_CONFIG_BYTES // 2**20} MiB, nested at most {export.MAX_CONFIG_DEPTH} levels"
        ),
    }
    for start, text in expect.items():
        assert text in _row(page, start), (start, text)
    prose = _page("docs/guide/export.md")
    assert f"refused above **{export.MAX_EXPORT_BYTES // 2**30} GiB** in total" in prose
    assert f"**{export.MAX_JSON_BYTES // 2**30} GiB** for any one JSON file" in prose


def test_export_sizes_stated_for_llama_and_the_position_cap() -> None:
    """export.md: Llama 3.1 at 131072 positions in both layouts is 0.5 GiB; 2^22 positions of a 128-wide head
    are 16 GiB in both layouts, 8 GiB in one."""
    from posenc_ref_conformance.golden import export

    llama = export.source_from_config(ROOT / doc_runs.LLAMA)
    both = export.estimate(llama, export.ExportOptions(positions=tuple(range(131072))))
    assert round(both.bytes / 2**30, 1) == 0.5
    wide = export.source_from_scaling({"rope_type": "default"}, head_dim=128, base=1e4)
    many = tuple(range(export.MAX_POSITIONS))
    two = export.estimate(wide, export.ExportOptions(positions=many, default_positions=False))
    one = export.estimate(
        wide, export.ExportOptions(positions=many, default_positions=False, layouts=("half",))
    )
    assert (round(two.bytes / 2**30), round(one.bytes / 2**30)) == (16, 8)
    assert "2²² positions of a 128-wide head are 16 GiB in both layouts, 8 GiB in one" in _page(
        "docs/guide/export.md"
    )


def test_export_constants_in_the_prose() -> None:
    from posenc_ref_conformance import oracle
    from posenc_ref_conformance.golden import _export_cases as cases
    from posenc_ref_conformance.golden import export

    prose = _page("docs/guide/export.md")
    assert f"in chunks of {cases.CHUNK} positions" in prose
    assert f"at up to {cases.SAMPLE} of the positions" in prose
    assert (
        f"A `rope_cos_sin` case over {cases.SAMPLE} positions is sampled instead: "
        f"{export.CHECK_ROWS} seeded rows" in prose
    )
    assert f"recomputes the values at {oracle.CHECK_DIGITS} digits" in prose
    assert f"It holds {_series_of(cases._BASE_POSITIONS)}, and *E* {MINUS} 1, *E*, *E* + 1" in prose


def _series_of(values: Iterable[int]) -> str:
    return ", ".join(str(v) for v in values)


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A folder with the guide's Qwen and Phi-3.5 exports (its commands) and a small Mistral one."""
    work = tmp_path_factory.mktemp("exports")
    for session in doc_runs.SESSIONS:
        if session.name in ("qwen", "phi35"):
            for name, source in session.files.items():
                (work / name).parent.mkdir(parents=True, exist_ok=True)
                (work / name).write_bytes((ROOT / source).read_bytes())
            proc = _cli(session.steps[0].line, work)
            assert proc.returncode == 0, proc.stderr
    (work / "mistral.json").write_bytes((ROOT / "tests/data/hf_configs/mistral_7b_v0_3.json").read_bytes())
    proc = _cli("posenc-ref golden export --hf-config mistral.json --positions 0,1,4095 --out mistral", work)
    assert proc.returncode == 0, proc.stderr
    return work


ADAPTER = "docs/examples/no_attention_factor_adapter.py"


def test_dropping_the_attention_factor_fails_every_case_that_carries_it(exports: pathlib.Path) -> None:
    """export.md (Qwen2.5): read through the legacy `type`, the extended edge 131072 is a context edge,
    the factor is 0.1 ln 4 + 1 = 1.1386; the adapter fails every case but apply_rope's; Mistral passes."""
    index = json.loads((exports / "qwen" / "index.json").read_text())
    assert index["export"]["plan"]["rope"][0]["scaling"]["rope_type"] == "yarn"
    assert 131072 in index["export"]["positions"]["contextEdges"]
    expected = next(iter(_golden_of(exports / "qwen", "rope_frequencies")))["expected"]["attention_factor"]
    factor = float.fromhex(expected["hex"][0])
    assert round(factor, 4) == round(0.1 * math.log(4) + 1, 4) == 1.1386
    report = exports / "qwen-report.json"
    proc = _cli(f"posenc-ref check {ROOT / ADAPTER} --golden qwen --no-invariants --json {report}", exports)
    assert proc.returncode == 1, proc.stderr
    results = json.loads(report.read_text())["results"]
    assert {r["status"] for r in results if r["function"] == "apply_rope"} == {"pass"}
    assert {r["status"] for r in results if r["function"] != "apply_rope"} == {"fail"}
    proc = _cli(f"posenc-ref check {ROOT / ADAPTER} --golden mistral --no-invariants", exports)
    assert proc.returncode == 0, proc.stdout[-3000:]


def _golden_of(folder: pathlib.Path, function: str) -> list[dict[str, Any]]:
    return json.loads((folder / f"{function}.json").read_text(encoding="ascii"))["cases"]


SWITCH_AT_ORIGINAL = '''
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter


class SwitchAtOriginal(PosencRefAdapter):
    """LongRoPE's long factors from seq_len >= original on (the switch is seq_len > original)."""

    def rope_frequencies(self, dim, *, scaling, seq_len, **options):
        scaling = scaling or {}
        if scaling.get("rope_type") == "longrope" and seq_len == scaling["original_max_position_embeddings"]:
            seq_len += 1
        return super().rope_frequencies(dim, scaling=scaling, seq_len=seq_len, **options)


ADAPTER = SwitchAtOriginal()
'''


def test_the_longrope_switch_of_the_phi_export(exports: pathlib.Path) -> None:
    """export.md (Phi-3.5): seq-len-none and -4096 short, -4097 and -131074 long; switching at >= fails
    exactly rope_frequencies/model/seq-len-4096."""
    freqs = {
        c["id"].rsplit("/", 1)[1]: _values(c["expected"]["inv_freq"])
        for c in _golden_of(exports / "phi35", "rope_frequencies")
    }
    assert freqs["seq-len-none"] == freqs["seq-len-4096"] != freqs["seq-len-4097"] == freqs["seq-len-131074"]
    (exports / "switch_at_original.py").write_text(SWITCH_AT_ORIGINAL)
    report = exports / "phi-report.json"
    proc = _cli(
        f"posenc-ref check switch_at_original.py --golden phi35 --no-invariants --json {report}", exports
    )
    assert proc.returncode == 1, proc.stderr
    failing = {r["id"] for r in json.loads(report.read_text())["results"] if r["status"] == "fail"}
    assert failing == {"rope_frequencies/model/seq-len-4096"}
    assert "fails exactly `rope_frequencies/model/seq-len-4096`" in _page("docs/guide/export.md")


def test_the_llama_export_adds_the_positions_past_the_context(tmp_path: pathlib.Path) -> None:
    """export.md (Llama 3.1): asked for 0..131071, the default set adds 131072 and 131073; 128 channels."""
    from posenc_ref_conformance.golden._export_cases import default_positions

    (tmp_path / "llama3_1_8b.json").write_bytes((ROOT / doc_runs.LLAMA).read_bytes())
    proc = _cli(
        "posenc-ref golden export --hf-config llama3_1_8b.json --positions 0,1 --layout half --out small",
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "small" / "index.json").read_text())["export"]
    edges = record["positions"]["contextEdges"]
    assert [p for p in default_positions(edges) if p >= 131072] == [131072, 131073]
    assert record["plan"]["rope"][0]["head_dim"] == 128
    session = next(s for s in doc_runs.SESSIONS if s.name == "llama31")
    assert "--positions 0:131072 --layout half" in session.steps[0].line
    assert f"The tables are 2 {TIMES} 131074 {TIMES} 128 float64 values" in _page("docs/guide/export.md")
