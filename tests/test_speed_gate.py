"""The speed gate's machinery: interleaved min-of-N timing, the asv ratio tracks, ``asv_ratios.py``.

Timing is checked against a fake clock (each call advances it by a known cost), so the
arithmetic of min-of-N and the alternation are exact and nothing depends on this
machine's speed.  The gate script is checked on synthetic asv results: it reads the
results of the commit asked for (HEAD by default), never the newest file; a row over
its limit fails, a missed target only with ``--targets``; a row that needs an absent
optional library is skipped, a required row without a value fails.  The ratio tracks
are run once at their small size on NumPy (the asv smoke run covers every backend).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import pathlib
import sys

import pytest

from tests.helpers import load_script

ROOT = pathlib.Path(__file__).resolve().parents[1]


gate = load_script("asv_ratios")


@pytest.fixture
def suite(monkeypatch):
    """The asv benchmark package (``asv_benchmarks/benchmarks``), importable as asv imports it."""
    monkeypatch.syspath_prepend(str(ROOT / "asv_benchmarks"))
    for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
        monkeypatch.delitem(sys.modules, name)
    return importlib.import_module("benchmarks")


# --- timing ----------------------------------------------------------------------------------------------


class FakeClock:
    """A clock that only moves when a fake call says how long it took."""

    def __init__(self):
        self.now, self.order = 0.0, []

    def __call__(self):
        return self.now

    def call(self, name, costs):
        costs = iter(costs)

        def run():
            self.order.append(name)
            self.now += next(costs)

        return run


@pytest.fixture
def timing(suite, monkeypatch):
    module = importlib.import_module("benchmarks.timing")
    clock = FakeClock()
    monkeypatch.setitem(module.CLOCKS, "cpu", clock)
    return module, clock


def test_interleaved_min_is_the_fastest_sample_of_each_call(timing):
    module, clock = timing
    # a first call of each (untimed), a second that sets the calls per sample (here 1);
    # costs are binary fractions, so the clock's differences are exact
    work = clock.call("work", [8.0, 1.0, 0.5, 0.25, 0.375])
    base = clock.call("base", [8.0, 1.0, 0.125, 0.25, 0.125])
    best = module.interleaved_min({"work": work, "base": base}, samples=3, min_sample=0.0)
    assert best == {"work": 0.25, "base": 0.125}
    assert clock.order == ["work", "base"] * 3 + ["base", "work", "work", "base"]
    w, b = clock.call("w", [8, 1, 6, 6]), clock.call("b", [8, 1, 2, 3])
    assert module.ratio(w, b, samples=2, min_sample=0) == 3.0


def test_short_calls_are_repeated_within_a_sample(timing):
    module, clock = timing
    assert module.calls_per_sample(0.001, 0.005) == 5
    assert module.calls_per_sample(0.5, 0.005) == 1
    # a slow first call; the second (1 ms) -> 5 calls per sample; one untimed sample of 5;
    # then the samples, whose means are compared
    fast = clock.call("fast", [0.3, 0.001] + [0.0] * 5 + [0.001, 0.002, 0.001, 0.001, 0.001] + [0.002] * 5)
    best = module.interleaved_min({"fast": fast}, samples=2, min_sample=0.005)
    assert best["fast"] == pytest.approx(0.0012)
    assert len(clock.order) == 17


def test_timing_rejects_bad_arguments(timing):
    module, _ = timing
    with pytest.raises(ValueError, match=r"^samples must be a positive integer; got 0"):
        module.interleaved_min({"a": lambda: None}, samples=0)
    with pytest.raises(ValueError, match=r"^clock must be one of \['cpu', 'wall'\]; got 'gpu'"):
        module.interleaved_min({"a": lambda: None}, clock="gpu")


# --- the ratio tracks ------------------------------------------------------------------------------------


def test_ratio_tracks_run_and_return_a_ratio(suite, monkeypatch):
    monkeypatch.setenv("POSENC_REF_BENCH_RATIO_SAMPLES", "1")
    monkeypatch.setenv("POSENC_REF_BENCH_BACKENDS", "numpy")
    ratios = importlib.import_module("benchmarks.bench_ratios")
    small = {
        ratios.ApplyRopeRatio: ("numpy", "1x8x512x64", "interleaved", "half"),
        ratios.RopeCosSinRatio: ("numpy", "4096x64", "float32", "float32"),
        ratios.AlibiRatio: ("numpy", "8x512x512", "causal"),
        ratios.T5BucketRatio: ("numpy", "512x512", False),
        ratios.AlibiRowRatio: ("numpy", "floor"),
    }
    for cls, params in small.items():
        bench = cls()
        bench.setup(*params)
        (track,) = [getattr(bench, n) for n in dir(cls) if n.startswith("track_")]
        value = track(*params)
        bench.teardown(*params)
        assert value > 0 and math.isfinite(value), cls.__name__
        assert cls.unit == "ratio" and cls.rounds == 1


def test_torch_ratio_tracks_run_on_one_thread(suite, monkeypatch):
    torch = pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
    ratios = importlib.import_module("benchmarks.bench_ratios")
    before = torch.get_num_threads()
    bench = ratios.AlibiRowRatio()
    bench.setup("torch", "floor")
    assert torch.get_num_threads() == 1
    bench.teardown("torch", "floor")
    assert torch.get_num_threads() == before


def test_gate_rows_name_real_benchmarks_and_parameters(suite):
    for row in gate.ROWS:
        module_name, class_name, method = row.benchmark.split(".")
        cls = getattr(importlib.import_module(f"benchmarks.{module_name}"), class_name)
        assert hasattr(cls, method), row.label
        params = dict(zip(cls.param_names, cls.params, strict=True)) if hasattr(cls, "param_names") else {}
        assert set(row.params) == set(params), row.label
        for key, value in row.params.items():
            assert value in params[key], (row.label, key)
        assert row.limit >= row.target or math.isinf(row.target), row.label


# --- the gate script -------------------------------------------------------------------------------------

BENCH = "bench_ratios.AlibiRowRatio.track_alibi_row_over_baseline"


def _results(tmp_path, commit, env, value, *, mtime):
    machine = tmp_path / "results" / "vm"
    machine.mkdir(parents=True, exist_ok=True)
    path = machine / f"{commit[:8]}-{env}.json"
    data = {
        "commit_hash": commit,
        "env_name": env,
        "result_columns": ["result", "params"],
        "results": {BENCH: [[value, None, None], [["'torch'"], ["'floor'", "'bloom'", "'mpt'"]]]},
    }
    path.write_text(json.dumps(data))
    os.utime(path, (mtime, mtime))
    (tmp_path / "results" / "benchmarks.json").write_text(
        json.dumps({BENCH: {"param_names": ["backend", "baseline"]}})
    )
    return path


def test_results_are_the_asked_commits_never_the_newest(tmp_path):
    head, other = "a" * 40, "b" * 40
    mine = _results(tmp_path, head, gate.env_name(), 1.0, mtime=1000)
    _results(tmp_path, head, "existing-py_elsewhere", 2.0, mtime=3000)
    _results(tmp_path, other, gate.env_name(), 3.0, mtime=5000)
    assert gate.results_for(head, tmp_path / "results") == mine
    with pytest.raises(FileNotFoundError, match=f"^no asv results for commit {'c' * 8} under"):
        gate.results_for("c" * 40, tmp_path / "results")


def _row(**kw):
    base = {"label": "row", "benchmark": BENCH, "params": {"backend": "torch", "baseline": "floor"}}
    return gate.Row(**{**base, **kw})


@pytest.mark.parametrize(
    ("row", "value", "limits_hold", "targets_met", "cell"),
    [
        (_row(target=2.0, limit=2.0), 1.5, True, True, "| row | 1.50x | <= 2.00x | yes | <= 2.00x | yes |"),
        (_row(target=2.0, limit=4.0), 3.0, True, False, "| row | 3.00x | <= 2.00x | no | <= 4.00x | yes |"),
        (_row(target=2.0, limit=4.0), 4.5, False, False, "| row | 4.50x | <= 2.00x | no | <= 4.00x | NO |"),
        (
            _row(target=2.0, limit=2.0),
            None,
            False,
            False,
            "| row | n/a | <= 2.00x | n/a | <= 2.00x | NO (no value) |",
        ),
        (
            _row(target=2.0, limit=2.0, optional="transformers"),
            None,
            True,
            True,
            "| row | n/a | <= 2.00x | n/a | <= 2.00x | skipped (needs transformers) |",
        ),
        (
            _row(target=math.inf, limit=8.0),
            5.0,
            True,
            True,
            "| row | 5.00x | none filed | yes | <= 8.00x | yes |",
        ),
    ],
)
def test_gate_rows_hold_limits_and_report_targets(
    tmp_path, monkeypatch, row, value, limits_hold, targets_met, cell
):
    path = _results(tmp_path, "a" * 40, gate.env_name(), value, mtime=1000)
    monkeypatch.setattr(gate, "ROWS", [row])
    lines, hold, met = gate.gate(json.loads(path.read_text()), gate.param_names(tmp_path / "results"))
    assert (hold, met) == (limits_hold, targets_met)
    assert lines[2] == cell


def test_exit_status(tmp_path, monkeypatch, capsys):
    path = _results(tmp_path, "a" * 40, gate.env_name(), 3.0, mtime=1000)
    monkeypatch.setattr(gate, "ROWS", [_row(target=2.0, limit=4.0)])
    assert gate.main(["--results", str(path)]) == 0
    assert gate.main(["--results", str(path), "--targets"]) == 1
    monkeypatch.setattr(gate, "ROWS", [_row(target=2.0, limit=2.5)])
    assert gate.main(["--results", str(path)]) == 1
    out = capsys.readouterr().out
    assert "command: python scripts/asv_ratios.py --run" in out
    assert "limits: EXCEEDED; targets: some missed" in out
    monkeypatch.setattr(gate, "RESULTS", tmp_path / "nothing")
    assert gate.main([]) == 2
    assert "no asv results for commit" in capsys.readouterr().err
