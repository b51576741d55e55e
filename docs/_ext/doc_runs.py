"""The commands whose output the docs show, and how they are run (plain Python, no Sphinx).

Every sample output on the site is the output of a real run: ``scripts/docs_generate.py``
runs them and writes what they printed into the pages, between markers, and CI reruns them
(``python scripts/docs_generate.py --check``), so no page can show an output the tool no
longer prints.  What depends on the machine or the moment (durations, temporary names) is
normalised first (:func:`normalise`); the one excerpt that is nothing but timings
(:data:`MACHINE_DEPENDENT`) is written at build time instead (``posenc_docs.py``, under
``docs/generated/``).  This module is the one list of those runs:

- :data:`CHECK_EXAMPLES` and :func:`check_argv`: ``posenc-ref check`` of each example
  adapter in ``docs/examples/`` (the guide's reports, made by :func:`run_check`;
  ``tests/test_docs_claims.py`` runs the same commands to test what the pages say about them);
- :data:`SESSIONS`: the export guide's sessions.  A :class:`Session` copies its input files
  into a fresh folder and runs its :class:`Run` steps there; what a shown step prints (after
  ``$ command``, or alone for an error line) is its transcript.  A :class:`Prepare` step is
  Python that sets up an input a reader would make by hand (a damaged config, a forged
  index).  A session's excerpts are fragments made from the files it wrote;
- :func:`oracle_pair_seconds`: the cost of one mpmath (cos, sin) pair, timed at build.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

__all__ = [
    "CHECK_ARGUMENTS",
    "CHECK_EXAMPLES",
    "MACHINE_DEPENDENT",
    "SESSIONS",
    "CheckRun",
    "Prepare",
    "Run",
    "Session",
    "StepResult",
    "check_argv",
    "normalise",
    "oracle_pair_seconds",
    "relative_paths",
    "run_check",
    "run_session",
    "transcript",
]

# --------------------------------------------------------------------------------------
# posenc-ref check of the example adapters
# --------------------------------------------------------------------------------------
#: example adapter file -> module it needs
CHECK_EXAMPLES: dict[str, str] = {
    "mlx_adapter.py": "mlx.core",
    "torch_adapter.py": "torch",
    "planted_bug_adapter.py": "numpy",
}
#: Extra arguments of an example's check (its report is shown whole on the page).
CHECK_ARGUMENTS: dict[str, list[str]] = {"planted_bug_adapter.py": ["--only", "rope", "--max-failures", "4"]}


def report_name(example: str) -> str:
    """The JSON report's file name the page shows: ``mlx_adapter.py`` -> ``mlx-report.json``."""
    return f"{Path(example).stem.removesuffix('_adapter')}-report.json"


def check_argv(example: str, report_json: str) -> list[str]:
    """The page's command for ``example``, from ``posenc-ref`` on (run it with :func:`command`)."""
    adapter = f"docs/examples/{example}"
    return ["posenc-ref", "check", adapter, *CHECK_ARGUMENTS.get(example, []), "--json", report_json]


def command(argv: Sequence[str]) -> list[str]:
    """``posenc-ref ...`` as this interpreter runs it (``python -m posenc_ref_conformance ...``)."""
    if argv[0] != "posenc-ref":
        msg = f"not a posenc-ref command: {shlex.join(argv)}"
        raise ValueError(msg)
    return [sys.executable, "-m", "posenc_ref_conformance", *argv[1:]]


def environment() -> dict[str, str]:
    """The environment of a run: this checkout's packages first, whatever is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


@dataclasses.dataclass(frozen=True)
class CheckRun:
    """What :func:`run_check` of an example printed, and the JSON report it wrote."""

    transcript: str  #: ``$ command``, its output (normalised), ``$ echo $?`` and the exit status
    report: dict[str, Any] | None  #: the JSON report; None when the run wrote none
    returncode: int
    stderr: str

    @property
    def problems(self) -> list[str]:
        """A run that ended in neither a verdict (0 PASS, 1 FAIL) nor a report is a problem."""
        if self.returncode in (0, 1) and self.report is not None:
            return []
        return [f"exited {self.returncode}, not 0 or 1:\n{self.stderr[-3000:]}"]


def run_check(example: str) -> CheckRun:
    """Run the page's ``posenc-ref check`` of ``example`` (from the checkout's root, as a reader
    does), its JSON report in a temporary folder, written on the page under its
    :func:`report_name`."""
    name = report_name(example)
    with tempfile.TemporaryDirectory(prefix="posenc-docs-check-") as tmp:
        report_json = str(Path(tmp) / name)
        proc = subprocess.run(
            command(check_argv(example, report_json)),
            cwd=ROOT,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        path = Path(report_json)
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    shown = normalise(proc.stdout.rstrip().replace(report_json, name))
    text = f"$ {' '.join(check_argv(example, name))}\n{shown}\n$ echo $?\n{proc.returncode}\n"
    return CheckRun(text, report, proc.returncode, proc.stderr)


# --------------------------------------------------------------------------------------
# Sessions: commands run in a fresh folder
# --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Run:
    """One ``posenc-ref`` command.

    ``show``: ``"all"`` (``$ command`` and its output), ``"output"`` (the output alone: an
    error line) or ``"none"`` (a step the reader needs not see).  ``expect``: the exit status
    the page relies on.  ``file_size_limit``: ``RLIMIT_FSIZE`` in bytes, to make a write fail.
    """

    line: str
    show: str = "all"
    expect: int = 0
    file_size_limit: int | None = None

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.line)


@dataclasses.dataclass(frozen=True)
class Prepare:
    """Python that makes an input in the session's folder, as a reader would by hand."""

    make: Callable[[Path], None]


@dataclasses.dataclass(frozen=True)
class StepResult:
    """What one :class:`Run` did: its exit status and its output (stdout, then stderr)."""

    run: Run
    returncode: int
    output: str


@dataclasses.dataclass(frozen=True)
class Session:
    """Commands run one after another in a fresh folder holding ``files``.

    ``files``: name in the folder -> path under the repository root.  ``excerpts``: fragment
    file name -> a function of the folder and the steps' results that returns its text.
    """

    name: str
    steps: tuple[Run | Prepare, ...]
    files: Mapping[str, str] = dataclasses.field(default_factory=dict)
    excerpts: Mapping[str, Callable[[Path, Sequence[StepResult]], str]] = dataclasses.field(
        default_factory=dict
    )

    def inputs(self) -> list[Path]:
        """The repository files the session reads (for the build's cache key)."""
        return [ROOT / source for source in self.files.values()]


def _limit_file_size(limit: int | None) -> Callable[[], None] | None:
    if limit is None:
        return None

    def preexec() -> None:  # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def _execute(run: Run, work: Path) -> StepResult:
    proc = subprocess.run(
        command(run.argv),
        cwd=work,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        preexec_fn=_limit_file_size(run.file_size_limit),
    )
    output = (proc.stdout + proc.stderr).rstrip()
    return StepResult(run, proc.returncode, relative_paths(output, work))


def relative_paths(text: str, work: Path) -> str:
    """``text`` with the session folder's absolute path written relative to it."""
    for folder in {str(work), str(work.resolve())}:
        text = text.replace(f"{folder}{os.sep}", "").replace(folder, ".")
    return text


#: Text of a run that differs from machine to machine or from run to run, and what a page
#: shows in its place: the durations the tool prints, and the random part of a temporary
#: folder's name (as ``export.py`` writes it, ``.DIR.partial-XXXXXXXX``).
_MACHINE_SPECIFIC: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(\d+ results in )\d+(?:\.\d+)? s\b"), r"\1… s"),  # check's first line
    (re.compile(r"^(exported \d+ cases at .*, )\d+(?:\.\d+)? s$", re.M), r"\1… s"),  # the export's last
    (re.compile(r"(\.(?:partial|previous)-)[a-z0-9_]{8}\b"), r"\1XXXXXXXX"),
)


def normalise(text: str) -> str:
    """``text`` with what depends on the machine or the moment written as a placeholder (``… s``
    for a duration), so that a page shows the same transcript wherever it is made."""
    for pattern, replacement in _MACHINE_SPECIFIC:
        text = pattern.sub(replacement, text)
    return text


def transcript(results: Sequence[StepResult]) -> str:
    """The shown steps as a terminal shows them, normalised (:func:`normalise`)."""
    lines = []
    for result in results:
        if result.run.show == "all":
            lines.append(f"$ {result.run.line}")
        if result.run.show != "none" and result.output:
            lines.append(normalise(result.output))
    return "\n".join(lines) + "\n"


def run_session(session: Session) -> tuple[str, dict[str, str], list[str]]:
    """Run ``session`` in a temporary folder: its transcript, its excerpts and its problems.

    A problem is a step whose exit status is not the one the page relies on.
    """
    results: list[StepResult] = []
    with tempfile.TemporaryDirectory(prefix=f"posenc-docs-{session.name}-") as tmp:
        work = Path(tmp)
        for name, source in session.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / source, work / name)
        for step in session.steps:
            if isinstance(step, Prepare):
                step.make(work)
            else:
                results.append(_execute(step, work))
        excerpts = {name: make(work, results) for name, make in session.excerpts.items()}
    problems = [
        f"`{r.run.line}` exited {r.returncode}, not {r.run.expect}:\n{r.output[-3000:]}"
        for r in results
        if r.returncode != r.run.expect
    ]
    return transcript(results), excerpts, problems


# --------------------------------------------------------------------------------------
# Inputs made by hand: damaged configs, a forged index
# --------------------------------------------------------------------------------------
LLAMA = "tests/data/hf_configs/llama3_1_8b.json"


def _edited_config(source: str, name: str, edit: Callable[[dict[str, Any]], None]) -> Prepare:
    """Write ``name``: the config ``source`` changed by ``edit`` (as a reader might get it wrong)."""

    def make(work: Path) -> None:
        config = json.loads((ROOT / source).read_text(encoding="utf-8"))
        edit(config)
        (work / name).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    return Prepare(make)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit that sets ``config[a][b]`` for ``path`` ``"a.b"`` (``None``: deletes it)."""
    *parents, key = path.split(".")

    def edit(config: dict[str, Any]) -> None:
        node = config
        for parent in parents:
            node = node.setdefault(parent, {})
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value

    return edit


#: Damaged configs the export refuses, each from the Llama 3.1 config: file name -> key -> value.
REFUSALS: dict[str, tuple[str, Any]] = {
    "unknown-type.json": ("rope_scaling.rope_type", "ntk-aware"),
    "missing-key.json": ("rope_scaling.low_freq_factor", None),
    "unknown-key.json": ("rope_scaling.finetuned", True),
    "odd-hidden-size.json": ("hidden_size", 4100),
    "zero-theta.json": ("rope_theta", 0.0),
    "two-spellings.json": (
        "rope_parameters",
        {
            "rope_type": "llama3",
            "factor": 4.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_theta": 500000.0,
        },
    ),
}


def _gpt2(work: Path) -> None:
    config = {"model_type": "gpt2", "n_positions": 1024, "n_embd": 768, "n_head": 12}
    (work / "gpt2.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _refusal_steps() -> tuple[Run | Prepare, ...]:
    steps: list[Run | Prepare] = []
    for name, (key, value) in REFUSALS.items():
        steps.append(_edited_config(LLAMA, name, _set(key, value)))
        steps.append(
            Run(f"posenc-ref golden export --hf-config {name} --out vectors", show="output", expect=2)
        )
    steps.append(Prepare(_gpt2))
    steps.append(Run("posenc-ref golden export --hf-config gpt2.json --out vectors", show="output", expect=2))
    return tuple(steps)


def _forge_index(work: Path) -> None:
    """Rewrite ``forged/index.json`` to ask for 2^22 positions of a 1024-wide head, and drop its cases."""
    from posenc_ref_conformance.golden import _format

    folder = work / "forged"
    index = json.loads((folder / "index.json").read_text(encoding="ascii"))
    for entry in index["files"]:
        (folder / entry["file"]).unlink()
    index["files"], index["totalCases"] = [], 0
    index["export"]["sourceRecord"]["headDim"] = 1024
    index["export"]["options"]["positions"] = "0:4194304"
    (folder / "index.json").write_bytes(_format.dumps(index))


# --------------------------------------------------------------------------------------
# Excerpts of what an export wrote
# --------------------------------------------------------------------------------------
def _cases(folder: Path) -> list[dict[str, Any]]:
    """Every case of an exported folder, in the order of its index."""
    index = json.loads((folder / "index.json").read_text(encoding="ascii"))
    cases: list[dict[str, Any]] = []
    for entry in index["files"]:
        cases += json.loads((folder / entry["file"]).read_text(encoding="ascii"))["cases"]
    return cases


def case_table(folder: str) -> Callable[[Path, Sequence[StepResult]], str]:
    """A Markdown table of the cases an export wrote to ``folder``: id and comment."""

    def make(work: Path, results: Sequence[StepResult]) -> str:
        from mdtext import md_escape, md_literal

        rows = ["| case | what it holds |", "|---|---|"]
        rows += [
            f"| {md_literal(c['id'], in_table=True)} | {md_escape(c['comment'])} |"
            for c in _cases(work / folder)
        ]
        return "\n".join(rows) + "\n"

    return make


def npy_reference(folder: str) -> Callable[[Path, Sequence[StepResult]], str]:
    """The first array of ``folder`` that lives in a ``.npy`` file: its reference, as the JSON holds it."""

    def find(value: Any) -> dict[str, Any] | None:
        if isinstance(value, dict):
            if "file" in value and "sha256" in value:
                return value
            value = list(value.values())
        if isinstance(value, list):
            for item in value:
                found = find(item)
                if found:
                    return found
        return None

    def make(work: Path, results: Sequence[StepResult]) -> str:
        reference = find(_cases(work / folder))
        return (
            "(no array of this export is in a .npy file)\n"
            if reference is None
            else json.dumps(reference) + "\n"
        )

    return make


TIMES = "\N{MULTIPLICATION SIGN}"
_EXPORT_LINE = re.compile(r"^exported (\d+) cases at (\d+) positions .*, ([\d.]+) s$", re.M)


def oracle_pair_seconds(pairs: int = 256) -> float:
    """Seconds per (cos, sin) pair of the plain mpmath oracle at its working precision, timed here."""
    from posenc_ref_conformance import oracle

    inv_freq = [500000.0 ** (-2 * i / 128) for i in range(64)]
    positions = [131071 - k for k in range(max(1, pairs // 64))]
    with oracle.working_precision(oracle.DEFAULT_DIGITS):
        start = time.perf_counter()
        oracle.rope.rope_cos_sin(positions, inv_freq)
        seconds = time.perf_counter() - start
    return seconds / (len(positions) * len(inv_freq))


def speed(work: Path, results: Sequence[StepResult]) -> str:
    """Two sentences: what the plain oracle would take for Llama 3.1's tables, and what the export took."""
    from posenc_ref_conformance import oracle

    per_pair = oracle_pair_seconds()
    match = next(m for r in results if (m := _EXPORT_LINE.search(r.output)))
    _cases_done, positions, seconds = match.groups()
    return (
        f"On the machine that built these pages, the plain mpmath oracle takes {per_pair * 1e6:.0f} µs per "
        f"(cos, sin) pair at {oracle.DEFAULT_DIGITS} digits: {131072 * 64 * per_pair / 60:.0f} minutes for "
        f"Llama 3.1's 131072 positions {TIMES} 64 frequencies of one layout.  The export above, "
        f"{int(positions)} positions in one layout, took {seconds} s in all.\n"
    )


#: Excerpts that are measurements of the machine that makes them (timings): no normalising
#: keeps their meaning, so no page holds them; the docs build writes them, and the page
#: includes them from ``docs/generated/export/`` and says so.
MACHINE_DEPENDENT: frozenset[str] = frozenset({"llama31-speed.md"})


# --------------------------------------------------------------------------------------
# The export guide's sessions
# --------------------------------------------------------------------------------------
SESSIONS: tuple[Session, ...] = (
    Session(
        "llama31",
        files={"llama3_1_8b.json": LLAMA},
        steps=(
            Run(
                "posenc-ref golden export --hf-config llama3_1_8b.json --positions 0:131072 --layout half "
                "--out llama31"
            ),
            Run("posenc-ref check posenc_ref --golden llama31 --no-invariants"),
        ),
        excerpts={"llama31-npy.txt": npy_reference("llama31"), "llama31-speed.md": speed},
    ),
    Session(
        "qwen",
        files={
            "qwen-config.json": "tests/data/hf_configs/qwen2_5_7b_instruct_yarn.json",
            "docs/examples/no_attention_factor_adapter.py": "docs/examples/no_attention_factor_adapter.py",
        },
        steps=(
            Run(
                "posenc-ref golden export --hf-config qwen-config.json --positions 0,1,4095,131071 --out qwen"
            ),
            Run(
                "posenc-ref check docs/examples/no_attention_factor_adapter.py --golden qwen --no-invariants "
                "--max-failures 3",
                expect=1,
            ),
        ),
    ),
    Session(
        "phi35",
        files={"phi35-config.json": "tests/data/hf_configs/phi3_5_mini_instruct.json"},
        steps=(
            Run("posenc-ref golden export --hf-config phi35-config.json --out phi35 --layout half"),
            Run("posenc-ref golden lint phi35"),
        ),
        excerpts={"phi35-cases.md": case_table("phi35")},
    ),
    Session("refusals", files={}, steps=_refusal_steps()),
    Session(
        "bound",
        steps=(
            _edited_config(LLAMA, "wide-head.json", _set("head_dim", 4096)),
            Run("posenc-ref golden export --hf-config wide-head.json --out vectors", show="output", expect=2),
        ),
    ),
    Session(
        "write-failure",
        files={"qwen-config.json": "tests/data/hf_configs/qwen2_5_7b_instruct_yarn.json"},
        steps=(
            Run(
                "posenc-ref golden export --hf-config qwen-config.json --positions 0,1 --out vectors",
                show="none",
            ),
            Run(
                "posenc-ref golden export --hf-config qwen-config.json --positions 0:64 --binary always "
                "--out vectors",
                show="output",
                expect=2,
                file_size_limit=65536,
            ),
        ),
    ),
    Session(
        "forged-lint",
        steps=(
            Run(
                'posenc-ref golden export --scaling \'{"rope_type": "default"}\' --head-dim 8 --base 10000 '
                "--positions 0:4 --no-default-positions --out forged",
                show="none",
            ),
            Prepare(_forge_index),
            Run("posenc-ref golden lint forged", expect=1),
        ),
    ),
)
