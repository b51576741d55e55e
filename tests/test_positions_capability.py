"""``positions: "consecutive"``: an implementation taking a start offset is judged on runs, large ones too."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import golden
from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run

REFERENCE = PosencRefAdapter()


def _from_offset(positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str) -> Any:
    """An offset-only table: rows ``p0 + arange(n)`` from each row's first position (a cache slice)."""
    positions = np.asarray(positions)
    starts = positions[..., :1] if positions.ndim else positions
    run_of = starts + np.arange(positions.shape[-1] if positions.ndim else 1)
    return REFERENCE.rope_cos_sin(
        run_of.reshape(positions.shape),
        inv_freq,
        attention_factor=attention_factor,
        layout=layout,
        dtype=dtype,
    )


def _adapter(positions: Any) -> ModuleAdapter:
    caps = {"positions": positions, "invalid_inputs": False}
    return ModuleAdapter(
        types.SimpleNamespace(rope_cos_sin=_from_offset, CAPABILITIES=caps), name="offset-only"
    )


def _results(positions: Any) -> dict[str, Any]:
    report = run(_adapter(positions), only=["rope_cos_sin"], invariants=False)
    return {r.result_id: r for r in report.results}


def test_an_offset_only_implementation_declared_consecutive_passes_and_is_judged_at_large_offsets() -> None:
    by_id = _results("consecutive")
    assert not [r for r in by_id.values() if r.status == "fail"]
    for case_id in (
        "rope_cos_sin/half/run-2e24-d16[float64]",
        "rope_cos_sin/interleaved/run-2e20-d16[float32]",
        "rope_cos_sin/half/batched-offsets[float64]",  # one run per row, each from its own offset
        "rope_cos_sin/half/large-block-2e24-llama3.1[float32]",
    ):
        assert by_id[case_id].status == "pass", case_id
    skipped = by_id["rope_cos_sin/half/large-positions-d16[float64]"]
    assert skipped.status == "skip"
    assert (
        skipped.detail == "positions: not a run p0, p0 + 1, ... (the adapter declares positions: consecutive)"
    )


def test_the_same_implementation_undeclared_fails_every_case_that_is_not_a_run() -> None:
    by_id = _results("any")
    failed = {r.id for r in by_id.values() if r.status == "fail"}
    doc = next(d for d in golden.load() if d["function"] == "rope_cos_sin")
    not_runs = {
        c["id"]
        for c in doc["cases"]
        if c["result"] == "valid"
        and np.any(np.diff(golden._format.decode(c["inputs"]["positions"]), axis=-1) != 1)
        and c["id"] != "rope_cos_sin/half/proportional-tail"  # rows from 0: only position 0 is cos 1
        and c["id"] != "rope_cos_sin/interleaved/proportional-tail"
    }
    assert not_runs and not_runs <= failed


def test_per_function_positions_apply_only_to_their_function() -> None:
    caps = Capabilities(positions={"rope": "consecutive", "default": "any"})
    assert caps.positions_of("rope") == "consecutive"
    assert caps.positions_of("rope_cos_sin") == "any"
    by_id = _results({"rope_cos_sin": "any"})
    assert by_id["rope_cos_sin/half/large-positions-d16[float64]"].status == "fail"


@pytest.mark.parametrize(
    ("positions", "error", "message"),
    [
        ("contiguous", ValueError, r"^positions must be one of \['any', 'consecutive'\]; got 'contiguous'"),
        ({"rope": "runs"}, ValueError, r"^positions\['rope'\] must be one of"),
        ({"ropes": "consecutive"}, ValueError, "^positions keys must be canonical functions"),
    ],
)
def test_bad_positions_declarations_name_the_field(positions: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Capabilities(positions=positions)


def test_the_large_offset_runs_exist_for_every_offset_taking_function() -> None:
    """The cases an offset-only library is judged on where float32 positions and products lose precision."""
    runs = {c["id"] for d in golden.load() for c in d["cases"] if "ConsecutiveRun" in c["flags"]}
    functions = {case_id.split("/")[0] for case_id in runs}
    assert functions >= {"sinusoidal", "rope_cos_sin", "rope", "rope_heads", "rope_from_base", "alibi_bias"}
    for case_id in runs:
        doc = next(d for d in golden.load() if d["function"] == case_id.split("/")[0])
        case = next(c for c in doc["cases"] if c["id"] == case_id)
        for name, kind in doc["signature"]["kinds"].items():
            if kind == "positions":
                values = golden._format.decode(case["inputs"][name])
                assert np.all(np.diff(values, axis=-1) == 1), case_id
                assert values.max() >= 2**20 + 2, case_id


def test_the_report_header_shows_the_positions_declaration() -> None:
    report = run(_adapter({"rope_cos_sin": "consecutive"}), only=["rope_cos_sin"], invariants=False)
    assert "positions rope_cos_sin=consecutive" in report.format_table().splitlines()[1]
