"""Every command and xfail line that README.md and the suite's README show actually works.

Commands are read from the documents' code blocks and inline code (lines
starting with ``posenc-ref``, ``pytest`` or ``POSENC_REF_ADAPTER=``) and run
verbatim in a scratch folder, where the names the documents use for the
reader's own files exist: ``my_pkg.posenc_adapter`` and ``path/to/adapter.py``
stand in for a third party's adapter (they wrap the reference implementation,
so every check passes), and the xfail files hold the documents' example xfail
lines.  A run must exit 0 with no usage error and no stale xfail entry; a check
of a real library's own code (``posenc-ref check mlx``, ``check transformers``, the
adapters under ``docs/examples/``) may instead report failures (exit 1), which are
that library's verdict, not the document's.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "posenc_ref_conformance" / "README.md",
    ROOT / "docs/guide/check.md",
    ROOT / "docs/guide/report.md",
]
_STARTS = ("posenc-ref ", "pytest ", "POSENC_REF_ADAPTER=")
_FENCE = re.compile(r"^([ \t]*)```[^\n]*\n(.*?)^\1```", re.S | re.M)
_ID_LINE = re.compile(r"^[a-z0-9_]+(/[A-Za-z0-9_.\-]*)*(\[[a-z0-9]+\])?$")

STAND_IN = '''"""Stand-in for a reader's own adapter: the reference implementation itself."""
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter

ADAPTER = PosencRefAdapter()
'''


def _blocks(text: str) -> list[str]:
    return [block for _, block in _FENCE.findall(text)]


def _commands(path: pathlib.Path) -> list[str]:
    """Shell commands in ``path``: code-block lines (with ``\\`` continuations) and inline code."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in _blocks(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"\s+#\s.*$", "", line.strip())
            line = re.sub(r"^pip install [^&]*&& ", "", line)  # the install step is CI's first command
            if line.startswith(_STARTS):
                found.append(line)
    prose = _FENCE.sub("", text)
    inline = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]  # may span lines
    # Not synopses (``[--check]``), nor the bare name of a subcommand that needs an argument.
    found += [c for c in inline if c.startswith(_STARTS) and "[" not in c and c != "posenc-ref check"]
    return found


def _xfail_blocks(path: pathlib.Path) -> list[list[str]]:
    """Code blocks whose every entry (comments removed) is a case id or id prefix."""
    blocks = []
    for block in _blocks(path.read_text(encoding="utf-8")):
        entries = [line.split("#", 1)[0].strip() for line in block.splitlines()]
        entries = [e for e in entries if e]
        if entries and all(_ID_LINE.match(e) and "/" in e for e in entries):
            blocks.append(entries)
    return blocks


COMMANDS = sorted({(p.relative_to(ROOT).as_posix(), c) for p in DOCUMENTS for c in _commands(p)})
XFAIL_BLOCKS = [(p.relative_to(ROOT).as_posix(), b) for p in DOCUMENTS for b in _xfail_blocks(p)]


def test_the_documents_show_commands_and_xfail_files() -> None:
    """The extraction itself works (a regex that finds nothing would make the tests below vacuous)."""
    documents = {doc for doc, _ in COMMANDS}
    assert {"README.md", "posenc_ref_conformance/README.md"} <= documents
    assert any(c.startswith("pytest ") for _, c in COMMANDS)
    assert len(XFAIL_BLOCKS) >= 2


@pytest.mark.parametrize(("document", "entries"), XFAIL_BLOCKS, ids=[d for d, _ in XFAIL_BLOCKS])
def test_example_xfail_lines_match_cases(document: str, entries: list[str]) -> None:
    """No example xfail entry is stale: each names a real case id or id prefix."""
    report = run(PosencRefAdapter(), xfails=entries)
    assert report.stale_xfails == [], f"{document}: entries matching no case: {report.stale_xfails}"


def _scratch(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    (tmp_path / "my_pkg" / "posenc_adapter.py").write_text(STAND_IN)
    (tmp_path / "path" / "to").mkdir(parents=True)
    (tmp_path / "path" / "to" / "adapter.py").write_text(STAND_IN)
    (tmp_path / "my_adapter.py").write_text(STAND_IN)
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")  # "from a checkout"
    lines = "\n".join(entry for _, block in XFAIL_BLOCKS for entry in block) + "\n"
    for name in ("my-xfails.txt", "posenc-xfails.txt", "my-posenc-xfails.txt"):
        (tmp_path / name).write_text(lines)
    return tmp_path


def _missing_backend(command: str) -> str | None:
    for backend, module in (
        ("torch", "torch"),
        ("mlx", "mlx.core"),
        ("jax", "jax"),
        ("dask", "dask"),
        ("transformers", "transformers"),
    ):
        if re.search(rf"(posenc_ref:{backend}\b|check {backend}\b|{backend}_adapter\.py)", command):
            try:
                found = importlib.util.find_spec(module) is not None
            except ImportError:
                found = False
            if not found:
                return f"{module} is not installed"
    return None


@pytest.mark.parametrize(("document", "command"), COMMANDS, ids=[c for _, c in COMMANDS])
def test_documented_command_runs(document: str, command: str, tmp_path: pathlib.Path) -> None:
    bindir = pathlib.Path(sys.executable).parent
    if shutil.which("posenc-ref", path=str(bindir)) is None:
        pytest.skip("posenc-ref is not installed in this environment (pip install .)")
    if command.startswith("pytest ") and not any(
        ep.value == "posenc_ref_conformance.pytest_plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    ):
        pytest.skip("the pytest plugin's entry point is not installed (pip install .)")
    reason = _missing_backend(command)
    if reason:
        pytest.skip(f"{command!r} needs an optional backend: {reason}")
    cwd = _scratch(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("POSENC_REF_ADAPTER", "PYTHONPATH")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(cwd)  # the reader's own package is importable where they run the command
    words = shlex.split(command)
    if words[0] == "pytest":
        words = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words[1:]]
        command = shlex.join(words)
    done = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout[-3000:] + done.stderr[-3000:]
    real_library = re.search(r"check (mlx\b|transformers\b|docs/examples/)", command)
    allowed = (0, 1) if real_library else (0,)
    assert done.returncode in allowed, f"{document}: {command!r} exited {done.returncode}\n{output}"
    assert "stale" not in done.stdout + done.stderr, output
    if "posenc-ref check" in command:
        verdict = "RESULT: PASS" if done.returncode == 0 else "RESULT: FAIL"
        assert verdict in done.stdout, output


def _quick_start() -> list[str]:
    """README's two quick-start commands: the first line of each code block under "Quick start"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip().splitlines()[0] for block in _blocks(section)]


def test_ci_runs_the_quick_start_verbatim() -> None:
    """``.ci/run`` runs README's two commands exactly as written, install first, tests second."""
    commands = _quick_start()
    assert len(commands) == 2, commands
    assert commands[0].startswith("pip install .") and "python -m pytest" in commands[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    positions = [ci_lines.index(c) if c in ci_lines else -1 for c in commands]
    assert -1 not in positions and positions == sorted(positions), (commands, positions)
