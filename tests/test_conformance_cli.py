"""The conformance command line, runner behaviour, pytest plugin and a wheel install.

``posenc-ref check ADAPTER`` (or ``POSENC_REF_ADAPTER``): summary table on
stdout, JSON report, exit 0 / 1 / 2, adopter xfail files with stale-entry
warnings, and a failing adapter function recorded as that case's failure while
the run goes on.  ``posenc-ref golden generate --check`` and ``golden lint``.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import types

import pytest

from posenc_ref_conformance.adapters import AdapterError, load_adapter
from posenc_ref_conformance.adapters.base import ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.runner import load_xfails, run

ROOT = pathlib.Path(__file__).resolve().parents[1]

BROKEN_ADAPTER = textwrap.dedent('''
    """A third-party adapter with three broken functions and two good ones."""
    import numpy as np

    CAPABILITIES = {"dtypes": ["float64"]}

    def t5_bucket(relative, *, bidirectional, num_buckets, max_distance):
        raise RuntimeError("kernel crashed")

    def alibi_slopes(num_heads, *, max_bias, dtype):
        return np.full(num_heads + 1, 0.5)          # wrong shape

    def llama4_attn_scale(positions, *, floor_scale, attn_scale, convention, dtype):
        return np.full(np.shape(positions), np.nan)  # NaN

    def relative_positions(q_positions, k_positions):
        return np.asarray(k_positions)[..., None, :] - np.asarray(q_positions)[..., :, None]

    def causal_mask(q_positions, k_positions, *, sliding_window, chunk_size):
        if sliding_window is not None or chunk_size is not None:
            raise NotImplementedError
        return np.asarray(k_positions)[None, :] <= np.asarray(q_positions)[:, None]
''')


@pytest.fixture
def broken_adapter(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "broken_adapter.py"
    path.write_text(BROKEN_ADAPTER)
    return path


class TestCheck:
    def test_builtin_adapter_passes(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        report_path = tmp_path / "reports" / "report.json"  # a folder that does not exist yet
        assert main(["check", "posenc_ref", "--json", str(report_path)]) == 0
        out = capsys.readouterr().out
        assert "RESULT: PASS" in out
        for scheme in (
            "sinusoidal",
            "learned",
            "rope",
            "t5",
            "alibi",
            "kernel_bias",
            "shaw",
            "nope",
            "attention",
        ):
            assert f"\n{scheme} " in out
        report = json.loads(report_path.read_text())
        assert report["passed"] and report["counts"].get("fail", 0) == 0
        assert report["adapter"]["name"] == "posenc_ref"
        assert {r["status"] for r in report["results"]} <= {"pass", "skip"}
        assert any(r["id"].startswith("invariant/") for r in report["results"])

    def test_only_selects_the_kernel_bias_scheme(self) -> None:
        report = run(PosencRefAdapter(), only=["kernel_bias"])
        golden = [r for r in report.results if not r.id.startswith("invariant/")]
        assert {r.function for r in golden} == {"sandwich_bias", "kerple_bias"}
        assert {r.scheme for r in report.results} == {"kernel_bias"}
        assert any(r.id.startswith("invariant/kernel_bias/") for r in report.results)
        assert report.verdict == "PASS"

    def test_adapter_from_environment(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.setenv("POSENC_REF_ADAPTER", "posenc_ref")
        assert main(["check", "--only", "t5", "--no-invariants"]) == 0
        assert "t5 " in capsys.readouterr().out

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["check"], "needs an ADAPTER"),
            (["check", "no_such_module_for_posenc"], "cannot be imported"),
            (["check", "posenc_ref:no_backend"], "backend must be one of"),
            (["check", "posenc_ref", "--only", "nonsense"], "only must name"),
            (["check", "posenc_ref", "--xfails", "/nonexistent/xfails.txt"], "--xfails file"),
            (["golden"], "golden needs an action"),
        ],
    )
    def test_usage_errors_exit_2(
        self,
        argv: list[str],
        message: str,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.delenv("POSENC_REF_ADAPTER", raising=False)
        assert main(argv) == 2
        assert message in capsys.readouterr().err

    def test_failing_adapter_exits_1_and_the_run_goes_on(
        self, broken_adapter: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        report_path = tmp_path / "r.json"
        assert main(["check", str(broken_adapter), "--json", str(report_path)]) == 1
        assert "RESULT: FAIL" in capsys.readouterr().out
        results = {r["resultId"]: r for r in json.loads(report_path.read_text())["results"]}
        crash = results["t5_bucket/bidirectional/32-128-range[int]"]
        assert crash["status"] == "fail" and "RuntimeError: kernel crashed" in crash["detail"]
        shape = results["alibi_slopes/max-bias-8/heads-4[float64]"]
        assert shape["status"] == "fail" and "shape (5,), expected (4,)" in shape["detail"]
        nan = results["llama4_attn_scale/defaults/boundaries[float64]"]
        assert nan["status"] == "fail" and "non-finite" in nan["detail"]
        assert results["relative_positions/square/basic[int]"]["status"] == "pass"  # the run went on
        assert results["causal_mask/window/3[bool]"]["status"] == "skip"  # NotImplementedError = unsupported
        assert results["sinusoidal/vaswani/basic-d8[float64]"]["status"] == "skip"  # not implemented
        assert results["sinusoidal/vaswani/basic-d8[float32]"]["detail"] == "function not implemented"

    def test_xfail_file(
        self, broken_adapter: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        xfails = tmp_path / "xfails.txt"
        xfails.write_text(
            "# known failures of the broken adapter\n"
            "t5_bucket/            # the whole function, by prefix\n"
            "alibi_slopes          # a function name\n"
            "llama4_attn_scale/defaults/boundaries[float64]\n"
            "llama4_attn_scale/custom/small-floor\n"
            "llama4_attn_scale/invalid/negative\n"
            "llama4_attn_scale/invalid/convention\n"
            "llama4_attn_scale/mistral/   # the conventions, by prefix\n"
            "llama4_attn_scale/beam/\n"
            "rope/half/no-such-case   # stale\n"
            "\n"
        )
        assert load_xfails(xfails)[0] == "t5_bucket/"
        code = main(["check", str(broken_adapter), "--xfails", str(xfails), "--no-invariants"])
        captured = capsys.readouterr()
        assert code == 0, captured.out
        assert "stale xfail entries" in captured.err and "rope/half/no-such-case" in captured.err

    def test_xpass_is_reported(self, tmp_path: pathlib.Path) -> None:
        report = run(
            PosencRefAdapter("numpy"),
            only=["t5"],
            invariants=False,
            xfails=["t5_bucket/bidirectional/32-128-range"],
        )
        assert not report.failed
        assert [r.status for r in report.results if r.id == "t5_bucket/bidirectional/32-128-range"] == [
            "xpass"
        ]


def test_hf_style_example_adapter_matches_t5_including_float_boundaries() -> None:
    """HF's float32 T5 expression (run by PyTorch) passes every T5 case: the 'acceptable' values at work."""
    pytest.importorskip(
        "torch",
        reason="torch is not installed (the example adapter runs HF's expression in it)",
        exc_type=ImportError,
    )
    report = run(
        load_adapter("posenc_ref_conformance.adapters.examples.hf_style_torch"),
        only=["t5_bucket"],
        invariants=False,
    )
    valid = [r for r in report.results if "InvalidInput" not in r.flags]
    assert valid and all(r.status == "pass" for r in valid), [r.detail for r in valid if r.status != "pass"]
    assert any("T5FloatBoundary" in r.flags for r in valid)


class TestAdapterLoading:
    def test_specs(self, broken_adapter: pathlib.Path) -> None:
        assert load_adapter("posenc_ref").name == "posenc_ref"
        assert load_adapter("posenc_ref:array_api_strict").name == "posenc_ref:array_api_strict"
        module_adapter = load_adapter(str(broken_adapter))
        assert module_adapter.supports("t5_bucket") and not module_adapter.supports("sinusoidal")
        assert module_adapter.capabilities.dtypes == ("float64",)
        assert (
            load_adapter("posenc_ref_conformance.adapters.posenc_ref:PosencRefAdapter").name == "posenc_ref"
        )

    def test_bad_specs(self, tmp_path: pathlib.Path) -> None:
        with pytest.raises(AdapterError, match="does not exist"):
            load_adapter(str(tmp_path / "missing.py"))
        with pytest.raises(AdapterError, match="has no attribute"):
            load_adapter("posenc_ref_conformance.adapters.posenc_ref:Nothing")
        with pytest.raises(AdapterError, match="must be named"):
            load_adapter("  ")


class TestGoldenCommands:
    def test_generate_check_is_clean(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["golden", "generate", "--check"]) == 0
        assert "up to date" in capsys.readouterr().out

    def test_lint_full(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Schema, ids, counts, checksums, byte-for-byte regeneration and the 120-digit rounding proof."""
        assert main(["golden", "lint"]) == 0
        assert "golden lint: OK" in capsys.readouterr().out

    def test_generate_writes_byte_identical_files(self, tmp_path: pathlib.Path) -> None:
        from posenc_ref_conformance.golden import VECTORS_DIR, generate

        written = set(generate.write(tmp_path)) - {"golden_schema_v1.json"}
        assert written == {p.name for p in VECTORS_DIR.glob("*.json")}
        for name in written:
            assert (tmp_path / name).read_bytes() == (VECTORS_DIR / name).read_bytes(), name

    def test_lint_reports_a_tampered_file(self, tmp_path: pathlib.Path) -> None:
        from posenc_ref_conformance.golden import VECTORS_DIR
        from posenc_ref_conformance.golden.lint import lint

        for path in VECTORS_DIR.glob("*.json"):
            shutil.copy(path, tmp_path / path.name)
        target = tmp_path / "alibi_slopes.json"
        target.write_bytes(target.read_bytes().replace(b'"numberOfCases": 19', b'"numberOfCases": 18'))
        problems = lint(tmp_path, reproduce=False, precision=False)
        assert any("numberOfCases" in p for p in problems)
        assert any("checksum" in p or "canonical" in p for p in problems)


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, **kwargs)


def _plugin_option() -> list[str]:
    """``-p posenc_ref_conformance.pytest_plugin`` unless the installed entry point already loads it."""
    from importlib.metadata import entry_points

    installed = any(
        ep.value == "posenc_ref_conformance.pytest_plugin" for ep in entry_points(group="pytest11")
    )
    return [] if installed else ["-p", "posenc_ref_conformance.pytest_plugin"]


def test_pytest_plugin(tmp_path: pathlib.Path) -> None:
    """An adopter's CI: ``pytest --pyargs posenc_ref_conformance.pytest_suite --posenc-adapter ...``."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    xfails = tmp_path / "xfails.txt"
    xfails.write_text(
        "rope/half/large-positions\nrope/interleaved/large-positions\nrope_cos_sin/\ninvariant/rope/\n"
        "rope/half/large-block-2e24-llama3.1\nrope/interleaved/large-block-2e24-llama3.1\nrope/half/reach-sweep\n"
        "rope_from_base/half/large-block-2e20-llama2-d128\nrope_from_base/interleaved/large-block-2e20-llama2-d128\n"
        "rope/half/run-2e24-d16\nrope/interleaved/run-2e24-d16\nrope_heads/half/bhsd-runs-2e20-2e24\n"
        "rope_heads/half/bshd-runs-2e20-2e24\nrope_heads/interleaved/bhsd-runs-2e20-2e24\n"
        "rope_heads/interleaved/bshd-runs-2e20-2e24\n"
        + "".join(
            f"rope_from_base/{layout}/{name}\n"
            for layout in ("half", "interleaved")
            for name in ("run-2e24-llama2-d128", "run-2e20-llama3.1", "run-2e24-gpt-oss-yarn")
        )
    )
    # A float32 product that claims exactness: it fails the large-position cases, which the xfails name.
    adapter = tmp_path / "claims_exact.py"
    adapter.write_text(
        (ROOT / "tests" / "adapters" / "plain_product.py").read_text()
        + '\nCAPABILITIES = {"phase": "exact", "invalid_inputs": False, "dtypes": ["float32"]}\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *_plugin_option(),
        "--pyargs",
        "posenc_ref_conformance.pytest_suite",
        "--posenc-adapter",
        str(adapter),
        "--posenc-only",
        "rope",
        "--posenc-xfails",
        str(xfails),
    ]
    done = _run(cmd, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "xfailed" in done.stdout and "passed" in done.stdout
    failing = _run([*cmd[:-2]], cwd=tmp_path, env=env)
    assert failing.returncode == 1 and "rope/half/large-positions[float32]" in failing.stdout


def test_pytest_plugin_skips_beyond_precision(tmp_path: pathlib.Path) -> None:
    """Beyond-precision results are skipped with their reason, never passed; the summary ends with RESULT."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    adapter = ROOT / "tests" / "adapters" / "plain_product.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *_plugin_option()]
    cmd += ["--pyargs", "posenc_ref_conformance.pytest_suite", "--posenc-adapter", str(adapter)]
    done = _run([*cmd, "--posenc-only", "rope"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    beyond = [line for line in lines if line.startswith("SKIPPED [2]") and "beyond precision: " in line]
    assert len(beyond) == 1 and "float32 product class allows errors" in beyond[0], done.stdout
    assert any(line.startswith("RESULT: PASS (product class") for line in lines), done.stdout


def test_wheel_install_runs_check(tmp_path: pathlib.Path) -> None:
    """Build the wheel, install it into a fresh venv, run ``posenc-ref check posenc_ref`` outside the tree."""
    source = tmp_path / "src"  # a clean copy: no stale build/ directory can leak into the wheel
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info", ".*")
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("posenc_ref", "posenc_ref_conformance"):
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    wheels = tmp_path / "dist"
    # An isolated build, as pip does for a user: the build backend the project declares, from the index.
    build = _run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", str(source), "-w", str(wheels)])
    if build.returncode != 0 and "No matching distribution" in build.stderr + build.stdout:
        pytest.skip(f"the package index is unreachable here: {build.stderr.strip().splitlines()[-1:]}")
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "DeprecationWarning" not in build.stdout + build.stderr, "the build warns: " + build.stderr[-2000:]
    wheel = next(wheels.glob("posenc_ref-*.whl"))
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)])  # nothing from this interpreter's packages
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment here: {made.stderr.strip()[-200:]}")
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    # The wheel and the dependencies it declares, from the package index (or pip's cache).
    install = _run([str(bindir / "python"), "-m", "pip", "install", "--quiet", str(wheel)])
    if install.returncode != 0 and "No matching distribution" in install.stderr + install.stdout:
        pytest.skip(f"the package index is unreachable here: {install.stderr.strip().splitlines()[-1:]}")
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    listed = _run([str(bindir / "python"), "-m", "pip", "list", "--format=freeze"])
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed.stdout.split()}
    assert names - {"pip", "setuptools", "wheel"} == {"posenc-ref", "numpy", "array-api-compat"}, names
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "POSENC_REF_ADAPTER")}
    where = _run(
        [
            str(bindir / "python"),
            "-c",
            "import posenc_ref_conformance as c, posenc_ref as p; print(c.__file__); print(p.__file__)",
        ],
        cwd=tmp_path,
        env=env,
    )
    assert where.returncode == 0 and str(ROOT) not in where.stdout, where.stdout + where.stderr
    check = _run([str(bindir / "posenc-ref"), "check", "posenc_ref"], cwd=tmp_path, env=env)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    assert "RESULT: PASS" in check.stdout


def test_pytest_plugin_never_passes_on_nothing(tmp_path: pathlib.Path) -> None:
    """An adapter whose cases all skip fails the run (NOTHING TESTED), never a green row of skips."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "only_t5.py").write_text(
        "from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter\n"
        "t5_bucket = PosencRefAdapter().t5_bucket\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_option()]
    cmd += [
        "--pyargs",
        "posenc_ref_conformance.pytest_suite",
        "--posenc-adapter",
        str(tmp_path / "only_t5.py"),
    ]
    done = _run([*cmd, "--posenc-only", "alibi"], cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_something_was_compared - Failed: NOTHING TES" in done.stdout
    assert _run([*cmd, "--posenc-only", "t5"], cwd=tmp_path, env=env).returncode == 0


def test_a_project_with_its_own_conformance_package(tmp_path: pathlib.Path) -> None:
    """posenc-ref installed beside a user's own top-level ``conformance`` package breaks neither."""
    project = tmp_path / "project"
    (project / "conformance").mkdir(parents=True)
    (project / "conformance" / "__init__.py").write_text("WHO = 'the user'\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_mine.py").write_text(
        "import conformance\n\ndef test_mine():\n    assert conformance.WHO == 'the user'\n"
    )
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "POSENC_REF_ADAPTER")}
    env["PYTHONPATH"] = str(ROOT)  # posenc-ref importable, as if installed; the project's root comes first
    done = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_option()],
        cwd=project,
        env=env,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    check = _run(
        [sys.executable, "-m", "posenc_ref_conformance", "check", "posenc_ref", "--only", "t5"],
        cwd=project,
        env=env,
    )
    assert check.returncode == 0 and check.stdout.rstrip().endswith("RESULT: PASS (exact class)"), (
        check.stdout + check.stderr
    )


@pytest.mark.parametrize("missing", ["jsonschema", "mpmath"])
def test_golden_lint_without_its_extra_is_a_usage_error(monkeypatch, capsys, missing: str) -> None:
    """A plain ``pip install .`` has neither: lint says which extra, it is not a suite error."""
    for name in [m for m in sys.modules if m == missing or m.startswith(f"{missing}.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [m for m in sys.modules if m.startswith("posenc_ref_conformance.golden.")]:
        if name.rsplit(".", 1)[1] in ("lint", "generate", "oracle", "export"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)  # import raises ImportError
    assert main(["golden", "lint"]) == 2
    err = capsys.readouterr().err
    assert "golden lint needs the test extras (pip install 'posenc-ref[test]')" in err and missing in err


def test_the_json_report_is_readable_by_others(tmp_path: pathlib.Path) -> None:
    """Written through a temporary file (0600), it gets a new file's mode: 0666 less the umask."""
    report_path = tmp_path / "report.json"
    umask = os.umask(0o022)
    try:
        assert main(["check", "posenc_ref", "--only", "alibi_slopes", "--json", str(report_path)]) == 0
    finally:
        os.umask(umask)
    assert report_path.stat().st_mode & 0o777 == 0o644


def test_an_invariant_the_adapter_cannot_run_says_unsupported_once() -> None:
    def rope_cos_sin(positions, inv_freq, *, attention_factor, layout, dtype):
        msg = "offsets only"
        raise NotImplementedError(msg)

    report = run(ModuleAdapter(types.SimpleNamespace(rope_cos_sin=rope_cos_sin), name="x"), only=["rope"])
    details = {r.detail for r in report.results if r.function == "invariant" and r.status == "skip"}
    assert "unsupported: offsets only" in details
    assert not [d for d in details if "unsupported: unsupported" in d]


def test_a_function_that_cannot_take_its_call_is_one_usage_error_at_load(
    tmp_path: pathlib.Path, capsys
) -> None:
    """A missing ``dtype`` keyword would fail every case alike; it is refused once, before any case runs."""
    adapter = tmp_path / "no_dtype.py"
    adapter.write_text(
        "def rope_cos_sin(positions, inv_freq, *, attention_factor, layout):\n"
        "    raise AssertionError('never called')\n\n\n"
        "def alibi_slopes(num_heads, *, max_bias, dtype):\n"
        "    raise AssertionError('never called')\n",
        encoding="utf-8",
    )
    assert main(["check", str(adapter)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "rope_cos_sin(positions, inv_freq, *, attention_factor, layout) cannot take the call" in err
    assert "unexpected keyword argument 'dtype'" in err
    assert "alibi_slopes" not in err


def test_a_class_adapter_missing_a_positional_parameter_is_refused() -> None:
    from posenc_ref_conformance.adapters import check_adapter
    from posenc_ref_conformance.adapters.base import Adapter

    class Short(Adapter):
        def sinusoidal(self, positions, *, convention, options, dtype):  # no dim
            return None

    with pytest.raises(
        AdapterError, match=r"sinusoidal\(positions, \*, convention, options, dtype\) cannot take"
    ):
        check_adapter(Short(), "short")
