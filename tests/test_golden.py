"""posenc_ref against the golden vectors, on every backend, and the golden files themselves.

The expected values come from the conformance oracle (mpmath), never from
posenc_ref.  Tolerances are the ones stored in the vectors.  The max abs error
and max ulp per backend and function are printed at the end of the session
("golden vectors: max error per backend").  Slow backends (JAX, which compiles
each new shape, and Dask) run about five cases of each file, in their widest float dtype.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from posenc_ref_conformance import golden
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.golden import _format
from posenc_ref_conformance.isolation import InProcessExecutor, ProxyAdapter
from posenc_ref_conformance.runner import _golden_results

FILES = {doc["function"]: doc for doc in golden.load()}
SLOW_BACKENDS = {"jax.numpy", "jax.numpy:x32", "dask.array"}

#: (backend, case id) -> why posenc_ref is known to differ there.  Strict: a fixed one fails the test.
KNOWN: dict[tuple[str, str], str] = {}

_TABLE: dict[tuple[str, str], tuple[Any, ...]] = {}


@pytest.fixture(scope="session")
def error_table(request: pytest.FixtureRequest) -> Iterator[dict[tuple[str, str], tuple[Any, ...]]]:
    """Collects max errors per (backend, function) and prints them when the session ends."""
    yield _TABLE
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not _TABLE:
        return
    with capture.global_and_fixture_disabled():
        _print_table(reporter)


def _print_table(reporter: Any) -> None:
    reporter.write_line("")
    reporter.write_sep("-", "golden vectors: max error per backend (float64 | float32)")
    reporter.write_line(
        f"{'backend':<18}{'function':<20}{'abs err f64':>12}{'ulp f64':>9}{'abs err f32':>13}{'ulp f32':>9}"
    )

    def fmt(value: Any, width: int, spec: str) -> str:
        return ("-" if value is None else format(value, spec)).rjust(width)

    for (backend, function), row in sorted(_TABLE.items()):
        specs = ((12, ".3g"), (9, ".0f"), (13, ".3g"), (9, ".0f"))
        cells = "".join(fmt(v, w, s) for v, (w, s) in zip(row, specs, strict=True))
        reporter.write_line(f"{backend:<18}{function:<20}{cells}")


def _subset(doc: dict[str, Any], every: int) -> dict[str, Any]:
    doc = dict(doc)
    doc["cases"] = doc["cases"][::every]
    return doc


def _worst(results: list[Any], dtype: str, attr: str) -> Any:
    values = [getattr(r, attr) for r in results if r.dtype == dtype and getattr(r, attr) is not None]
    return max(values) if values else None


@pytest.mark.parametrize("function", list(FILES))
def test_library_matches_golden(function: str, xp: Any, library: Any, error_table: dict[Any, Any]) -> None:
    """Every case of one golden file (valid and invalid) passes on this backend."""
    adapter = PosencRefAdapter(library.value, xp=xp)
    doc = FILES[function]
    if library.value in SLOW_BACKENDS:  # about 5 cases per file, widest float dtype: JAX compiles per shape
        doc = _subset(doc, max(1, math.ceil(len(doc["cases"]) / 5)))
        adapter.capabilities = dataclasses.replace(
            adapter.capabilities, dtypes=adapter.capabilities.dtypes[:1]
        )
    results = _golden_results(ProxyAdapter(InProcessExecutor(adapter)), [doc], None)
    error_table[(library.value, function)] = tuple(
        _worst(results, dtype, attr)
        for dtype in ("float64", "float32")
        for attr in ("max_abs_err", "max_ulp")
    )
    problems = []
    for r in results:
        known = KNOWN.get((library.value, r.id))
        if known and r.status == "pass":
            problems.append(f"{r.result_id} passes now; remove it from KNOWN ({known})")
        elif r.status == "fail" and not known:
            problems.append(f"{r.result_id}: {r.detail}")
    assert not problems, "\n".join(problems)
    ran = [r for r in results if r.status != "skip"]
    assert ran or library.value in SLOW_BACKENDS, f"every case of {function} was skipped"


INVALID = [
    (doc["function"], case) for doc in FILES.values() for case in doc["cases"] if case["result"] == "invalid"
]


@pytest.mark.parametrize("case", [c for _, c in INVALID], ids=[c["id"] for _, c in INVALID])
def test_invalid_inputs_raise_the_documented_error(case: dict[str, Any]) -> None:
    """posenc_ref raises the reference's exception type, naming the parameter (NumPy backend)."""
    from posenc_ref_conformance.runner import _arguments, _decode_inputs

    function = case["id"].split("/")[0]
    doc = FILES[function]
    adapter = PosencRefAdapter("numpy")
    args, kwargs = _arguments(doc, _decode_inputs(case, doc["castInputs"], "float64"), "float64")
    expected = case["expected"]
    with pytest.raises(Exception) as info:
        getattr(adapter, function)(*args, **kwargs)
    assert type(info.value).__name__ == expected["error"], f"{type(info.value).__name__}: {info.value}"
    assert expected["parameter"] in str(info.value), str(info.value)


class TestGoldenFiles:
    """The vectors themselves: structure, schema strictness, checksums (full lint: test_conformance_cli)."""

    def test_structure_lint_passes(self) -> None:
        from posenc_ref_conformance.golden.lint import lint

        assert lint(reproduce=False, precision=False) == []

    def test_cases_per_scheme_and_size(self) -> None:
        index = golden.load_index()
        assert index["totalCases"] == sum(len(d["cases"]) for d in FILES.values())
        from posenc_ref_conformance.golden.cases import FUNCTIONS

        # the index counts exactly the declared schemes (a new family is declared, never listed
        # here), and none of the first families is lost
        declared = {spec.scheme for spec in FUNCTIONS.values()}
        assert set(index["casesPerScheme"]) == declared
        assert declared >= {"alibi", "attention", "kernel_bias", "learned", "nope", "rope", "shaw"}
        assert declared >= {"sinusoidal", "t5"}
        total = sum((golden.VECTORS_DIR / e["file"]).stat().st_size for e in index["files"])
        # small enough to ship in the wheel (lint's hard limit is 20 MB): the 2-D vision families doubled
        # the schemes, and 4.3 MB of vectors compress to 0.95 MB (gzip), so 8 MiB stays a small wheel
        assert total < 8 * 1024 * 1024

    def test_every_float_is_exact_in_hex_and_decimal(self) -> None:
        for doc in FILES.values():
            for array in _arrays(doc["cases"]):
                if array["dtype"] == "float64":
                    assert [float.fromhex(h) for h in array["hex"]] == array["decimal"]

    @pytest.mark.parametrize("mutation", ["extra-key", "missing-key", "bad-hex", "bad-result", "bad-flag"])
    def test_schema_rejects(self, mutation: str) -> None:
        import jsonschema

        validator = jsonschema.Draft202012Validator(json.loads(golden.SCHEMA_PATH.read_text()))
        doc = copy.deepcopy(FILES["rope_frequencies"])
        assert not list(validator.iter_errors(doc))
        case = doc["cases"][0]
        if mutation == "extra-key":
            case["note"] = "not allowed"
        elif mutation == "missing-key":
            del case["comment"]
        elif mutation == "bad-hex":
            case["expected"]["inv_freq"]["hex"][0] = "1.0"
        elif mutation == "bad-result":
            case["result"] = "acceptable"
        else:
            case["flags"].append("not a flag")
        assert list(validator.iter_errors(doc))

    def test_checksum_detects_tampering(self) -> None:
        path = golden.VECTORS_DIR / "t5_bucket.json"
        data = path.read_bytes()
        value = json.loads(data)["checksum"]["value"]
        assert _format.checksum_of(data, value) == value
        tampered = data.replace(b'"values": [0, 1', b'"values": [0, 2', 1)
        assert tampered != data
        assert _format.checksum_of(tampered, value) != value

    def test_canonical_layout_round_trips(self) -> None:
        for entry in golden.load_index()["files"]:
            data = (golden.VECTORS_DIR / entry["file"]).read_bytes()
            assert _format.dumps(json.loads(data)) == data


def _arrays(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return (
            [node] if "dtype" in node and "shape" in node else [a for v in node.values() for a in _arrays(v)]
        )
    if isinstance(node, list):
        return [a for v in node for a in _arrays(v)]
    return []
