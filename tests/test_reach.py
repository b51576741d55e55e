"""Reach: the sweep cases, the per-position sweep data, the context capability and its CLI options."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import pathlib
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import golden
from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.reach import sweep
from posenc_ref_conformance.runner import run

PLAIN = pathlib.Path(__file__).parent / "adapters" / "plain_product.py"
SWEEP = sorted({0, 1, *(2**k + d for k in range(1, 25) for d in (-1, 0, 1))})
SWEEP_F64 = [2**k + d for k in range(25, 41) for d in (-1, 0, 1)]
TOL32 = {"atol": 2e-6, "rtol": 0.0, "maxUlp": 4}


def _table(positions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(expected float64 cos table [P, 4], its positions broadcast to that shape)."""
    at = np.broadcast_to(np.asarray(positions, dtype=np.int64)[:, None], (len(positions), 4))
    return np.cos(at * np.array([1.0, 0.5, 0.25, 0.125])), at


def _plain() -> ModuleAdapter:
    spec = importlib.util.spec_from_file_location("plain_product_for_reach", PLAIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ModuleAdapter(module, "plain_product")


def _sweeps(adapter: Any, function: str) -> dict[str, Any]:
    """result id -> result of the function's reach-sweep cases, run in this process."""
    report = run(adapter, only=[function], invariants=False)
    return {r.result_id: r for r in report.results if "Reach" in r.flags}


class TestSweep:
    def test_a_planted_error_moves_the_first_miss_exactly_there(self) -> None:
        positions = [0, 1, 2, 3, 7, 8, 9]
        expected, at = _table(positions)
        actual = expected.astype(np.float32)
        for planted in (2, 8):
            bad = actual.copy()
            bad[positions.index(planted), 2] += np.float32(1e-3)
            data = sweep([expected], [bad], [at], tolerance=TOL32, dtype="float32")
            assert data["positions"] == positions
            misses = [p for p, ok in zip(data["positions"], data["withinExact"], strict=True) if not ok]
            assert misses == [planted]
            assert data["errors"][positions.index(planted)] == pytest.approx(1e-3, rel=1e-3)
            assert max(e for p, e in zip(positions, data["errors"], strict=True) if p != planted) < 1e-7

    def test_positions_are_unique_ascending_over_every_output_and_plain_python(self) -> None:
        positions = [9, 0, 3, 3]  # unsorted, repeated rows
        expected, at = _table(positions)
        sin = np.sin(at * 0.5)
        actual_sin = sin + np.where(at == 9, 1e-3, 0.0)  # the error lives in the second output only
        data = sweep([expected, sin], [expected, actual_sin], [at, at], tolerance=TOL32, dtype="float64")
        assert data == {
            "positions": [0, 3, 9],
            "errors": [0.0, 0.0, pytest.approx(1e-3)],
            "withinExact": [True, True, False],
        }
        assert json.loads(json.dumps(data))["positions"] == [0, 3, 9]
        assert all(type(v) is float for v in data["errors"]) and all(
            type(v) is bool for v in data["withinExact"]
        )

    def test_the_ulp_allowance_counts_as_within(self) -> None:
        expected, at = _table([5, 6])
        four_ulp = expected.astype(np.float32)
        for _ in range(4):
            four_ulp = np.nextafter(four_ulp, np.float32(2.0))
        strict = {"atol": 0.0, "rtol": 0.0, "maxUlp": 4}
        assert (
            sweep([expected], [four_ulp], [at], tolerance=strict, dtype="float32")["withinExact"]
            == [True] * 2
        )
        five_ulp = np.nextafter(four_ulp, np.float32(2.0))
        assert (
            sweep([expected], [five_ulp], [at], tolerance=strict, dtype="float32")["withinExact"]
            == [False] * 2
        )

    def test_mismatched_inputs_raise(self) -> None:
        expected, at = _table([1, 2])
        with pytest.raises(ValueError, match=r"^expected, actual and positions must"):
            sweep([expected], [expected, expected], [at], tolerance=TOL32, dtype="float64")
        with pytest.raises(ValueError, match=r"^actual and positions must have the expected shape"):
            sweep([expected], [expected[:1]], [at], tolerance=TOL32, dtype="float64")


class TestSweepCases:
    def test_every_reach_case_sweeps_the_documented_positions(self) -> None:
        found = {}
        for doc in golden.load():
            for case in doc["cases"]:
                if "Reach" in case["flags"]:
                    found[case["id"]] = case
                    assert "phase" in case and "LargePosition" in case["flags"]
        assert set(found) == {
            f"{f}/{name}"
            for f in ("rope_cos_sin/half", "sinusoidal/vaswani")
            for name in ("reach-sweep", "reach-sweep-f64")
        }
        for case_id, case in found.items():
            values = case["inputs"]["positions"]["values"]
            if case_id.endswith("-f64"):
                assert values == SWEEP_F64 and case["dtypes"] == ["float64"]
            else:
                assert values == SWEEP and "dtypes" not in case and max(values) < 2**31


class TestThroughTheRunner:
    def test_posenc_ref_is_within_exact_at_every_swept_position(self) -> None:
        results = _sweeps(PosencRefAdapter(), "rope_cos_sin")
        f32 = results["rope_cos_sin/half/reach-sweep[float32]"]
        f64 = results["rope_cos_sin/half/reach-sweep[float64]"]
        f64_far = results["rope_cos_sin/half/reach-sweep-f64[float64]"]
        for result in (f32, f64, f64_far):
            assert result.status == "pass" and all(result.sweep["withinExact"])
        assert (
            f32.sweep["positions"] == SWEEP and f32.sweep["positions"][-1] == 2**24 + 1
        )  # reach >= 2**24 + 1
        assert f64_far.sweep["positions"] == SWEEP_F64 and f64_far.sweep["positions"][-1] == 2**40 + 1
        skipped = results["rope_cos_sin/half/reach-sweep-f64[float32]"]
        assert skipped.status == "skip" and skipped.sweep is None and "float64 only" in skipped.detail

    def test_a_float32_product_drifts_with_position(self) -> None:
        results = _sweeps(_plain(), "rope_cos_sin")
        f32 = results["rope_cos_sin/half/reach-sweep[float32]"]
        assert f32.status == "pass"  # the product class judges it; the sweep shows how far it drifts
        data = dict(
            zip(
                f32.sweep["positions"],
                zip(f32.sweep["errors"], f32.sweep["withinExact"], strict=True),
                strict=True,
            )
        )
        first_miss = next(p for p in f32.sweep["positions"] if not data[p][1])
        assert 16 <= first_miss <= 2**8
        assert not any(ok for p, (_, ok) in data.items() if p >= 2**10)
        assert data[2**10 + 1][0] < data[2**16 + 1][0] < data[2**24 + 1][0]
        assert data[2**24 + 1][0] > 0.5  # cos is off by most of its range at 2**24 + 1
        f64_far = results["rope_cos_sin/half/reach-sweep-f64[float64]"]
        odd = [
            ok
            for p, ok in zip(f64_far.sweep["positions"], f64_far.sweep["withinExact"], strict=True)
            if p % 2
        ]
        assert odd and not any(odd) and f64_far.sweep["errors"][-1] > 1e-6  # float64 drifts too, far slower

    def test_other_cases_carry_no_sweep(self) -> None:
        report = run(PosencRefAdapter(), only=["rope_cos_sin"], invariants=False)
        assert all(r.sweep is None for r in report.results if "Reach" not in r.flags)


class TestContext:
    @pytest.mark.parametrize(
        ("value", "error"),
        [(0, ValueError), (-4, ValueError), ("x", TypeError), (True, TypeError), (2.0, TypeError)],
    )
    def test_bad_context_is_rejected(self, value: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match=r"^context must be a positive integer"):
            Capabilities(context=value)

    def test_context_is_declared_and_overridden(self) -> None:
        assert Capabilities().context is None
        assert Capabilities.from_any({"context": 131072}).context == 131072

        adapter = PosencRefAdapter()
        adapter.capabilities = dataclasses.replace(adapter.capabilities, context=4096)
        declared = run(adapter, only=["t5_bucket"], invariants=False)
        assert declared.context == 4096 and declared.reach_atol == 1e-3
        given = run(adapter, only=["t5_bucket"], invariants=False, context=131072, reach_atol=1e-4)
        assert given.context == 131072 and given.reach_atol == 1e-4

    @pytest.mark.parametrize(
        ("kwargs", "error"),
        [
            ({"context": 0}, ValueError),
            ({"reach_atol": 0.0}, ValueError),
            ({"reach_atol": "1e-3"}, TypeError),
        ],
    )
    def test_run_rejects_bad_values(self, kwargs: dict[str, Any], error: type[Exception]) -> None:
        with pytest.raises(error, match=r"^(context|reach_atol) must be"):
            run(PosencRefAdapter(), only=["t5_bucket"], invariants=False, **kwargs)

    @pytest.mark.parametrize(
        ("option", "value"),
        [
            ("--context", "0"),
            ("--context", "-1"),
            ("--context", "1.5"),
            ("--context", "x"),
            ("--reach-atol", "0"),
            ("--reach-atol", "-1e-3"),
            ("--reach-atol", "nan"),
            ("--reach-atol", "abc"),
        ],
    )
    def test_cli_rejects_bad_values_in_one_line(
        self, option: str, value: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert main(["check", "posenc_ref", f"{option}={value}", "--only", "t5"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"posenc-ref: error: {option} must be a positive")
