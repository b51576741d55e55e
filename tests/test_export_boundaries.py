"""``golden export`` at its boundaries (issue 22): nothing lost, sizes bounded, one reader, a bounded lint.

* A failed export (a refused config, an exception inside the build, a file system error)
  leaves the previous export byte for byte and no temporary folder; the export never
  deletes a file it did not write, and never writes into the installed package.
* Every size-like config value has a stated maximum (and the minimum the formulas need),
  checked before any work, and the export's size is estimated against a cap first.
* The export refuses a config exactly as ``posenc_ref.rope_config_from_hf`` does (same
  message, same class), and refuses ``rope_parameters`` and ``rope_scaling`` that disagree.
* ``golden lint DIR`` reproduces only a source it can bound: a small index that asks for
  a huge export is a problem, found in well under a second.
* A fuzz of every key of the shipped test configs: each edit is refused with a
  ``ValueError`` (exit 2) or exported, never another exception, never a long run.

Tests that would run long or exhaust memory where a bound is missing run under
:func:`budget` (a wall-clock alarm and an address-space limit), so they fail fast instead.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import math
import os
import pathlib
import random
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from posenc_ref import rope_config_from_hf
from posenc_ref_conformance import golden
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.golden import _format, export
from posenc_ref_conformance.golden.lint import lint

DATA = pathlib.Path(__file__).parent / "data"
CONFIGS = sorted((DATA / "hf_configs").glob("*.json")) + sorted((DATA / "hf_configs_bias").glob("*.json"))
SMALL = export.ExportOptions(positions=(0, 1), default_positions=False)
PACKAGE = pathlib.Path(golden.__file__).resolve().parents[1]


def config(name: str) -> dict[str, Any]:
    return json.loads(next(p for p in CONFIGS if p.stem == name).read_text())


def write(path: pathlib.Path, value: Any) -> pathlib.Path:
    path.write_text(json.dumps(value, allow_nan=True))
    return path


class OverBudget(BaseException):
    """The block ran past its time budget (a BaseException, so that no ``except Exception`` hides it)."""


def _vm_bytes() -> int | None:
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


@contextlib.contextmanager
def budget(seconds: float, memory: int = 3 * 2**30) -> Iterator[None]:
    """Run the block for at most ``seconds`` (else OverBudget), with ``memory`` more bytes of address room."""

    def alarm(signum: int, frame: Any) -> None:
        msg = f"over the budget of {seconds} s"
        raise OverBudget(msg)

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    limits = None
    try:
        import resource

        used = _vm_bytes()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if used is not None and (hard == resource.RLIM_INFINITY or used + memory < hard):
            resource.setrlimit(resource.RLIMIT_AS, (used + memory, hard))
            limits = (resource, soft, hard)
    except (ImportError, ValueError, OSError):
        limits = None
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if limits is not None:
            limits[0].setrlimit(limits[0].RLIMIT_AS, limits[1:])


def snapshot(directory: pathlib.Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``directory`` (and '<dir>' for every folder)."""
    out = {}
    for path in sorted(directory.rglob("*")):
        name = path.relative_to(directory).as_posix()
        out[name] = "<dir>" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def beside(out: pathlib.Path) -> list[str]:
    """What the parent of ``out`` holds besides ``out`` (temporary folders would show here)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name != out.name)


@pytest.fixture
def previous(tmp_path: pathlib.Path) -> pathlib.Path:
    """An earlier export with binary arrays, in ``tmp_path / "work" / "out"``."""
    out = tmp_path / "work" / "out"
    options = export.ExportOptions(positions=(0, 1, 2), default_positions=False, binary="always")
    export.export(out, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), options)
    assert (out / "arrays").is_dir() and (out / "index.json").is_file()
    return out


# --- nothing lost -------------------------------------------------------------------------------------------


def _ntk_head_dim_2(tmp_path: pathlib.Path) -> dict[str, Any]:
    return export.source_from_scaling({"rope_type": "ntk", "factor": 2.0}, head_dim=2, base=1e4)


def _longrope_original_1(tmp_path: pathlib.Path) -> dict[str, Any]:
    scaling = {
        "rope_type": "longrope",
        "short_factor": [1.0] * 4,
        "long_factor": [2.0] * 4,
        "original_max_position_embeddings": 1,
    }
    cfg = {"head_dim": 8, "max_position_embeddings": 64, "rope_scaling": scaling}
    return export.source_from_config(write(tmp_path / "longrope.json", cfg))


def _long_layer_name(tmp_path: pathlib.Path) -> dict[str, Any]:
    name = "x" * 250  # a case id, and so a .npy file name, longer than a file name may be
    cfg = {"head_dim": 8, "layer_types": [name], "rope_parameters": {name: {"rope_type": "default"}}}
    return export.source_from_config(write(tmp_path / "long.json", cfg))


class TestNothingLost:
    @pytest.mark.parametrize("make", [_ntk_head_dim_2, _longrope_original_1, _long_layer_name])
    def test_a_failed_reexport_keeps_the_previous_one(
        self, previous: pathlib.Path, tmp_path: pathlib.Path, make: Callable[..., Any]
    ) -> None:
        before = snapshot(previous)
        with budget(60), pytest.raises(ValueError) as info:
            source = make(tmp_path)
            export.export(previous, source, export.ExportOptions(positions=(0, 5), binary="always"))
        assert "the oracle failed" not in str(info.value)
        assert snapshot(previous) == before
        assert beside(previous) == []

    def test_the_cli_refuses_and_keeps_the_previous_one(
        self, previous: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        before = snapshot(previous)
        argv = ["golden", "export", "--scaling", '{"rope_type": "ntk", "factor": 2.0}']
        with budget(60):
            code = main([*argv, "--head-dim", "2", "--base", "1e4", "--out", str(previous)])
        assert code == 2
        assert "dim" in capsys.readouterr().err
        assert snapshot(previous) == before and beside(previous) == []

    @pytest.mark.parametrize("error", [ZeroDivisionError("float division by zero"), MemoryError()])
    def test_an_exception_inside_the_build(
        self, previous: pathlib.Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
    ) -> None:
        """Whatever the build raises, the previous export stays and the message names what failed."""
        real, calls = _format.dumps, []

        def failing(document: Any) -> bytes:
            calls.append(1)
            if len(calls) == 3:  # two files written already
                raise error
            return real(document)

        before = snapshot(previous)
        monkeypatch.setattr(_format, "dumps", failing)
        with pytest.raises(getattr(export, "ExportError", RuntimeError)) as info:
            export.export(previous, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        monkeypatch.undo()
        assert type(error).__name__ in str(info.value) and "the oracle failed" not in str(info.value)
        assert snapshot(previous) == before and beside(previous) == []

    def test_a_file_system_error_is_named(self, previous: pathlib.Path) -> None:
        """A write that fails (here: past RLIMIT_FSIZE, EFBIG) is named as such, and nothing is lost."""
        resource = pytest.importorskip("resource", reason="no resource module here", exc_type=ImportError)
        before = snapshot(previous)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        options = export.ExportOptions(positions=tuple(range(40)), default_positions=False, binary="always")
        source = export.source_from_config(DATA / "hf_configs" / "phi_2.json")
        try:
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, hard))
            with pytest.raises(Exception) as info:
                export.export(previous, source, options)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, old)
        message = str(info.value)
        assert isinstance(info.value, getattr(export, "ExportError", ()))
        assert "cannot write" in message and "File too large" in message, message
        assert "the oracle failed" not in message
        assert snapshot(previous) == before and beside(previous) == []

    def test_a_reexport_replaces_the_previous_one(self, previous: pathlib.Path) -> None:
        names = export.export(
            previous, export.source_from_config(DATA / "hf_configs" / "mistral_7b_v0_3.json"), SMALL
        )
        assert sorted(p.relative_to(previous).as_posix() for p in previous.rglob("*")) == sorted(names)
        assert not (previous / "arrays").exists() and beside(previous) == []
        assert golden.verify(previous)
        mask = os.umask(0)
        os.umask(mask)
        assert previous.stat().st_mode & 0o777 == 0o777 & ~mask

    def test_without_an_atomic_exchange(
        self, previous: pathlib.Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without renameat2: the earlier export is moved aside, the new one in, then the old removed."""
        monkeypatch.setattr(export, "_exchange", lambda new, old: False)
        names = export.export(previous, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        assert golden.verify(previous) and beside(previous) == [] and "index.json" in names
        assert not (previous / "arrays").exists()

    @pytest.mark.parametrize(
        ("error", "code"),
        [(ZeroDivisionError("float division by zero"), 5), (OSError(28, "No space left on device"), 2)],
    )
    def test_the_cli_names_a_failure(
        self,
        previous: pathlib.Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        error: BaseException,
        code: int,
    ) -> None:
        """A failure inside the build: one line naming it (exit 5, or 2 for the file system), nothing lost."""
        real = _format.dumps

        def failing(document: Any) -> bytes:
            if document.get("function") == "rope":
                raise error
            return real(document)

        before = snapshot(previous)
        monkeypatch.setattr(_format, "dumps", failing)
        argv = ["golden", "export", "--hf-config", str(DATA / "hf_configs" / "phi_2.json")]
        assert main([*argv, "--out", str(previous), "--positions", "0,1"]) == code
        err = capsys.readouterr().err
        assert type(error).__name__ in err and "Traceback" not in err and "the oracle failed" not in err
        assert err.count("\n") == 1 and "unchanged" in err
        assert snapshot(previous) == before and beside(previous) == []

    def test_a_new_folder_and_its_parents(self, tmp_path: pathlib.Path) -> None:
        out = tmp_path / "a" / "b" / "out"
        export.export(out, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        assert golden.verify(out) and beside(out) == []


class TestTarget:
    def test_a_users_own_npy_survives(self, previous: pathlib.Path) -> None:
        (previous / "arrays" / "mine.npy").write_bytes(b"my own data")
        before = snapshot(previous)
        with pytest.raises(ValueError, match=r"arrays/mine\.npy"):
            export.export(previous, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        assert snapshot(previous) == before and beside(previous) == []

    @pytest.mark.parametrize(
        ("make", "named"),
        [
            (lambda d: (d / "notes.txt").write_text("mine"), "notes.txt"),
            (lambda d: (d / "sub").mkdir() or (d / "sub" / "deep.txt").write_text("mine"), "sub/deep.txt"),
            (lambda d: (d / "empty").mkdir(), "empty"),
            (lambda d: (d / "link").symlink_to(d / "index.json"), "link"),
            (lambda d: (d / "arrays" / "data").mkdir(), "arrays/data"),
        ],
    )
    def test_a_foreign_entry_is_refused(
        self, previous: pathlib.Path, make: Callable[[pathlib.Path], Any], named: str
    ) -> None:
        make(previous)
        before = snapshot(previous)
        with pytest.raises(ValueError, match=named.replace(".", r"\.")):
            export.export(previous, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        assert snapshot(previous) == before and beside(previous) == []

    def test_the_cli_names_the_foreign_file(
        self, previous: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (previous / "arrays" / "mine.npy").write_bytes(b"my own data")
        argv = ["golden", "export", "--hf-config", str(DATA / "hf_configs" / "phi_2.json")]
        assert main([*argv, "--out", str(previous)]) == 2
        assert "arrays/mine.npy" in capsys.readouterr().err
        assert (previous / "arrays" / "mine.npy").read_bytes() == b"my own data"

    @pytest.mark.parametrize(
        "where",
        [
            lambda: golden.VECTORS_DIR,
            lambda: golden.VECTORS_DIR / "mine",
            lambda: golden.VECTORS_DIR / "arrays",
            lambda: PACKAGE / "golden" / "cases" / "mine",
            lambda: PACKAGE / "mine",
        ],
        ids=["vectors", "inside-vectors", "vectors-arrays", "inside-cases", "inside-package"],
    )
    def test_the_installed_package_is_refused(self, where: Callable[[], pathlib.Path]) -> None:
        target = where()
        existed = target.exists()
        shipped = snapshot(golden.VECTORS_DIR)
        try:
            with pytest.raises(ValueError, match="installed"):
                export.export(target, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        finally:
            if not existed and target.exists():  # a build that wrote there (today's HEAD): clean up
                import shutil

                shutil.rmtree(target)
        assert snapshot(golden.VECTORS_DIR) == shipped and target.exists() == existed
        assert golden.verify()  # every later check still runs

    def test_the_current_folder_is_refused(
        self, previous: pathlib.Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(previous)
        before = snapshot(previous)
        for out in (".", str(previous.parent)):
            with pytest.raises(ValueError, match="current folder"):
                export.export(out, export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL)
        assert snapshot(previous) == before and beside(previous) == []

    def test_a_file_is_refused(self, tmp_path: pathlib.Path) -> None:
        (tmp_path / "out").write_text("mine")
        with pytest.raises(ValueError, match="is a file"):
            export.export(
                tmp_path / "out", export.source_from_config(DATA / "hf_configs" / "phi_2.json"), SMALL
            )
        assert (tmp_path / "out").read_text() == "mine" and beside(tmp_path / "out") == []


# --- bounds -------------------------------------------------------------------------------------------------


def _edited(name: str, **changes: Any) -> dict[str, Any]:
    cfg = config(name)
    for key, value in changes.items():
        where, _, inner = key.partition("__")
        if inner:
            cfg[where][inner] = value
        else:
            cfg[key] = value
    return cfg


_T5_DECODER = {"model_type": "t5", "is_encoder_decoder": False, "is_decoder": True}

BOUNDS = [
    (
        "head_dim",
        _edited("gemma_7b", head_dim=1025),
        r"config\['head_dim'\] must be an integer <= 1024; got 1025",
    ),
    (
        "head_dim-huge",
        _edited("gemma_7b", head_dim=2**40),
        r"config\['head_dim'\] must be an integer <= 1024; got 1099511627776",
    ),
    (
        "qk_rope_head_dim",
        _edited("deepseek_v3", qk_rope_head_dim=2048),
        r"config\['qk_rope_head_dim'\] must be an integer <= 1024; got 2048",
    ),
    (
        "hidden_size",
        _edited("mistral_7b_v0_3", head_dim=None, hidden_size=2**21, num_attention_heads=2),
        r"config\['hidden_size'\] must be an integer <= 1048576; got 2097152",
    ),
    (
        "num_attention_heads",
        _edited("phi_2", hidden_size=2048 * 32, num_attention_heads=2048),
        r"config\['num_attention_heads'\] must be an integer <= 1024; got 2048",
    ),
    (
        "alibi-heads",
        _edited("bloom", n_head=1025),
        r"config\['n_head'\] must be an integer <= 1024; got 1025",
    ),
    (
        "mpt-heads",
        _edited("mpt_7b", n_heads=2**62),
        r"config\['n_heads'\] must be an integer <= 1024; got 4611686018427387904",
    ),
    (
        "t5-max-distance",
        _edited("mt5_small", relative_attention_max_distance=4097),
        r"config\['relative_attention_max_distance'\] must be an integer <= 4096; got 4097",
    ),
    (
        "t5-max-distance-huge",
        _edited("mt5_small", relative_attention_max_distance=2**62),
        r"relative_attention_max_distance'\] must be an integer <= 4096; got 4611686018427387904",
    ),
    (
        "t5-num-buckets",
        _edited("t5_small", relative_attention_num_buckets=1025),
        r"config\['relative_attention_num_buckets'\] must be an integer <= 1024; got 1025",
    ),
    (
        "t5-num-buckets-min",
        _edited("t5_small", relative_attention_num_buckets=3),
        r"config\['relative_attention_num_buckets'\] must be an integer >= 4; got 3",
    ),
    (
        "t5-max-distance-min",
        {**_T5_DECODER, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 16},
        r"config\['relative_attention_max_distance'\] must be an integer > 16 .*; got 16",
    ),
    (
        "max_position_embeddings",
        _edited("llama3_1_8b", max_position_embeddings=2**31),
        r"config\['max_position_embeddings'\] must be an integer <= 1073741824; got 2147483648",
    ),
    (
        "original_max_position_embeddings",
        _edited("phi3_5_mini_instruct", original_max_position_embeddings=2**31),
        r"config\['original_max_position_embeddings'\] must be an integer <= 1073741824; got 2147483648",
    ),
    (
        "longrope-original-1",
        _edited("phi3_5_mini_instruct", original_max_position_embeddings=1),
        r"\['original_max_position_embeddings'\] must be an integer >= 2 .*; got 1",
    ),
    (
        "factor",
        _edited("llama3_1_8b", rope_scaling__factor=2.0**17),
        r"config\['rope_scaling'\]\['factor'\] must be in \[1, 65536\]; got 131072",
    ),
    ("ntk-head-dim-2", {"head_dim": 2, "rope_scaling": {"rope_type": "ntk", "factor": 2.0}}, r"dim.*> 2"),
    (
        "dynamic-head-dim-2",
        {
            "head_dim": 2,
            "max_position_embeddings": 64,
            "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
        },
        r"dim.*> 2",
    ),
    (
        "longrope-list-length",
        _edited("phi3_5_mini_instruct", rope_scaling__short_factor=[1.0] * 2**16),
        r"\['short_factor'\] must be a list of dim/2 = 48 numbers; got 65536",
    ),
    (
        "layer-name",
        {"head_dim": 8, "layer_types": ["x" * 250], "rope_parameters": {"x" * 250: {"rope_type": "default"}}},
        r"layer type",
    ),
    (
        "layer-count",
        {
            "head_dim": 8,
            "layer_types": [f"l{i}" for i in range(200)],
            "rope_parameters": {f"l{i}": {"rope_type": "default"} for i in range(200)},
        },
        r"at most 16 layer types .*; got 200 layer types",
    ),
]


class TestBounds:
    @pytest.mark.parametrize(("cfg", "message"), [b[1:] for b in BOUNDS], ids=[b[0] for b in BOUNDS])
    def test_refused_before_any_work(self, tmp_path: pathlib.Path, cfg: dict[str, Any], message: str) -> None:
        path = write(tmp_path / "config.json", {k: v for k, v in cfg.items() if v is not None})
        out = tmp_path / "out"
        start = time.perf_counter()
        with budget(20), pytest.raises(ValueError, match=message):
            export.export(out, export.source_from_config(path), SMALL)
        assert time.perf_counter() - start < 5 and not out.exists() and beside(out) == ["config.json"]

    def test_the_size_estimate_is_checked_first(self, tmp_path: pathlib.Path) -> None:
        """head_dim 1024 at 2**22 positions in both layouts: 128 GiB of cos/sin, refused at once."""
        source = export.source_from_scaling({"rope_type": "default"}, head_dim=1024, base=1e4)
        options = export.ExportOptions(positions=tuple(range(2**22)), default_positions=False)
        start = time.perf_counter()
        with budget(30), pytest.raises(ValueError, match=r"(?s)would write about .*GiB.* at most"):
            export.export(tmp_path / "out", source, options)
        assert time.perf_counter() - start < 10 and list(tmp_path.iterdir()) == []

    def test_a_large_legitimate_export_is_allowed(self) -> None:
        """Llama 3.1 at 128k positions (the guide's example) is well inside the cap."""
        estimate = export.estimate(
            export.source_from_config(DATA / "hf_configs" / "llama3_1_8b.json"),
            export.ExportOptions(positions=tuple(range(131072))),
        )
        assert 2**29 < estimate.bytes < export.MAX_EXPORT_BYTES

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"head_dim": 1025, "base": 1e4}, r"^head_dim must be an integer <= 1024; got 1025"),
            ({"head_dim": 64, "base": 1e4, "max_position_embeddings": 2**31}, r"max_position_embeddings"),
        ],
    )
    def test_the_scaling_source(self, kwargs: dict[str, Any], message: str) -> None:
        with budget(20), pytest.raises(ValueError, match=message):
            export.source_from_scaling({"rope_type": "default"}, **kwargs)

    def test_a_huge_config_file_is_refused(self, tmp_path: pathlib.Path) -> None:
        path = tmp_path / "config.json"
        path.write_text(json.dumps({"head_dim": 64, "padding": "x" * (2**24 + 1)}))
        with budget(20), pytest.raises(ValueError, match=r"config\.json.*bytes"):
            export.source_from_config(path)

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            ({"layer_norm_eps": math.nan}, r"^config\['layer_norm_eps'\] is NaN or Infinity"),
            ({"x": [[{"y": -math.inf}]]}, r"^config\['x'\]\[0\]\[0\]\['y'\] is NaN or Infinity"),
            ({"x": json.loads("[" * 40 + "]" * 40)}, r"nested more than 32 levels"),
        ],
        ids=["nan", "infinity", "depth-40"],
    )
    def test_what_index_json_cannot_record(self, tmp_path: pathlib.Path, extra: Any, message: str) -> None:
        """A key the export does not read still goes into index.json: it must be plain, readable JSON."""
        path = write(tmp_path / "config.json", {**config("mistral_7b_v0_3"), **extra})
        with pytest.raises(ValueError, match=message):
            export.source_from_config(path)

    def test_a_deeply_nested_config_is_refused(self, tmp_path: pathlib.Path) -> None:
        path = tmp_path / "config.json"
        path.write_text('{"head_dim": 64, "x": ' + "[" * 100000 + "]" * 100000 + "}")
        with budget(20), pytest.raises(ValueError, match="config"):
            export.source_from_config(path)


# --- one reader ---------------------------------------------------------------------------------------------

READER_EDITS = [
    ("rope_theta-0", "llama3_1_8b", ("rope_theta",), 0),
    ("rope_theta-0.0", "llama3_1_8b", ("rope_theta",), 0.0),
    ("rope_theta-negative", "llama3_1_8b", ("rope_theta",), -1.0),
    ("rope_theta-bool", "llama3_1_8b", ("rope_theta",), True),
    ("rope_theta-nan", "llama3_1_8b", ("rope_theta",), math.nan),
    ("rope_theta-inf", "llama3_1_8b", ("rope_theta",), math.inf),
    ("rope_theta-string", "llama3_1_8b", ("rope_theta",), "5e5"),
    ("partial_rotary_factor-0", "phi_2", ("partial_rotary_factor",), 0),
    ("partial_rotary_factor-negative", "phi_2", ("partial_rotary_factor",), -0.4),
    ("partial_rotary_factor-bool", "phi_2", ("partial_rotary_factor",), False),
    ("partial_rotary_factor-nan", "phi_2", ("partial_rotary_factor",), math.nan),
    ("head_dim-0", "gemma_7b", ("head_dim",), 0),
    ("head_dim-bool", "gemma_7b", ("head_dim",), True),
    ("head_dim-float", "gemma_7b", ("head_dim",), 256.0),
    ("max_position_embeddings-negative", "llama3_1_8b", ("max_position_embeddings",), -1),
    ("factor-nan", "llama3_1_8b", ("rope_scaling", "factor"), math.nan),
    ("factor-inf", "llama3_1_8b", ("rope_scaling", "factor"), math.inf),
    ("factor-bool", "llama3_1_8b", ("rope_scaling", "factor"), True),
    ("rope_type-empty", "llama3_1_8b", ("rope_scaling", "rope_type"), ""),
    ("v5-rope_theta-0", "llama3_1_8b_v5", ("rope_parameters", "rope_theta"), 0),
    ("v5-per-layer-rope_theta-0", "gemma3_4b_v5", ("rope_parameters", "full_attention", "rope_theta"), 0),
]


def _set(cfg: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(cfg)
    node = cfg
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return cfg


def _library_error(cfg: dict[str, Any]) -> Exception:
    layer_types = set(cfg.get("layer_types") or ()) & set(cfg.get("rope_parameters") or ())
    try:
        for layer in sorted(layer_types) or [None]:
            rope_config_from_hf(cfg, layer_type=layer)
    except (TypeError, ValueError) as exc:
        return exc
    msg = "the library's reader accepts the config"
    raise AssertionError(msg)


class TestOneReader:
    @pytest.mark.parametrize(
        ("name", "path", "value"), [e[1:] for e in READER_EDITS], ids=[e[0] for e in READER_EDITS]
    )
    def test_the_same_error_as_the_library(
        self, tmp_path: pathlib.Path, name: str, path: tuple[str, ...], value: Any
    ) -> None:
        file = write(tmp_path / "config.json", _set(config(name), path, value))
        library = _library_error(json.loads(file.read_text()))
        with budget(20), pytest.raises(ValueError) as info:
            export.source_from_config(file)
        assert isinstance(info.value, type(library)), (type(info.value), type(library))
        assert str(info.value) == str(library)

    def _both(self, v5: Any, v4: Any) -> dict[str, Any]:
        cfg = config("llama3_1_8b")
        cfg.pop("rope_scaling")
        return {**cfg, "rope_parameters": v5, "rope_scaling": v4}

    def test_a_conflict_is_an_error_naming_both_keys(self, tmp_path: pathlib.Path) -> None:
        v4 = config("llama3_1_8b")["rope_scaling"]
        cfg = self._both(v4, {**v4, "factor": 4.0})
        for attempt in (
            lambda: rope_config_from_hf(cfg),
            lambda: export.source_from_config(write(tmp_path / "c.json", cfg)),
        ):
            with pytest.raises(ValueError) as info:
                attempt()
            message = str(info.value)
            assert "rope_parameters" in message and "rope_scaling" in message, message
            assert "factor" in message and "4.0" in message and "8.0" in message, message

    def test_a_conflicting_type_is_named(self) -> None:
        cfg = self._both({"rope_type": "linear", "factor": 2.0}, {"type": "dynamic", "factor": 2.0})
        with pytest.raises(ValueError, match=r"(?s)rope_scaling.*rope_type.*rope_parameters"):
            rope_config_from_hf(cfg)

    @pytest.mark.parametrize(
        "v4",
        [
            lambda v5: dict(v5),  # the same dict twice
            lambda v5: {"type" if k == "rope_type" else k: v for k, v in v5.items()},  # v4's legacy 'type'
        ],
        ids=["identical", "legacy-type"],
    )
    def test_agreeing_copies_are_fine(self, tmp_path: pathlib.Path, v4: Callable[[Any], Any]) -> None:
        v5 = config("llama3_1_8b")["rope_scaling"]
        cfg = self._both(v5, v4(v5))
        assert rope_config_from_hf(cfg) == rope_config_from_hf(config("llama3_1_8b"))
        source = export.source_from_config(write(tmp_path / "c.json", cfg))
        assert source["kind"] == "hf-config"

    def test_the_shipped_configs_still_read(self) -> None:
        for path in CONFIGS:
            export.source_from_config(path)


# --- lint of an untrusted export ---------------------------------------------------------------------------


def _hostile(tmp_path: pathlib.Path, record: Callable[[dict[str, Any]], None]) -> pathlib.Path:
    """A small export whose index.json is rewritten: no case files, and ``record`` edits its export record."""
    out = tmp_path / "hostile"
    source = export.source_from_scaling({"rope_type": "default"}, head_dim=8, base=1e4)
    export.export(out, source, SMALL)
    index = json.loads((out / "index.json").read_text())
    for entry in index["files"]:
        (out / entry["file"]).unlink()
    index["files"], index["totalCases"] = [], 0
    record(index["export"])
    (out / "index.json").write_bytes(_format.dumps(index))
    return out


def _huge_positions(record: dict[str, Any]) -> None:
    record["sourceRecord"]["headDim"] = 1024
    record["options"]["positions"] = "0:4194304"


def _huge_t5(record: dict[str, Any]) -> None:
    cfg = {"model_type": "t5", "relative_attention_max_distance": 2**40}
    record["sourceRecord"] = {"kind": "hf-config", "name": "config.json", "sha256": "0" * 64, "config": cfg}


def _bounded_but_missing(record: dict[str, Any]) -> None:
    record["options"]["positions"] = "0:100000"  # inside every bound, but no file holds these cases


class TestLint:
    @pytest.mark.parametrize(
        ("record", "message"),
        [
            (_huge_positions, r"would write at least 128\.0 GiB"),
            (_huge_t5, r"relative_attention_max_distance"),
            (_bounded_but_missing, r"holds"),
        ],
        ids=["huge-positions", "huge-t5", "bounded-but-absent"],
    )
    def test_a_small_index_asking_for_a_huge_source(
        self, tmp_path: pathlib.Path, record: Callable[[dict[str, Any]], None], message: str
    ) -> None:
        directory = _hostile(tmp_path, record)
        assert (directory / "index.json").stat().st_size < 4096
        start = time.perf_counter()
        with budget(20):
            problems = lint(directory)
        assert time.perf_counter() - start < 5
        assert any(
            p.startswith("cannot reproduce: ") and __import__("re").search(message, p) for p in problems
        ), problems

    def test_the_cli_reports_it(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        directory = _hostile(tmp_path, _huge_positions)
        with budget(20):
            assert main(["golden", "lint", str(directory)]) == 1
        assert "LINT: cannot reproduce: " in capsys.readouterr().out

    def test_a_bounded_export_still_lints(self, tmp_path: pathlib.Path) -> None:
        out = tmp_path / "out"
        options = export.ExportOptions(positions=(0, 1, 4095, 20000), layouts=("half",), binary="always")
        export.export(
            out, export.source_from_config(DATA / "hf_configs" / "phi3_5_mini_instruct.json"), options
        )
        assert lint(out) == []


# --- the fuzz of every config key --------------------------------------------------------------------------

_DELETE = object()
FUZZ_EDITS: list[tuple[str, Any]] = [
    ("delete", _DELETE),
    ("0", 0),
    ("-1", -1),
    ("1e300", 1e300),
    ("NaN", math.nan),
    ("Infinity", math.inf),
    ("string", "x"),
    ("bool", True),
    ("list", [1]),
    ("2**62", 2**62),
]
#: Dicts whose keys are fuzzed too (the rope dict, per-layer rope dicts, MPT's attention config).
_NESTED = ("rope_scaling", "rope_parameters", "attn_config")
#: The fuzz exports at positions 0 and 1 in one layout (the config's keys do not meet the layout).
FUZZ_OPTIONS = export.ExportOptions(positions=(0, 1), default_positions=False, layouts=("half",))
FUZZ_SEED = 22
FUZZ_SECONDS_PER_EDIT = 20


def fuzz_cases() -> list[tuple[pathlib.Path, tuple[str, ...], str, Any]]:
    """(config file, key path, edit name, edit value) for every key of every shipped test config."""
    cases = []
    for path in CONFIGS:
        cfg = json.loads(path.read_text())
        keys: list[tuple[str, ...]] = [(k,) for k in cfg]
        for outer in _NESTED:
            if isinstance(cfg.get(outer), dict):
                for key, value in cfg[outer].items():
                    keys.append((outer, key))
                    if isinstance(value, dict):
                        keys += [(outer, key, inner) for inner in value]
        cases += [(path, key, name, value) for key in keys for name, value in FUZZ_EDITS]
    return cases


def fuzz_one(
    path: pathlib.Path, key: tuple[str, ...], value: Any, work: pathlib.Path, *, cli: bool = False
) -> tuple[str, str]:
    """('exported' | 'refused' | 'error' | 'slow', detail) for one edit of one config."""
    edited = write(work / "config.json", _set(json.loads(path.read_text()), key, value))
    out = work / "out"
    try:
        with budget(FUZZ_SECONDS_PER_EDIT):
            if cli:
                argv = ["golden", "export", "--hf-config", str(edited), "--out", str(out)]
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    code = main([*argv, "--positions", "0,1", "--no-default-positions", "--layout", "half"])
                detail = f"exit {code}: {err.getvalue().strip()[:200]}"
                return ({0: "exported", 2: "refused"}.get(code, "error"), detail)
            source = export.source_from_config(edited)
            export.export(out, source, FUZZ_OPTIONS)
            return "exported", ""
    except OverBudget as exc:
        return "slow", str(exc)
    except ValueError as exc:
        if "the oracle failed" in str(exc) or "rope_config_from_hf failed" in str(exc):
            return "error", f"{type(exc).__name__}: {exc}"[:300]
        return "refused", str(exc)[:200]
    except Exception as exc:  # every other exception is what the fuzz looks for
        return "error", f"{type(exc).__name__}: {exc}"[:300]
    finally:
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        for stray in work.glob(".out.*"):
            shutil.rmtree(stray, ignore_errors=True)


def run_fuzz(work: pathlib.Path, log: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    cases = fuzz_cases()
    rng = random.Random(FUZZ_SEED)
    cli = set(rng.sample(range(len(cases)), len(cases) // 25))  # 4% of the edits also through the CLI
    counts: dict[str, int] = {}
    bad: list[str] = []
    start = time.perf_counter()
    for n, (path, key, name, value) in enumerate(cases):
        outcome, detail = fuzz_one(path, key, value, work, cli=n in cli)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("error", "slow"):
            bad.append(f"{path.stem} {'/'.join(key)} = {name}: {outcome}: {detail}")
            log(bad[-1])
    return {"tried": len(cases), "counts": counts, "bad": bad, "seconds": time.perf_counter() - start}


def test_fuzz_every_config_key(tmp_path: pathlib.Path) -> None:
    """Each edit of each key: refused (a ValueError, exit 2) or exported; never another error, never slow."""
    result = run_fuzz(tmp_path)
    print(f"fuzz: {result['tried']} edits, {result['counts']}, {result['seconds']:.1f} s")
    assert result["bad"] == []
    assert result["counts"].get("exported", 0) > 100 and result["counts"].get("refused", 0) > 100


if __name__ == "__main__":  # python tests/test_export_boundaries.py: the fuzz's counts and failures
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        summary = run_fuzz(pathlib.Path(scratch), log=print)
    print(f"{summary['tried']} edits tried: {summary['counts']} in {summary['seconds']:.1f} s")
    sys.exit(1 if summary["bad"] else 0)
