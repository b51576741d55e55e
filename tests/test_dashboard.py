"""The asv dashboard's publishing and the regression trial, on inputs whose answer is known.

- ``scripts/asv_dashboard_check.py`` publishes only benchmarks with results and leaves
  asv's own benchmark list as it was; it labels commits as asv draws tags; it adds the
  grid's values once;
- ``scripts/asv_dashboard_trial.py`` names benchmark entries as asv does, applies asv's
  threshold rule, plants a slowdown that does the work twice on every backend, and
  judges a trial's regressions (the planted function, all of it, at the planted commit,
  nothing else);
- ``asv_benchmarks/asv.conf.json``'s thresholds are derived from the noise recorded in
  ``asv_benchmarks/noise.json`` by the rule written there, and each lets a 2x slowdown
  through.

The trial itself (asv, Chromium) runs in CI: ``scripts/asv_dashboard_ci.sh``.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import math
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load_script("asv_dashboard_check")
trial = _load_script("asv_dashboard_trial")

COLUMNS = ["result", "params", "version", "started_at", "duration"]


def _results(machine: pathlib.Path, commit: str, results: dict) -> None:
    machine.mkdir(parents=True, exist_ok=True)
    doc = {"commit_hash": commit, "result_columns": COLUMNS, "results": results}
    (machine / f"{commit[:8]}-existing-py.json").write_text(json.dumps(doc))


def _row(values, params):
    return [values, params, "v", None, None]


# --- publishing -----------------------------------------------------------------------------------


def test_measured_benchmarks_are_those_with_a_finite_value(tmp_path):
    machine = tmp_path / "results" / "vm"
    params = [["'numpy'", "'torch'"]]
    _results(
        machine,
        "a" * 40,
        {
            "b.T.track_x": _row([1.5, None], params),
            "b.T.track_nan": _row([math.nan, None], params),
            "b.T.time_scalar": _row(0.25, []),
        },
    )
    (machine / "machine.json").write_text(json.dumps({"machine": "vm"}))
    assert check.measured_benchmarks(tmp_path / "results") == {"b.T.track_x", "b.T.time_scalar"}


def test_publish_narrows_asvs_list_for_the_publish_only(tmp_path, monkeypatch):
    results = tmp_path / "results"
    _results(results / "vm", "a" * 40, {"b.T.track_x": _row([1.0], [["'numpy'"]])})
    listing = {"version": 2, "b.T.track_x": {"name": "b.T.track_x"}, "b.T.track_never": {"name": "n"}}
    (results / "benchmarks.json").write_text(json.dumps(listing))
    seen = {}

    def fake_run(cmd, cwd, **kwargs):
        seen["cmd"], seen["listing"] = cmd, json.loads((results / "benchmarks.json").read_text())
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(check.subprocess, "run", fake_run)
    left_out = check.publish(tmp_path, results)
    assert seen["cmd"][-2:] == ["asv", "publish"]
    assert set(seen["listing"]) == {"version", "b.T.track_x"}
    assert left_out == ["b.T.track_never"]
    assert json.loads((results / "benchmarks.json").read_text()) == listing  # restored

    monkeypatch.setattr(
        check.subprocess, "run", lambda cmd, **k: subprocess.CompletedProcess(cmd, 1, "", "boom")
    )
    with pytest.raises(check.UsageError, match=r"asv publish failed .*boom"):
        check.publish(tmp_path, results)
    assert json.loads((results / "benchmarks.json").read_text()) == listing


def test_commits_are_labelled_as_tags_evenly_and_the_newest_always(tmp_path):
    revisions = {str(r): f"{r:040x}" for r in range(100, 140)}
    index = {"revision_to_hash": revisions, "hash_length": 8, "tags": {"v1.0": 101}}
    (tmp_path / "index.json").write_text(json.dumps(index))
    labels = check.label_commits(tmp_path)
    tags = json.loads((tmp_path / "index.json").read_text())["tags"]
    assert len(labels) <= check.MAX_LABELS and labels[-1] == revisions["139"][:8]
    revs = sorted(tags[label] for label in labels)
    assert len({b - a for a, b in itertools.pairwise(revs)}) == 1  # evenly spaced
    assert tags["v1.0"] == 101  # the repository's own tags stay
    assert check.label_commits(tmp_path) == labels  # idempotent
    assert json.loads((tmp_path / "index.json").read_text())["tags"] == tags


def test_few_commits_are_all_labelled(tmp_path):
    revisions = {"7": "a" * 40, "9": "b" * 40}
    (tmp_path / "index.json").write_text(json.dumps({"revision_to_hash": revisions, "hash_length": 8}))
    assert check.label_commits(tmp_path) == ["aaaaaaaa", "bbbbbbbb"]
    assert json.loads((tmp_path / "index.json").read_text())["tags"] == {"aaaaaaaa": 7, "bbbbbbbb": 9}


def test_the_grid_values_script_is_loaded_once(tmp_path):
    (tmp_path / "index.html").write_text("<html><head><title>x</title></head><body></body></html>")
    assert check.add_summary_values(tmp_path) is True
    assert check.add_summary_values(tmp_path) is False
    page = (tmp_path / "index.html").read_text()
    assert page.count(check.SUMMARY_VALUES_FILE) == 1 and page.index(check.SUMMARY_VALUES_FILE) < page.index(
        "</head>"
    )
    assert "graphs/summary/" in (tmp_path / check.SUMMARY_VALUES_FILE).read_text()


# --- the trial ------------------------------------------------------------------------------------


def test_entries_are_named_as_asv_names_them(tmp_path):
    params = [["'numpy'", "'mlx'"], ["'512x512'"], ["True", "False"]]
    values = [1.0, 2.0, None, 4.0]
    _results(tmp_path / "vm", "c" * 40, {"b.T5.track_t": _row(values, params), "b.S.time_s": _row(0.5, [])})
    _results(tmp_path / "vm", "d" * 40, {"b.S.time_s": _row(0.7, [])})
    series = trial.entries(tmp_path, ["c" * 40, "d" * 40])
    assert series == {
        "b.T5.track_t('numpy', '512x512', True)": [1.0],
        "b.T5.track_t('numpy', '512x512', False)": [2.0],
        "b.T5.track_t('mlx', '512x512', False)": [4.0],
        "b.S.time_s": [0.5, 0.7],
    }
    assert trial.entries(tmp_path, ["d" * 40]) == {"b.S.time_s": [0.7]}


def test_threshold_rule_is_asvs():
    thresholds = {r"^b\.T5\.": 0.3, r"^b\.T5\.track_t\('torch'": 0.5, "nomatch": 0.9}
    assert trial.threshold_of("b.T5.track_t('numpy', True)", thresholds) == 0.3
    assert trial.threshold_of("b.T5.track_t('torch', True)", thresholds) == 0.5  # the largest match
    assert trial.threshold_of("b.Other.track", thresholds) == 0.05  # asv's default
    assert trial.threshold_of("x.b.T5.", {r"b\.T5\.": 0.3}) == 0.05  # re.match: from the start


def test_one_outlier_is_left_out_of_the_robust_spread():
    values = [2.0, 2.2, 2.1, 42.0, 2.05, 1.95]
    assert trial.spread(values) == pytest.approx(42.0 / 1.95 - 1)
    assert trial.robust_spread(values) == pytest.approx(2.2 / 1.95 - 1)
    assert trial.robust_spread([2.0, 2.2, 0.1, 2.1]) == pytest.approx(0.1)  # a low outlier too
    assert trial.robust_spread([1.0, 2.0, 3.0]) == trial.spread([1.0, 2.0, 3.0])  # too few to tell


def test_spread_and_the_noise_table_stay_aligned():
    assert trial.spread([2.0, 3.0, 2.5]) == pytest.approx(0.5)
    assert trial.spread([1.0]) == 0.0
    lines = trial.noise_table({"a.b('x')": [1.0, 1.1], "a.long_name('y', 'z')": [1e-7, 3e5]}, {"a": 0.3})
    assert len({len(line.rstrip().rsplit("  ", 1)[0]) for line in lines[2:]}) == 1
    assert lines[2].endswith("ok") and lines[3].endswith("NOISY")


def test_the_planted_slowdown_does_the_work_twice_and_returns_the_same(tmp_path):
    module = tmp_path / "planted_mod.py"
    module.write_text(
        'CALLS = []\n\n\ndef t5_bucket(x):\n    """Doc."""\n    CALLS.append(1)\n    return x * 2\n'
        + trial.PLANT.format(name="t5_bucket")
    )
    sys.path.insert(0, str(tmp_path))
    try:
        planted = importlib.import_module("planted_mod")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("planted_mod", None)
    x = np.arange(5)
    assert np.array_equal(planted.t5_bucket(x), x * 2)
    assert len(planted.CALLS) == 2 and planted.t5_bucket.__doc__ == "Doc."


def test_every_plant_names_a_function_and_its_dashboard_benchmark():
    benchmarks = json.loads(json.dumps(_dashboard_benchmarks()))
    for name, (module, pattern) in trial.PLANTS.items():
        assert re.search(rf"^def {name}\(", (ROOT / module).read_text(encoding="utf-8"), re.M), name
        assert any(re.search(pattern, b) for b in benchmarks), (name, pattern)


def _regression(entry: str, before: int | None, after: int) -> list:
    return [entry, "graphs/x.json", {}, 0, 2.0, 1.0, [[before, after, 1.0, 2.0]]]


def test_planted_trial_judgement():
    pattern, planted, revs = r"^b\.T5\.", "p" * 40, {"p" * 40: 7}
    measured = ["b.T5.t('numpy', True)", "b.T5.t('numpy', False)", "b.T5.t('torch', True)"]
    good = [_regression("b.T5.t('numpy', True)", 6, 7), _regression("b.T5.t('torch', True)", None, 7)]
    assert trial.planted_problems(good, measured, pattern, planted, revs) == (
        [],
        ["not flagged: b.T5.t('numpy', False)"],
    )
    problems, _ = trial.planted_problems(good[:1], measured, pattern, planted, revs)
    assert problems == ["the planted slowdown is not flagged on torch"]
    other = [*good, _regression("b.Alibi.t('numpy')", 2, 3)]
    assert trial.planted_problems(other, measured, pattern, planted, revs)[0] == [
        "flagged, but not the planted function: b.Alibi.t('numpy')"
    ]
    late = [good[0], _regression("b.T5.t('torch', True)", 7, 8)]
    assert trial.planted_problems(late, measured, pattern, planted, revs)[0] == [
        "b.T5.t('torch', True): jumps at revisions [8], not at the planted 7 alone"
    ]
    twice = [good[0], [*good[1][:6], [[2, 3, 1.0, 1.2], [None, 7, 1.2, 2.4]]]]
    assert trial.planted_problems(twice, measured, pattern, planted, revs)[0] == [
        "b.T5.t('torch', True): jumps at revisions [3, 7], not at the planted 7 alone"
    ]


def test_threshold_patterns_are_per_benchmark_and_backend(tmp_path):
    entry = "bench_ratios.T5BucketRatio.track_t5_bucket_over_log('torch', '512x512', True)"
    pattern = trial.pattern_of(entry)
    assert re.match(pattern, entry) and not re.match(pattern, entry.replace("'torch'", "'numpy'"))
    assert trial.backend_of(entry) == "torch"
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({entry: [2.0, 2.2], entry.replace("True", "False"): [3.0, 3.3]}))
    second.write_text(json.dumps({entry: [2.5]}))
    assert trial.derive([first, second]) == {pattern: pytest.approx(0.1)}  # per trial: 2.2 / 2.0
    assert trial.threshold_from(0.25) == 0.38
    assert trial.threshold_from(0.01) == trial.RULE["floor"]
    assert trial.threshold_from(0.9) == 1.35  # no ceiling: a noisy benchmark flags only larger steps


def test_the_trial_asks_for_five_quiet_commits_at_least(capsys):
    with pytest.raises(SystemExit) as exc:
        trial.main(["--quiet", "4"])
    assert exc.value.code == 2 and "--quiet must be at least 5" in capsys.readouterr().err


# --- the thresholds -------------------------------------------------------------------------------


def _dashboard_benchmarks() -> list[str]:
    """``module.Class.method`` of every dashboard benchmark (the ratio tracks)."""
    sys.path.insert(0, str(ROOT / "asv_benchmarks"))
    try:
        ratios = importlib.import_module("benchmarks.bench_ratios")
    finally:
        sys.path.remove(str(ROOT / "asv_benchmarks"))
    names = []
    for cls_name in dir(ratios):
        cls = getattr(ratios, cls_name)
        if isinstance(cls, type) and cls_name.endswith("Ratio") and not cls_name.startswith("_"):
            names += [f"bench_ratios.{cls_name}.{m}" for m in dir(cls) if m.startswith("track_")]
    return names


def test_one_name_per_dashboard_benchmark():
    methods = [name.rsplit(".", 1)[1] for name in _dashboard_benchmarks()]
    assert len(methods) == len(set(methods)), methods


def test_thresholds_follow_from_the_recorded_noise():
    conf = trial.load_conf(ROOT / "asv_benchmarks" / "asv.conf.json")
    thresholds = conf["regressions_thresholds"]
    noise = json.loads((ROOT / "asv_benchmarks" / "noise.json").read_text(encoding="utf-8"))
    assert noise["rule"] == trial.RULE and noise["measured"]
    assert thresholds == {p: trial.threshold_from(v) for p, v in noise["spread"].items()}
    assert conf["regressions_first_commits"] == dict.fromkeys(trial.NOT_DETECTED)
    assert noise["not_detected"] == trial.NOT_DETECTED
    benchmarks = _dashboard_benchmarks()
    for pattern in thresholds:  # no pattern outlives its benchmark
        assert any(
            re.match(pattern, f"{b}('{backend}'") for b in benchmarks for backend in ("numpy", "torch", "mlx")
        )
    for benchmark in benchmarks:  # every dashboard benchmark judged on numpy and torch has a threshold
        for backend in ("numpy", "torch", "mlx"):
            entry = f"{benchmark}('{backend}', 'x')"
            assert any(re.match(p, entry) for p in thresholds) == trial.detected(entry), entry
            assert trial.detected(entry) == (backend != "mlx"), entry
    assert not trial.detected("bench_rope.ApplyRope.time_apply_rope('numpy', '1x8x512x64')")
    assert not trial.detected("bench_relative.T5Bucket.peakmem_t5_bucket('numpy')")
    assert trial.detected("bench_accuracy.RopeCosSinAccuracy.track_rope_cos_sin_error('numpy')")


def test_the_dashboard_run_samples_as_the_docs_say():
    history = (ROOT / "scripts" / "asv_history.sh").read_text(encoding="utf-8")
    assert 'POSENC_REF_BENCH_RATIO_SAMPLES="${POSENC_REF_BENCH_RATIO_SAMPLES:-31}"' in history
    assert 'POSENC_REF_BENCH_RATIO_MIN_SAMPLE="${POSENC_REF_BENCH_RATIO_MIN_SAMPLE:-0.002}"' in history
    assert "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1" in history
    assert "export POSENC_REF_BENCH_ALLOCATOR=steady" in history
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "fastest of 31\nsamples of at least 2 ms" in page, "docs/benchmarks.md states the sampling"


# --- the benchmarks page's generated tables -------------------------------------------------------


def _bench_md():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        return importlib.import_module("bench_md")
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))


def test_the_benchmarks_page_lists_every_dashboard_benchmark_and_threshold():
    page = _bench_md()
    listing = page.benchmark_list(ROOT)
    for name in _dashboard_benchmarks():
        _, cls, method = name.split(".")
        assert f"| `bench_ratios` | `{cls}` | `{method}` |" in listing, name
    assert "`posenc-ref check posenc_ref:<backend>` (golden" in listing  # code spans stay code
    table = page.threshold_table(ROOT)
    conf = trial.load_conf(ROOT / "asv_benchmarks" / "asv.conf.json")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(conf["regressions_thresholds"])
    assert "| `T5BucketRatio.track_t5_bucket_over_log` | numpy |" in table
    for pattern in trial.NOT_DETECTED:
        assert pattern in table


def test_each_benchmark_is_collected_once():
    """asv collects every benchmark class in a module's namespace: none may be imported from another."""
    sys.path.insert(0, str(ROOT / "asv_benchmarks"))
    try:
        for path in sorted((ROOT / "asv_benchmarks" / "benchmarks").glob("bench_*.py")):
            module = importlib.import_module(f"benchmarks.{path.stem}")
            for name in dir(module):
                obj = getattr(module, name)
                kinds = ("time_", "track_", "peakmem_")
                if isinstance(obj, type) and any(m.startswith(kinds) for m in dir(obj)):
                    assert obj.__module__ == module.__name__, f"{path.stem}.{name} is {obj.__module__}'s"
    finally:
        sys.path.remove(str(ROOT / "asv_benchmarks"))
