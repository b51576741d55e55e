#!/usr/bin/env python
"""posenc-ref side by side with its peers: one process per backend, interleaved, min of N.

    python scripts/peer_bench.py                       # numpy, torch, mlx; the issue's sizes
    python scripts/peer_bench.py --backends torch      # one backend
    python scripts/peer_bench.py --quick --samples 1   # tiny sizes (what the test runs)
    /work/venvs/peers/bin/python scripts/peer_bench.py # an environment with the peers installed

Each backend runs in a fresh interpreter (this one's ``sys.executable``) that builds
its inputs once, then times posenc-ref and every peer of a row alternately, each the
fastest of ``--samples`` samples (``asv_benchmarks/benchmarks/timing.py``, the clock
of the asv ratio gate: the process's CPU time unless ``--clock wall``), PyTorch on one
thread.  Peers are the installed libraries' own functions (:data:`PEERS`: module and
attribute); a peer that does not import is skipped with the reason.  Two baselines
are not peers but a few lines by definition: one copy of ``x``, and the naive float32
product (angles ``p * w`` rounded in float32, then ``cos``/``sin``).  Where a float64
reference exists (cos/sin tables, the Vaswani table) the largest absolute error of
each output is shown too.  Prints a Markdown table, ``ratio = posenc-ref / peer``
(below 1: posenc-ref is faster), headed by the command and the versions.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
BACKENDS = ("numpy", "torch", "mlx")
#: Distributions whose versions head the table.
VERSIONS = ("numpy", "torch", "mlx", "transformers", "torchtune", "rotary-embedding-torch")


def _timing() -> Any:
    """The asv suite's timing module (one home for interleaved min-of-N)."""
    path = ROOT / "asv_benchmarks" / "benchmarks" / "timing.py"
    spec = importlib.util.spec_from_file_location("posenc_ref_bench_timing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


timing = _timing()

#: Every peer: (module, attribute) in the installed library.  Nothing here re-implements one.
PEERS: dict[str, tuple[str, str]] = {
    "HF llama apply_rotary_pos_emb": ("transformers.models.llama.modeling_llama", "apply_rotary_pos_emb"),
    "torchtune RotaryPositionalEmbeddings": ("torchtune.modules", "RotaryPositionalEmbeddings"),
    "rotary-embedding-torch apply_rotary_emb": ("rotary_embedding_torch", "apply_rotary_emb"),
    "rotary-embedding-torch RotaryEmbedding": ("rotary_embedding_torch", "RotaryEmbedding"),
    # underscored, but HF's only bucket function (T5, mT5, LongT5, UMT5 copy it)
    "HF T5Attention._relative_position_bucket": ("transformers.models.t5.modeling_t5", "T5Attention"),
    "HF M2M100 get_embedding": (
        "transformers.models.m2m_100.modeling_m2m_100",
        "M2M100SinusoidalPositionalEmbedding",
    ),
    "HF Whisper sinusoids": ("transformers.models.whisper.modeling_whisper", "sinusoids"),
    "HF BLOOM build_alibi_tensor": ("transformers.models.bloom.modeling_bloom", "build_alibi_tensor"),
    "HF MPT build_mpt_alibi_tensor": ("transformers.models.mpt.modeling_mpt", "build_mpt_alibi_tensor"),
    "mx.fast.rope": ("mlx.core.fast", "rope"),
}
COPY = "one copy of x"
NAIVE = "naive f32 product"


@dataclasses.dataclass(frozen=True)
class Sizes:
    rope: tuple[int, int, int, int]  # x of apply_rope, [B, H, L, D]
    cos_sin: tuple[int, int]  # positions, frequencies
    relative: int  # T5 buckets of L x L relative positions
    table: tuple[int, int]  # sinusoidal positions, dim
    row: tuple[int, int]  # ALiBi heads, keys of one query row


#: The issue's sizes, and tiny ones for the test.
FULL = Sizes((1, 32, 4096, 128), (131072, 64), 4096, (8192, 1024), (16, 2048))
QUICK = Sizes((1, 2, 16, 8), (64, 4), 32, (16, 8), (4, 16))


@dataclasses.dataclass
class Case:
    """One row group: a posenc-ref call and the peers doing the same work."""

    work: str
    ours: Callable[[], object]
    peers: dict[str, Callable[[], object] | str]  # name -> call, or why it is skipped
    error: Callable[[object], float] | None = None  # largest |output - float64 reference|
    small_call: bool = False  # tens of microseconds: timing's small-call sampling


def load_peer(name: str) -> Any:
    """The peer's object from its installed library, or a string saying why it is not available."""
    module, attr = PEERS[name]
    try:
        return getattr(importlib.import_module(module), attr)
    except Exception as exc:  # absent or broken: skipped, with the reason
        return f"skipped: {module.split('.')[0]} not importable ({type(exc).__name__}: {exc})"


def bind(name: str, make: Callable[[Any], Callable[[], object]]) -> Callable[[], object] | str:
    """``make(peer)`` (the timed call), or the reason the peer is skipped."""
    peer = load_peer(name)
    return peer if isinstance(peer, str) else make(peer)


def max_error(outputs: object, references: tuple[np.ndarray, ...]) -> float:
    """Largest absolute difference of ``outputs`` (an array or tuple of arrays) from ``references``."""
    arrays = outputs if isinstance(outputs, tuple) else (outputs,)
    if len(arrays) != len(references):
        msg = f"expected {len(references)} outputs; got {len(arrays)}"
        raise ValueError(msg)
    return max(
        float(np.max(np.abs(np.asarray(a, dtype=np.float64) - r)))
        for a, r in zip(arrays, references, strict=True)
    )


def rope_inv_freq(frequencies: int) -> np.ndarray:
    """float64 ``10000**(-2i/d)``, ``d = 2 * frequencies`` (HF's default ``inv_freq``)."""
    return 10000.0 ** (-np.arange(0, 2 * frequencies, 2, dtype=np.float64) / (2 * frequencies))


def cos_sin_reference(positions: int, frequencies: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 half-layout ``cos``/``sin`` tables (the angle's error is ~1e-11 here)."""
    angles = np.arange(positions, dtype=np.float64)[:, None] * rope_inv_freq(frequencies)[None, :]
    return np.tile(np.cos(angles), 2), np.tile(np.sin(angles), 2)


def vaswani_reference(positions: int, dim: int) -> np.ndarray:
    """float64 interleaved ``[sin, cos, ...]`` table with ``w_k = 10000**(-2k/dim)``."""
    angles = np.arange(positions, dtype=np.float64)[:, None] * rope_inv_freq(dim // 2)[None, :]
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(positions, dim)


# --- cases per backend ---------------------------------------------------------------------------------


def _namespace(name: str) -> tuple[Any, Any, Callable[[object], object]]:
    """(array namespace, float32 dtype, sync) of a backend."""
    if name == "numpy":
        import array_api_compat.numpy as xp

        return xp, np.float32, lambda out: out
    if name == "torch":
        import array_api_compat.torch as xp
        import torch

        torch.set_num_threads(1)
        return xp, torch.float32, lambda out: out
    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    return mx, mx.float32, lambda out: mx.eval(out) or out


def _asarray(name: str, host: np.ndarray) -> Any:
    if name == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(host))
    if name == "mlx":
        import mlx.core as mx

        return mx.array(host)
    return host


def _copy(name: str, xp: Any, x: Any) -> Any:
    return xp.array(x) if name == "mlx" else xp.asarray(x, copy=True)  # MLX copies on construction


def _rope_cases(name: str, s: Sizes) -> list[Case]:
    import posenc_ref as pr

    xp, f32, sync = _namespace(name)
    b, h, n, d = s.rope
    rng = np.random.default_rng(0)
    x = _asarray(name, rng.standard_normal((b, h, n, d)).astype(np.float32))
    pos = _asarray(name, np.arange(n))
    shape = f"f32 [{b},{h},{n},{d}]"
    cases = []
    for layout, rotary in (("half", d), ("interleaved", d), ("half", d // 2), ("interleaved", d // 2)):
        if name != "numpy" and rotary != d:
            continue  # partial rotary: the NumPy gate's rows only
        cos, sin = sync(pr.rope_cos_sin(pos, pr.rope_frequencies(rotary, xp=xp), layout=layout, dtype=f32))
        partial = f", partial ({rotary} of {d})" * (rotary != d)

        def ours(cos: Any = cos, sin: Any = sin, layout: str = layout) -> object:
            return sync(pr.apply_rope(x, cos, sin, layout=layout))

        peers: dict[str, Callable[[], object] | str] = {COPY: lambda: sync(_copy(name, xp, x))}
        if name == "mlx":
            peers["mx.fast.rope"] = bind(
                "mx.fast.rope",
                lambda rope, t=(layout == "interleaved"): (
                    lambda: sync(rope(x, d, traditional=t, base=10000.0, scale=1.0, offset=0))
                ),
            )
        cases.append(Case(f"apply_rope {shape} {layout}{partial}", ours, peers))
    if name == "torch":
        cases += _torch_rope_peers(s, x, pos)
    return cases


def _torch_rope_peers(s: Sizes, x: Any, pos: Any) -> list[Case]:
    import array_api_compat.torch as xp
    import torch

    import posenc_ref as pr

    b, h, n, d = s.rope
    k = torch.flip(x, dims=(-1,)).contiguous()
    freqs = pr.rope_frequencies(d, xp=xp)
    cos, sin = pr.rope_cos_sin(pos, freqs, layout="half", dtype=torch.float32)
    hf = bind(
        "HF llama apply_rotary_pos_emb", lambda f: lambda: f(x, k, cos[None], sin[None], unsqueeze_dim=1)
    )
    half = Case(
        f"apply_rope f32 [{b},{h},{n},{d}] half, q and k (HF rotates both)",
        lambda: (pr.apply_rope(x, cos, sin), pr.apply_rope(k, cos, sin)),
        {"HF llama apply_rotary_pos_emb": hf},
    )
    cos_i, sin_i = pr.rope_cos_sin(pos, freqs, layout="interleaved", dtype=torch.float32)
    x_bshd = x.transpose(1, 2).contiguous()  # torchtune's [b, s, n_h, h_d]
    interleaved = Case(
        f"apply_rope f32 [{b},{h},{n},{d}] interleaved",
        lambda: pr.apply_rope(x, cos_i, sin_i, layout="interleaved"),
        {
            "torchtune RotaryPositionalEmbeddings": bind(
                "torchtune RotaryPositionalEmbeddings", lambda cls: _call(cls(d, max_seq_len=n), x_bshd)
            ),
            "rotary-embedding-torch apply_rotary_emb": _lucidrains(d, n, x),
        },
    )
    return [half, interleaved]


def _call(module: Any, x: Any) -> Callable[[], object]:
    return lambda: module(x)


def _lucidrains(dim: int, length: int, x: Any) -> Callable[[], object] | str:
    """``apply_rotary_emb(angles, x)``, the angles from the library's own ``RotaryEmbedding`` (untimed)."""
    import torch

    table, apply = (
        load_peer("rotary-embedding-torch RotaryEmbedding"),
        load_peer("rotary-embedding-torch apply_rotary_emb"),
    )
    if isinstance(table, str) or isinstance(apply, str):
        return table if isinstance(table, str) else apply
    angles = table(dim=dim)(torch.arange(length))
    return lambda: apply(angles, x)


def _cos_sin_cases(name: str, s: Sizes) -> list[Case]:
    import posenc_ref as pr

    xp, f32, sync = _namespace(name)
    n, f = s.cos_sin
    pos = _asarray(name, np.arange(n))
    pos32 = _asarray(name, np.arange(n, dtype=np.float32))
    inv32 = _asarray(name, rope_inv_freq(f).astype(np.float32))
    reference = cos_sin_reference(n, f)

    def naive() -> object:  # the float32 product, then cos/sin of each angle once (the floor)
        angles = pos32[:, None] * inv32[None, :]
        c, s_ = xp.cos(angles), xp.sin(angles)
        return sync((xp.concat([c, c], axis=-1), xp.concat([s_, s_], axis=-1)))

    cases = []
    for label, compute in (("default (f64 compute)", None), ("precise f32 path", f32)):
        freqs = pr.rope_frequencies(2 * f, xp=xp, compute_dtype=compute)

        def ours(freqs: Any = freqs, compute: Any = compute) -> object:
            return sync(pr.rope_cos_sin(pos, freqs, layout="half", dtype=f32, compute_dtype=compute))

        cases.append(
            Case(
                f"rope_cos_sin {n}x{f}, f32 out, {label}",
                ours,
                {NAIVE: naive},
                lambda o: max_error(o, reference),
            )
        )
    return cases


def _table_cases(name: str, s: Sizes) -> list[Case]:
    import posenc_ref as pr

    xp, f32, sync = _namespace(name)
    n, dim = s.table
    pos = _asarray(name, np.arange(n))
    pos32 = _asarray(name, np.arange(n, dtype=np.float32))
    w32 = _asarray(name, rope_inv_freq(dim // 2).astype(np.float32))
    reference = (vaswani_reference(n, dim),)

    def naive() -> object:
        angles = pos32[:, None] * w32[None, :]
        return sync(xp.reshape(xp.stack([xp.sin(angles), xp.cos(angles)], axis=-1), (n, dim)))

    def table(convention: str) -> Callable[[], object]:
        return lambda: sync(pr.sinusoidal(pos, dim, convention=convention, dtype=f32))

    cases = [
        Case(
            f"sinusoidal {n}x{dim} f32, vaswani",
            table("vaswani"),
            {NAIVE: naive},
            lambda o: max_error(o, reference),
        )
    ]
    if name == "torch":
        m2m = bind("HF M2M100 get_embedding", lambda cls: lambda: cls.get_embedding(n, dim, padding_idx=1))
        whisper = bind("HF Whisper sinusoids", lambda f: lambda: f(n, dim))
        cases.append(
            Case(f"sinusoidal {n}x{dim} f32, fairseq", table("fairseq"), {"HF M2M100 get_embedding": m2m})
        )
        cases.append(
            Case(
                f"sinusoidal {n}x{dim} f32, tensor2tensor",
                table("tensor2tensor"),
                {"HF Whisper sinusoids": whisper},
            )
        )
    return cases


def _relative_cases(name: str, s: Sizes) -> list[Case]:
    import posenc_ref as pr

    xp, f32, sync = _namespace(name)
    heads, keys = s.row
    q, k = _asarray(name, np.asarray([keys - 1])), _asarray(name, np.arange(keys))
    slopes = sync(pr.alibi_slopes(heads, xp=xp, dtype=f32))
    kf = _asarray(name, np.arange(keys, dtype=np.float32))
    row = f"[{heads},1,{keys}]"
    cases = [
        Case(
            f"alibi_bias one row {row} f32 causal, slopes given",
            lambda: sync(pr.alibi_bias(q, k, slopes, form="causal")),
            {"slopes[:, None, None] * k": lambda: sync(slopes[:, None, None] * kf[None, None, :])},
            small_call=True,
        )
    ]
    if name != "torch":
        return cases
    import torch

    rel_np = np.arange(s.relative)[None, :] - np.arange(s.relative)[:, None]
    rel = torch.from_numpy(rel_np)
    bucket = bind(
        "HF T5Attention._relative_position_bucket",
        lambda cls: (
            lambda: cls._relative_position_bucket(rel, bidirectional=True, num_buckets=32, max_distance=128)
        ),
    )
    mask = torch.ones((1, keys), dtype=torch.int64)
    bloom = bind("HF BLOOM build_alibi_tensor", lambda f: lambda: f(mask, heads, torch.float32))
    mpt = bind("HF MPT build_mpt_alibi_tensor", lambda f: lambda: f(heads, keys))

    def whole_row(form: str) -> Callable[[], object]:
        return lambda: pr.alibi_bias(q, k, pr.alibi_slopes(heads, xp=xp, dtype=f32), form=form)

    return [
        *cases,
        Case(
            f"t5_bucket {s.relative}x{s.relative} bidirectional",
            lambda: pr.t5_bucket(rel, bidirectional=True),
            {
                "HF T5Attention._relative_position_bucket": bucket,
                "posenc-ref on NumPy": lambda: pr.t5_bucket(rel_np, bidirectional=True),
            },
        ),
        Case(
            f"alibi_slopes + alibi_bias {row} causal",
            whole_row("causal"),
            {"HF BLOOM build_alibi_tensor": bloom},
            small_call=True,
        ),
        Case(
            f"alibi_slopes + alibi_bias {row} symmetric",
            whole_row("symmetric"),
            {"HF MPT build_mpt_alibi_tensor": mpt},
            small_call=True,
        ),
    ]


def cases_for(name: str, sizes: Sizes) -> list[Case]:
    """Every row group of one backend, inputs built (imports the backend)."""
    return [
        *_rope_cases(name, sizes),
        *_cos_sin_cases(name, sizes),
        *_table_cases(name, sizes),
        *_relative_cases(name, sizes),
    ]


# --- measuring and printing ------------------------------------------------------------------------------


def measure(case: Case, backend: str, *, samples: int | None, clock: str) -> list[dict[str, Any]]:
    """Time posenc-ref and the case's available peers alternately; one row per peer.

    ``samples=None``: :data:`timing.SAMPLES`, or :data:`timing.SMALL_CALL_SAMPLES`
    samples of :data:`timing.SMALL_CALL_MIN_SAMPLE` for a small call (as in asv).
    """
    calls = {"posenc-ref": case.ours, **{k: v for k, v in case.peers.items() if not isinstance(v, str)}}
    small = (timing.SMALL_CALL_SAMPLES, timing.SMALL_CALL_MIN_SAMPLE) if case.small_call else None
    n, min_sample = small or (timing.SAMPLES, timing.MIN_SAMPLE)
    best = timing.interleaved_min(calls, samples=samples or n, min_sample=min_sample, clock=clock)
    errors = {k: case.error(call()) for k, call in calls.items()} if case.error else {}
    rows = []
    for peer, call in case.peers.items():
        skipped = call if isinstance(call, str) else ""
        rows.append(
            {
                "work": case.work,
                "backend": backend,
                "ours_s": best["posenc-ref"],
                "peer": peer,
                "peer_s": None if skipped else best[peer],
                "ratio": None if skipped else best["posenc-ref"] / best[peer],
                "ours_error": errors.get("posenc-ref"),
                "peer_error": errors.get(peer),
                "skipped": skipped,
            }
        )
    return rows


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for dist in VERSIONS:
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "not installed"
    return found


def worker(backend: str, sizes: Sizes, samples: int | None, clock: str) -> dict[str, Any]:
    """All rows of one backend, measured in this process."""
    try:
        cases = cases_for(backend, sizes)
    except ImportError as exc:
        return {"backend": backend, "skipped": f"{backend} not importable: {exc}", "rows": []}
    rows = [row for case in cases for row in measure(case, backend, samples=samples, clock=clock)]
    return {"backend": backend, "skipped": "", "rows": rows, "versions": versions()}


def _seconds(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value * 1e6:.0f} us" if value < 1e-3 else f"{value * 1e3:.1f} ms"


def _error(value: float | None) -> str:
    return "" if value is None else f"{value:.1e}"


def table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of every backend's rows (skipped backends and peers with their reasons)."""
    lines = [
        "| work | backend | posenc-ref | peer | peer time | ratio | error posenc-ref | error peer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        if result["skipped"]:
            lines.append(f"| (every row) | {result['backend']} | | | {result['skipped']} | | | |")
        for r in result["rows"]:
            peer_time = r["skipped"] or _seconds(r["peer_s"])
            ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
            lines.append(
                f"| {r['work']} | {r['backend']} | {_seconds(r['ours_s'])} | {r['peer']} | {peer_time} | "
                f"{ratio} | {_error(r['ours_error'])} | {_error(r['peer_error'])} |"
            )
    return "\n".join(lines)


def run_backend(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    """One backend's rows, from a fresh interpreter (so backends never share a process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "rows.json"
        cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--worker", backend, "--out", str(out)]
        cmd += ["--clock", args.clock] + ["--quick"] * args.quick
        cmd += ["--samples", str(args.samples)] if args.samples else []
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.exists():
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            return {
                "backend": backend,
                "skipped": f"worker failed ({done.returncode}): {tail[0]}",
                "rows": [],
            }
        return json.loads(out.read_text())


def command_line(args: argparse.Namespace) -> str:
    parts = ["python scripts/peer_bench.py", f"--backends {','.join(args.backends)}"]
    parts += [f"--samples {args.samples}"] * bool(args.samples)
    return " ".join(parts + [f"--clock {args.clock}"] + ["--quick"] * args.quick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backends", type=lambda v: v.split(","), default=list(BACKENDS), help="numpy,torch,mlx"
    )
    parser.add_argument("--samples", type=int, help="N of min-of-N for every row (default 7; 31 small calls)")
    parser.add_argument("--clock", choices=sorted(timing.CLOCKS), default="cpu", help="cpu (default) or wall")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--json", type=pathlib.Path, help="also write every row to this JSON file")
    parser.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=pathlib.Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.worker:
        args.out.write_text(json.dumps(worker(args.worker, sizes, args.samples, args.clock)))
        return 0
    unknown = sorted(set(args.backends) - set(BACKENDS))
    if unknown:
        parser.error(f"--backends must be among {','.join(BACKENDS)}; got {','.join(unknown)}")
    results = [run_backend(name, args) for name in args.backends]
    found = {k: v for r in results for k, v in r.get("versions", {}).items()}
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"command: {command_line(args)}")
    print(f"python: {sys.executable}; clock: {args.clock}; torch threads: 1; load average: {load}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in found.items()) + "\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(math.isfinite(r["ours_s"]) for res in results for r in res["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
