"""Sinusoidal absolute encodings, one function per real convention.

Each function returns a list of rows (one per position, ``dim`` mpf values) at
the current mpmath precision.  Positions are exact integers; every other
parameter is taken as the exact value of the float given.

Sources: Vaswani et al. 2017 §3.5; tensor2tensor ``get_timing_signal_1d``
(common_attention.py); fairseq ``SinusoidalPositionalEmbedding`` and
``utils.make_positions``; HF Marian ``create_weight``; MLX
``nn.SinusoidalPositionalEncoding``; HF MusicGen ``get_embedding`` (``[cos | sin]``);
HF PatchTST ``_init_pe`` (the standardised Vaswani table).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = [
    "CONVENTIONS",
    "column_frequencies",
    "fairseq",
    "fairseq_make_positions",
    "marian",
    "mlx",
    "patchtst",
    "patchtst_std",
    "phase_positions",
    "sinusoidal",
    "tensor2tensor",
    "vaswani",
]

CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq", "marian", "mlx", "patchtst")


def _vaswani_frequency(k: int, dim: int, base: float) -> mp.mpf:
    """omega_k = base ** (-2k / dim): the paper's (and XLM's, Marian's) frequencies."""
    return mp.power(exact(base), mp.mpf(-2 * k) / dim)


def vaswani(positions: Sequence[int], dim: int, *, base: float = 10000.0) -> list[list[mp.mpf]]:
    """Interleaved ``[sin w0, cos w0, sin w1, ...]``; for odd ``dim`` the last column is a sine.

    ``PE(p, j) = sin(p w_{j//2})`` for even ``j`` and ``cos(p w_{j//2})`` for odd ``j``
    (HF ``create_sinusoidal_embeddings``: XLM, DistilBERT, FlauBERT; keras-hub).
    """
    omegas = [_vaswani_frequency(j // 2, dim, base) for j in range(dim)]
    return [[(mp.sin if j % 2 == 0 else mp.cos)(exact(p) * omegas[j]) for j in range(dim)] for p in positions]


def tensor2tensor(
    positions: Sequence[int],
    dim: int,
    *,
    min_timescale: float = 1.0,
    max_timescale: float = 1.0e4,
    cos_first: bool = False,
) -> list[list[mp.mpf]]:
    """Concatenated ``[sin | cos]`` with geometric timescales, zero column for odd ``dim``.

    ``n = dim // 2``; ``inc = ln(max/min) / max(n - 1, 1)``;
    ``inv_k = min_timescale * exp(-k inc)`` (t2t multiplies by ``min_timescale``
    where dividing was meant; identical when it is 1, as in every default).
    ``cos_first``: ``[cos | sin | 0]`` (MusicGen's ``torch.cat([cos, sin])``).
    """
    n = dim // 2
    increment = mp.log(exact(max_timescale) / exact(min_timescale)) / max(n - 1, 1)
    inv = [exact(min_timescale) * mp.exp(-k * increment) for k in range(n)]
    rows = []
    for p in positions:
        angles = [exact(p) * w for w in inv]
        sines, cosines = [mp.sin(a) for a in angles], [mp.cos(a) for a in angles]
        rows.append((cosines + sines if cos_first else sines + cosines) + [mp.mpf(0)] * (dim % 2))
    return rows


def _moments(table: list[list[mp.mpf]]) -> tuple[mp.mpf, mp.mpf]:
    """Mean and sample standard deviation (divisor ``count - 1``) of every entry of ``table``."""
    count = sum(len(row) for row in table)
    mean = mp.fsum(v for row in table for v in row) / count
    return mean, mp.sqrt(mp.fsum((v - mean) ** 2 for row in table for v in row) / (count - 1))


def patchtst_std(dim: int, num_positions: int) -> mp.mpf:
    """The standard deviation PatchTST divides by (times 10): of its ``num_positions x dim`` table."""
    return _moments(vaswani(range(num_positions), dim))[1]


def patchtst(positions: Sequence[int], dim: int, *, num_positions: int) -> list[list[mp.mpf]]:
    """PatchTST ``_init_pe`` (``sincos``): the Vaswani table ``T`` of rows ``0 .. N-1``, then
    ``(T - mean) / (10 std)`` over all ``N * dim`` entries, ``std`` with divisor ``N dim - 1``.

    ``T[p, 2k] = sin(p w_k)``, ``T[p, 2k+1] = cos(p w_k)``, ``w_k = exp(-2k ln(10000) / dim)``
    (``div_term``); even ``dim`` only (HF's ``1::2`` slice assignment fails for odd ``dim``).
    """
    if dim % 2 or dim < 2:
        msg = f"dim must be even for the patchtst convention; got {dim}"
        raise ValueError(msg)
    if num_positions < 1:
        msg = f"num_positions must be >= 1; got {num_positions}"
        raise ValueError(msg)
    table = vaswani(range(num_positions), dim)
    mean, std = _moments(table)
    out = []
    for p in positions:
        if not 0 <= int(p) < num_positions:
            msg = f"positions must lie in [0, {num_positions}); got {p}"
            raise ValueError(msg)
        out.append([(v - mean) / (10 * std) for v in table[int(p)]])
    return out


def fairseq_make_positions(token_is_real: Sequence[bool], padding_idx: int) -> list[int]:
    """fairseq ``make_positions``: real tokens count from ``padding_idx + 1``; pads get ``padding_idx``."""
    out, count = [], 0
    for real in token_is_real:
        count += bool(real)
        out.append(padding_idx + count if real else padding_idx)
    return out


def fairseq(positions: Sequence[int], dim: int, *, padding_idx: int = 1) -> list[list[mp.mpf]]:
    """fairseq's table at 0-based token positions: row ``p + padding_idx + 1``.

    fairseq numbers real tokens from ``padding_idx + 1`` (``make_positions``), so
    token ``p`` is encoded at angle ``(p + padding_idx + 1) w_k`` with
    ``w_k = exp(-k ln(10000) / (dim//2 - 1))`` (t2t's frequencies), layout
    ``[sin | cos]``, a zero column for odd ``dim``; position ``-1`` is the padding
    token (row ``padding_idx``, all zeros).  fairseq divides by zero for
    ``dim`` in {2, 3}; ``dim = 1`` is a single zero column.
    """
    half = dim // 2
    if half == 1:
        msg = f"dim must be 1 or at least 4 for the fairseq convention; got {dim}"
        raise ValueError(msg)
    step = mp.log(10000) / (half - 1) if half > 1 else mp.mpf(0)
    inv = [mp.exp(-k * step) for k in range(half)]
    rows = []
    for p in positions:
        row = int(p) + padding_idx + 1
        if row < 0:
            msg = f"positions must be >= -(padding_idx + 1) = {-(padding_idx + 1)}; got {p}"
            raise ValueError(msg)
        if row == padding_idx:
            rows.append([mp.mpf(0)] * dim)
            continue
        angles = [exact(row) * w for w in inv]
        rows.append([mp.sin(a) for a in angles] + [mp.cos(a) for a in angles] + [mp.mpf(0)] * (dim % 2))
    return rows


def marian(positions: Sequence[int], dim: int, *, base: float = 10000.0) -> list[list[mp.mpf]]:
    """Concatenated with Vaswani frequencies: ``ceil(dim/2)`` sines then ``floor(dim/2)`` cosines.

    HF ``MarianSinusoidalPositionalEmbedding`` (also Pegasus): ``out[:, :s] = sin(enc[:, 0::2])``,
    ``out[:, s:] = cos(enc[:, 1::2])`` with ``enc[p, j] = p / base**(2(j//2)/dim)``.
    """
    n_sin, n_cos = (dim + 1) // 2, dim // 2
    rows = []
    for p in positions:
        sin_part = [mp.sin(exact(p) * _vaswani_frequency(k, dim, base)) for k in range(n_sin)]
        cos_part = [mp.cos(exact(p) * _vaswani_frequency(k, dim, base)) for k in range(n_cos)]
        rows.append(sin_part + cos_part)
    return rows


def mlx(
    positions: Sequence[int],
    dim: int,
    *,
    min_freq: float = 0.0001,
    max_freq: float = 1.0,
    scale: float | None = None,
    cos_first: bool = False,
    full_turns: bool = False,
) -> list[list[mp.mpf]]:
    """MLX ``nn.SinusoidalPositionalEncoding`` applied to integer inputs ``positions``.

    ``n = dim/2``; ``t_k = 1 - k/(n-1)`` (``[1]`` when ``n == 1``);
    ``sigma_k = exp(t_k (ln max_freq - ln min_freq) + ln min_freq)`` (times ``2 pi`` with
    ``full_turns``); output ``scale * [sin | cos]`` (``[cos | sin]`` with ``cos_first``),
    ``scale = sqrt(2/dim)`` unless given.  MLX requires an even, positive ``dim``.
    """
    if dim <= 0 or dim % 2:
        msg = f"dim must be positive and even for the mlx convention; got {dim}"
        raise ValueError(msg)
    n = dim // 2
    lo, hi = mp.log(exact(min_freq)), mp.log(exact(max_freq))
    ts = [mp.mpf(1)] if n == 1 else [1 - mp.mpf(k) / (n - 1) for k in range(n)]
    # sigma = min_freq**(1 - t) * max_freq**t; the end points exactly (cospi(1/2) must be 0, not 1e-81)
    ends = {1: exact(max_freq), 0: exact(min_freq)}
    sigmas = [ends[int(t)] if t in (0, 1) else mp.exp(t * (hi - lo) + lo) for t in ts]
    factor = mp.sqrt(mp.mpf(2) / dim) if scale is None else exact(scale)
    rows = []
    for p in positions:
        if full_turns:  # angle 2 pi p sigma: sinpi/cospi keep exact zeros (sigma = 1/4 at p = 1)
            halves_turns = [2 * exact(p) * s for s in sigmas]
            sines, cosines = [mp.sinpi(a) for a in halves_turns], [mp.cospi(a) for a in halves_turns]
        else:
            angles = [exact(p) * s for s in sigmas]
            sines, cosines = [mp.sin(a) for a in angles], [mp.cos(a) for a in angles]
        halves = cosines + sines if cos_first else sines + cosines
        rows.append([factor * v for v in halves])
    return rows


def sinusoidal(positions: Sequence[int], dim: int, convention: str, **options: object) -> list[list[mp.mpf]]:
    """Dispatch on ``convention`` (one of :data:`CONVENTIONS`)."""
    functions = {
        "vaswani": vaswani,
        "tensor2tensor": tensor2tensor,
        "fairseq": fairseq,
        "marian": marian,
        "mlx": mlx,
        "patchtst": patchtst,
    }
    if convention not in functions:
        msg = f"convention must be one of {CONVENTIONS}; got {convention!r}"
        raise ValueError(msg)
    return functions[convention](positions, dim, **options)


def column_frequencies(dim: int, convention: str, **options: object) -> tuple[list[mp.mpf], mp.mpf]:
    """The angular frequency of each column of ``convention``'s table, and the log-span ``L``.

    Column ``j`` of the table is ``sin`` or ``cos`` of ``p' * w[j]`` (``p'`` from
    :func:`phase_positions`; ``w[j] = 0`` for a zero column).  ``L`` is the
    largest ``|ln|`` the convention's frequency formula exponentiates (``|ln base|``,
    or ``|ln max| + |ln min|`` of its timescales): an implementation that derives
    the frequencies in a float dtype with unit roundoff ``u`` makes them wrong by
    up to about ``(3 L + 6) u`` relative (the error model of the ``product``
    precision class; see the tolerance guide).
    """
    if convention in ("vaswani", "marian", "patchtst"):
        base = exact(options.get("base", 10000.0))
        if convention in ("vaswani", "patchtst"):
            freqs = [_vaswani_frequency(j // 2, dim, float(base)) for j in range(dim)]
        else:
            n_sin = (dim + 1) // 2
            freqs = [_vaswani_frequency(j if j < n_sin else j - n_sin, dim, float(base)) for j in range(dim)]
        return freqs, abs(mp.log(base))
    if convention in ("tensor2tensor", "fairseq"):
        lo = exact(options.get("min_timescale", 1.0)) if convention == "tensor2tensor" else mp.mpf(1)
        hi = exact(options.get("max_timescale", 1.0e4)) if convention == "tensor2tensor" else mp.mpf(10000)
        n = dim // 2
        steps = max(n - 1, 1)
        inv = [lo * mp.exp(-k * mp.log(hi / lo) / steps) for k in range(n)]
        # [cos | sin] (cos_first) has the same frequencies in each half
        return inv + inv + [mp.mpf(0)] * (dim % 2), abs(mp.log(hi / lo)) + abs(mp.log(lo))
    if convention == "mlx":
        n = dim // 2
        lo, hi = exact(options.get("min_freq", 0.0001)), exact(options.get("max_freq", 1.0))
        ts = [mp.mpf(1)] if n == 1 else [1 - mp.mpf(k) / (n - 1) for k in range(n)]
        sigmas = [mp.exp(t * (mp.log(hi) - mp.log(lo)) + mp.log(lo)) for t in ts]
        turn = 2 * mp.pi if options.get("full_turns") else 1
        return [turn * s for s in sigmas] * 2, abs(mp.log(lo)) + abs(mp.log(hi)) + (2 if turn != 1 else 0)
    msg = f"convention must be one of {CONVENTIONS}; got {convention!r}"
    raise ValueError(msg)


def phase_positions(positions: Sequence[int], convention: str, **options: object) -> list[int]:
    """The position each row's angles are taken at (fairseq counts from ``padding_idx + 1``).

    ``patchtst``: every row's value depends on the whole table (its mean and standard
    deviation), so each row is bounded by the table's largest angle, at row ``N - 1``.
    """
    if convention == "patchtst":
        top = int(options["num_positions"]) - 1  # type: ignore[call-overload]
        return [max(top, abs(int(p))) for p in positions]
    if convention == "fairseq":
        pad = int(options.get("padding_idx", 1))  # type: ignore[call-overload]
        return [0 if int(p) + pad + 1 == pad else int(p) + pad + 1 for p in positions]
    return [int(p) for p in positions]
