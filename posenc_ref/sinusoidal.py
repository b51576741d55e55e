r"""Sinusoidal absolute position encodings, one named convention per real implementation.

Real code disagrees on the frequencies, the column layout, odd widths, padding
offsets and scaling; each disagreement is a named ``convention``
(:data:`SINUSOIDAL_CONVENTIONS`):

* ``vaswani``: ``base**(-2k/d)``, interleaved; the paper, XLM, DistilBERT,
  keras-hub ``SinePositionEncoding``.
* ``tensor2tensor``: geometric with an ``n - 1`` denominator, ``[sin | cos]``
  (``[cos | sin]`` with ``cos_first``); t2t ``get_timing_signal_1d`` (Whisper's
  ``sinusoids``; MusicGen's ``get_embedding`` with ``cos_first``).
* ``fairseq``: ``10000**(-k/(n-1))``, ``[sin | cos]``, padding offset and zero
  padding row; fairseq, HF Speech2Text, M2M100.
* ``marian``: ``base**(-2k/d)``, ``[sin | cos]`` with a ceil/floor split; HF
  Marian, Pegasus.
* ``mlx``: ``min_freq .. max_freq``, scaled ``[sin | cos]``;
  ``mlx.nn.SinusoidalPositionalEncoding``.
* ``patchtst``: the ``vaswani`` table of ``num_positions`` rows, standardised
  as a whole, ``(T - mean(T)) / (10 std(T))``; HF PatchTST and PatchTSMixer
  ``positional_encoding_type="sincos"``.

Angles are reduced modulo one turn with extra precision (``_angles``), so every
value is within about an ulp of the compute dtype at any position; a float32
table from float64 compute is the float64 value rounded once.
"""

from __future__ import annotations

import dataclasses
import decimal
import functools
import math
from decimal import Decimal
from typing import Any

from . import _compat, _validate
from ._angles import PI, exact_angles, power_turns
from ._row_blocks import in_row_blocks, row_layout

__all__ = ["SINUSOIDAL_CONVENTIONS", "sinusoidal"]

_CONTEXT = decimal.Context(prec=42)  # host-side frequencies: 42 digits cover 2**-139

SINUSOIDAL_CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq", "marian", "mlx", "patchtst")

_OPTIONS: dict[str, dict[str, object]] = {
    "vaswani": {"base": 10000.0},
    "tensor2tensor": {"min_timescale": 1.0, "max_timescale": 1.0e4, "cos_first": False},
    "fairseq": {"padding_idx": 1},
    "marian": {"base": 10000.0},
    "mlx": {"min_freq": 1.0e-4, "max_freq": 1.0, "scale": None, "cos_first": False, "full_turns": False},
    "patchtst": {"num_positions": None},
}


def _owners(option: str) -> str:
    return " and ".join(repr(c) for c, opts in _OPTIONS.items() if option in opts)


_ELSEWHERE = {
    "max_wavelength": "keras-hub's max_wavelength is 'base'",
    "start_index": "add the start index to positions instead",
    "offset": "add the offset to positions instead",
    **{opt: f"it is an option of {_owners(opt)}" for opts in _OPTIONS.values() for opt in opts},
}

_CONVENTION_ALIASES = {
    "t2t": "use 'tensor2tensor'",
    "whisper": "Whisper's sinusoids() is 'tensor2tensor' for even dim",
    "xlm": "XLM, DistilBERT and keras-hub use 'vaswani'",
    "distilbert": "XLM, DistilBERT and keras-hub use 'vaswani'",
    "keras": "keras-hub SinePositionEncoding uses 'vaswani'",
    "pegasus": "Pegasus uses 'marian'",
    "speech2text": "Speech2Text, M2M100 and NLLB use 'fairseq'",
    "m2m100": "Speech2Text, M2M100 and NLLB use 'fairseq'",
    "musicgen": "MusicGen is 'tensor2tensor' with cos_first=True",
    "patchtsmixer": "PatchTSMixer uses 'patchtst'",
}


@dataclasses.dataclass(frozen=True)
class _Plan:
    """Host-side description of a table: turn frequencies and how columns are laid out."""

    dim: int
    turns: tuple[Decimal, ...]  # turns per unit position, omega / (2 pi)
    interleaved: bool = False  # [sin w0, cos w0, sin w1, ...] cut to dim columns
    n_sin: int = 0  # concatenated layout: sin of the first n_sin frequencies ...
    n_cos: int = 0  # ... then cos of the first n_cos, then zero columns up to dim
    cos_first: bool = False
    scale: float | None = None


def _exp(x: Decimal) -> Decimal:
    return _CONTEXT.exp(x)


def _decimal(x: float) -> Decimal:
    """The decimal number ``x`` prints as: ``1e-4`` is 10**-4, not the nearest double."""
    return Decimal(repr(float(x)))


def _ln(x: float) -> Decimal:
    return _CONTEXT.ln(_decimal(x))


def _vaswani_turns(dim: int, count: int, base: float) -> tuple[Decimal, ...]:
    return power_turns(base, dim, range(count))


@functools.lru_cache(maxsize=128)
def _plan(convention: str, dim: int, options: tuple[tuple[str, Any], ...]) -> _Plan:
    """The table layout and exact turn frequencies of ``convention`` (inputs already checked)."""
    opt = dict(options)
    half = dim // 2
    with decimal.localcontext(_CONTEXT):
        if convention in ("vaswani", "patchtst"):
            base = opt.get("base", 10000.0)
            return _Plan(dim, _vaswani_turns(dim, dim - half, base), interleaved=True)
        if convention == "marian":
            return _Plan(dim, _vaswani_turns(dim, dim - half, opt["base"]), n_sin=dim - half, n_cos=half)
        if convention == "tensor2tensor":
            lo, hi = opt["min_timescale"], opt["max_timescale"]
            step = (_ln(hi) - _ln(lo)) / max(half - 1, 1)
            # t2t multiplies by min_timescale where 1/min_timescale was meant (tensor2tensor#1923).
            inv = [_decimal(lo) * _exp(-k * step) for k in range(half)]
            turns = tuple(w / (2 * PI) for w in inv)
            return _Plan(dim, turns, n_sin=half, n_cos=half, cos_first=opt["cos_first"])
        elif convention == "fairseq":
            inv = [_exp(-k * _ln(10000.0) / (half - 1)) for k in range(half)]
        else:  # mlx
            log_lo, log_hi = _ln(opt["min_freq"]), _ln(opt["max_freq"])
            one_zero = [Decimal(1)] if half == 1 else [1 - Decimal(k) / (half - 1) for k in range(half)]
            inv = [_exp(t * (log_hi - log_lo) + log_lo) for t in one_zero]
            turns = tuple(inv) if opt["full_turns"] else tuple(w / (2 * PI) for w in inv)
            scale = math.sqrt(2 / dim) if opt["scale"] is None else opt["scale"]
            return _Plan(dim, turns, n_sin=half, n_cos=half, cos_first=opt["cos_first"], scale=scale)
        return _Plan(dim, tuple(w / (2 * PI) for w in inv), n_sin=half, n_cos=half)


def _check_options(convention: str, dim: int, options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Validated options of ``convention`` (defaults filled in), as a hashable tuple."""
    opt = _validate.check_options(
        options, _OPTIONS[convention], f"convention {convention!r}", elsewhere=_ELSEWHERE
    )
    if "base" in opt:  # base**(-2k/d) <= 1 rad per position
        opt["base"] = _validate.check_real(opt["base"], "base", exclusive_minimum=1.0)
    for name in ("min_timescale", "max_timescale", "min_freq", "max_freq"):
        if name in opt:
            opt[name] = _validate.check_real(opt[name], name, exclusive_minimum=0.0)
    if convention == "fairseq":
        opt["padding_idx"] = _validate.check_int(
            opt["padding_idx"], "padding_idx", minimum=0, maximum=_validate.POSITION_LIMIT
        )
        if dim in (2, 3):
            rule = "1 or at least 4 for convention 'fairseq'"
            hint = "fairseq divides log(10000) by dim // 2 - 1 = 0"
            raise _validate.value_error("dim", rule, dim, hint=hint)
    if convention == "mlx":
        if dim % 2:
            raise _validate.value_error("dim", "even for convention 'mlx' (as MLX requires)", dim)
        if opt["scale"] is not None:
            opt["scale"] = _validate.check_real(opt["scale"], "scale")
        for name in ("cos_first", "full_turns"):
            _validate.check_bool(opt[name], name)
    if convention == "tensor2tensor":
        _validate.check_bool(opt["cos_first"], "cos_first")
    if convention == "patchtst":
        if opt["num_positions"] is None:
            hint = "PatchTST standardises a table of num_patches rows (+ 1 with use_cls_token)"
            rule = "an integer (the rows of the table) for convention 'patchtst'"
            raise _validate.type_error("num_positions", rule, None, hint=hint)
        opt["num_positions"] = _validate.check_int(
            opt["num_positions"], "num_positions", minimum=1, maximum=_PATCHTST_ROWS
        )
        if dim % 2:
            rule = "even for convention 'patchtst' (HF's cos columns 1::2 need dim / 2 frequencies)"
            raise _validate.value_error("dim", rule, dim)
    return tuple(sorted(opt.items()))


#: Most rows (and table elements) convention "patchtst" standardises: the whole table is built.
_PATCHTST_ROWS = 2**24
_PATCHTST_ELEMENTS = 2**28

#: Fastest frequency, in turns per position, that keeps phases float64-exact: turns are held to
#: 42 digits (relative error 5e-43), so at |p| < 2**62 the phase is off by < 2**20 * 2.3e-24 turns.
_MAX_TURNS = 2**20


def _check_frequencies(plan: _Plan, convention: str, options: dict[str, Any]) -> None:
    """A ``ValueError`` naming the option when a frequency exceeds :data:`_MAX_TURNS`."""
    if plan.turns and max(plan.turns) > _MAX_TURNS:
        if convention == "tensor2tensor":
            name = "min_timescale"
        else:
            name = "max_freq" if options["max_freq"] >= options["min_freq"] else "min_freq"
        rule = f"small enough that every frequency is at most 2**20 turns per position ({convention!r})"
        raise _validate.value_error(name, rule, options[name])


def _layout(plan: _Plan, sin: Any, cos: Any, *, xp: Any, dtype: Any) -> Any:
    """The columns of ``plan`` from per-frequency ``sin``/``cos`` (any leading shape), in ``dtype``."""
    lead = tuple(sin.shape[:-1])
    if plan.interleaved:
        pairs = xp.reshape(xp.stack([sin, cos], axis=-1), (*lead, 2 * len(plan.turns)))
        # an odd dim drops the last cos column; the copy makes the table contiguous again
        table = pairs if pairs.shape[-1] == plan.dim else xp.astype(pairs[..., : plan.dim], sin.dtype)
    else:
        blocks = [sin[..., : plan.n_sin], cos[..., : plan.n_cos]]
        if plan.cos_first:
            blocks.reverse()
        pad = plan.dim - plan.n_sin - plan.n_cos
        if pad:
            blocks.append(_compat.zeros((*lead, pad), xp=xp, dtype=sin.dtype, device=_compat.device(sin)))
        table = xp.concat(blocks, axis=-1)
    if plan.scale is not None:
        table = table * plan.scale
    return _compat.astype(table, dtype, xp=xp)


def _assemble(plan: _Plan, positions: Any, *, xp: Any, dtype: Any, out_dtype: Any, offset: int = 0) -> Any:
    """The ``positions.shape + (plan.dim,)`` table at positions ``positions + offset``.

    Computed in ``dtype``, returned in ``out_dtype``.
    """
    if not plan.turns:
        shape = (*positions.shape, plan.dim)
        return _compat.zeros(shape, xp=xp, dtype=out_dtype, device=_compat.device(positions))

    rows = row_layout(positions, xp)
    angles = exact_angles(rows, turns=plan.turns, xp=xp, dtype=dtype, out_dtype=out_dtype, offset=offset)

    def table(rows: slice | None) -> tuple[Any]:
        """The finished table of some positions: one pipeline, run in row blocks."""
        cos, sin = angles.cos_sin(rows)
        return (_layout(plan, sin, cos, xp=xp, dtype=out_dtype),)

    return in_row_blocks(table, positions, width=angles.width, xp=xp, elements=angles.block_elements)[0]


def _patchtst(plan: _Plan, positions: Any, rows: int, *, xp: Any, dtype: Any, out_dtype: Any) -> Any:
    """PatchTST's standardised table ``(T - mean) / (10 std)`` of ``rows`` rows, at ``positions``."""
    if rows * plan.dim > _PATCHTST_ELEMENTS:
        rule = f"small enough that the {rows} x {plan.dim} table has at most 2**28 entries"
        raise _validate.value_error("num_positions", rule, rows)
    rule = f"in [0, num_positions - 1 = {rows - 1}] for convention 'patchtst' (rows of its table)"
    _validate.check_position_range(positions, "positions", xp, low=0, high=rows - 1, rule=rule)
    dev = _compat.device(positions)
    every = _compat.arange(0, rows, xp=xp, dtype=positions.dtype, device=dev)
    table = _assemble(plan, every, xp=xp, dtype=dtype, out_dtype=dtype)  # [rows, dim]
    count = rows * plan.dim
    mean = xp.sum(table) / count
    centred = table - mean
    std = xp.sqrt(xp.sum(centred * centred) / (count - 1))  # torch.std: correction=1
    at = _assemble(plan, positions, xp=xp, dtype=dtype, out_dtype=dtype)  # the rows asked for, as above
    return _compat.astype((at - mean) / (std * 10), out_dtype, xp=xp)


def sinusoidal(
    positions: Any,
    /,
    dim: int,
    *,
    convention: str = "vaswani",
    dtype: Any = None,
    **options: Any,
) -> Any:
    r"""Sinusoidal position encodings of ``positions``, as one named implementation computes them.

    Each convention reproduces a real implementation's formula exactly,
    including its frequencies, column order, odd ``dim`` and padding rules:

    * ``"vaswani"`` (default): the paper's interleaved table
      ``[sin w0 p, cos w0 p, sin w1 p, ...]`` with ``w_k = base**(-2k/dim)``;
      column ``j`` uses exponent ``2*(j//2)/dim``, so an odd ``dim`` ends with
      a sine.  Matches HF XLM/Flaubert/DistilBERT ``create_sinusoidal_embeddings``
      and keras-hub ``SinePositionEncoding`` (``max_wavelength`` is ``base``).
      Options: ``base=10000.0``.
    * ``"tensor2tensor"``: ``[sin | cos]`` with ``n = dim // 2`` geometric
      frequencies ``w_k = min_timescale * exp(-k * log(max_timescale /
      min_timescale) / max(n - 1, 1))`` and a zero column for odd ``dim``
      (t2t ``get_timing_signal_1d``; Whisper's ``sinusoids`` for even ``dim``).
      The factor ``min_timescale`` is t2t's own quirk (``1 / min_timescale``
      was meant); it only matters when ``min_timescale != 1``.  ``cos_first``
      swaps the halves to ``[cos | sin]`` (the zero column stays last): HF
      MusicGen / MusicGen-Melody ``get_embedding``
      (``musicgen/modeling_musicgen.py:125-138``), which divides by
      ``dim // 2 - 1`` without t2t's guard, so it fails for ``dim`` 2 and 3.
      Options: ``min_timescale=1.0``, ``max_timescale=1.0e4``,
      ``cos_first=False``.
    * ``"fairseq"``: fairseq ``SinusoidalPositionalEmbedding`` (and HF
      Speech2Text, M2M100, NLLB-MoE, XGLM, FSMT): ``[sin | cos]`` with
      ``w_k = 10000**(-k / (n - 1))``, a zero column for odd ``dim``, **and
      fairseq's padding offset**: ``positions`` are 0-based token positions
      (as for every other convention) and fairseq's table row
      ``position + padding_idx + 1`` is returned, so token 0 is encoded at
      angle ``(padding_idx + 1) * w``; position ``-1`` is the padding token and
      gives the all-zero row.  ``learned.token_positions`` builds such
      positions from a padding mask.  fairseq's own table is
      ``sinusoidal(arange(rows) - padding_idx - 1, dim, convention="fairseq")``.
      ``dim`` 2 and 3 are rejected (fairseq divides by ``dim // 2 - 1 = 0``);
      ``dim = 1`` gives fairseq's single zero column.  Options: ``padding_idx=1``.
    * ``"marian"``: HF ``MarianSinusoidalPositionalEmbedding`` (and Pegasus):
      Vaswani frequencies, ``[sin | cos]``; sines take ``ceil(dim/2)``
      columns, cosines ``floor(dim/2)``.  Options: ``base=10000.0``.
    * ``"patchtst"``: HF PatchTST / PatchTSMixer ``_init_pe`` with
      ``positional_encoding_type="sincos"`` (``patchtst/modeling_patchtst.py:648-656``,
      ``patchtsmixer/modeling_patchtsmixer.py:99-107``): the ``"vaswani"``
      table ``T`` of rows ``0 .. N - 1`` (``N = num_positions``: PatchTST's
      ``num_patches``, plus one with ``use_cls_token``), standardised as a
      whole: ``(T - m) / (10 s)`` with ``m`` the mean of all ``N * dim``
      entries and ``s`` their *sample* standard deviation (``torch.std``'s
      default ``correction=1``: divisor ``N * dim - 1``), both over rows and
      columns together.  The value at a position depends on ``N``; positions
      must name rows ``0 <= p < N``.  ``dim`` must be even (HF's ``1::2``
      assignment fails otherwise).  Options: ``num_positions`` (required).
    * ``"mlx"``: ``mlx.nn.SinusoidalPositionalEncoding`` applied to the
      positions: ``scale * [sin | cos]`` (``[cos | sin]`` if ``cos_first``)
      with ``w_k = exp(t_k log max_freq + (1 - t_k) log min_freq)``,
      ``t_k = 1 - k / (n - 1)`` (``t_0 = 1`` when ``dim == 2``), times
      ``2 pi`` if ``full_turns``.  ``dim`` must be even, as MLX requires.
      Options: ``min_freq=1e-4``, ``max_freq=1.0``, ``scale=None``
      (``sqrt(2 / dim)``; an explicit ``0.0`` is kept), ``cos_first=False``,
      ``full_turns=False``.

    Parameters
    ----------
    positions : array of an integer dtype, any shape
        Token positions ``p``.  Negative positions are allowed (the formulas
        are defined for them) except with ``"fairseq"``, where a position must
        name a row of fairseq's table: ``p >= -(padding_idx + 1)``.
    dim : int
        Width ``d`` of each encoding, at least 1.
    convention : str
        One of :data:`SINUSOIDAL_CONVENTIONS`.
    dtype : real floating dtype of the positions' namespace, optional
        Output dtype.  Default: the compute dtype, float64 where the
        backend/device has it, else float32.  Values are computed in the
        compute dtype and rounded once to ``dtype``: a float32 table from
        float64 compute is within half a float32 ulp plus ``2**-49`` of the
        exact value at any position (plus half an ulp for ``"mlx"``'s scale).
        On NumPy, PyTorch CPU and array-api-strict, when the positions are
        many compared with ``sqrt(max - min)``, that float32 table is built
        from two small float64 tables by the angle-addition formulas
        (``posenc_ref._angles``, "Float32 answers"), at about the speed of
        the naive float32 ``sin(p w)``; without float64 (MLX GPU, JAX x32)
        the compute dtype is float32 and the error a few float32 ulp.
    **options
        The convention's options listed above; any other name is an error.

    Returns
    -------
    array
        Shape ``positions.shape + (dim,)``, dtype ``dtype``, on the positions'
        device and namespace.

    Raises
    ------
    TypeError
        ``positions`` is not an integer array, ``dtype`` is not a real floating
        dtype, an option is unknown for the convention, or has the wrong type.
    ValueError
        ``dim < 1`` or above ``2**15``; an unknown ``convention``; an option
        out of range (``base`` must be > 1, timescales and frequencies
        positive, and no frequency above ``2**20`` turns per position, where
        the 42-digit host frequencies would no longer give exact phases);
        ``dim`` in {2, 3} for ``"fairseq"`` or odd ``dim`` for ``"mlx"`` and
        ``"patchtst"``; a fairseq position before row 0; a ``"patchtst"``
        position outside ``[0, num_positions)``; positions with :math:`|p| \ge 2^{62}`;
        ``dtype`` float64 where it is unavailable.

    Notes
    -----
    With ``n`` frequencies ``w_k`` of the convention, each column is
    ``sin(p w_k)`` or ``cos(p w_k)`` (or zero):

    .. math::

        \mathrm{PE}_{\text{vaswani}}(p, 2k) = \sin\!\big(p\,\mathrm{base}^{-2k/d}\big), \qquad
        \mathrm{PE}_{\text{vaswani}}(p, 2k+1) = \cos\!\big(p\,\mathrm{base}^{-2k/d}\big)

    .. math::

        \mathrm{PE}_{\text{concat}}(p) = s\,\big[\sin(p w_0), \dots, \sin(p w_{n-1}),
        \cos(p w_0), \dots, \cos(p w_{n-1}), 0^{d - 2n}\big]

    The angle ``p w_k`` is reduced modulo ``2 pi`` exactly (the frequency is
    held to 42 digits, the position split into exact chunks), so the error is
    a few ulp of the compute dtype even at ``p = 2**40``; a plain float product
    would lose ``p * w * eps`` radians.  Real-valued options are read as the
    decimal numbers they print as (``min_freq=1e-4`` is exactly ``10**-4``), so
    with default options ``"mlx"`` has exactly the ``"tensor2tensor"``
    frequencies.

    References
    ----------
    Vaswani et al., "Attention Is All You Need", 2017, section 3.5.
    tensor2tensor ``layers/common_attention.py`` ``get_timing_signal_1d``;
    fairseq ``modules/sinusoidal_positional_embedding.py`` and
    ``utils.make_positions``; transformers ``models/marian/modeling_marian.py``;
    mlx ``python/mlx/nn/layers/positional_encoding.py``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import posenc_ref as pr
    >>> pe = pr.sinusoidal(xp.arange(4), 8)
    >>> pe.shape, pe.dtype
    ((4, 8), array_api_strict.float64)
    >>> row = pr.sinusoidal(xp.asarray([1]), 5, convention="marian")
    >>> [round(float(v), 6) for v in row[0, :]]
    [0.841471, 0.025116, 0.000631, 0.540302, 0.999685]

    MusicGen's ``[cos | sin]`` and PatchTST's standardised table of 3 rows:

    >>> row = pr.sinusoidal(xp.asarray([1]), 4, convention="tensor2tensor", cos_first=True)
    >>> [round(float(v), 6) for v in row[0, :]]
    [0.540302, 1.0, 0.841471, 0.0001]
    >>> pe = pr.sinusoidal(xp.arange(3), 2, convention="patchtst", num_positions=3)
    >>> [round(float(v), 6) for v in pe[:, 0]]
    [-0.084115, 0.063604, 0.075511]
    """
    xp = _validate.namespace(positions=positions)
    positions = _validate.check_positions(positions, "positions", xp)
    dim = _validate.check_dim(dim)
    convention = _validate.check_choice(
        convention, "convention", SINUSOIDAL_CONVENTIONS, aliases=_CONVENTION_ALIASES
    )
    checked = _check_options(convention, dim, options)
    dev = _compat.device(positions)
    dtype = _validate.output_dtype(dtype, "dtype", xp, dev)
    plan = _plan(convention, dim, checked)
    _check_frequencies(plan, convention, dict(checked))
    cdt = _compat.compute_dtype(xp, dev)
    if convention == "patchtst":
        return _patchtst(plan, positions, dict(checked)["num_positions"], xp=xp, dtype=cdt, out_dtype=dtype)
    if convention != "fairseq":
        return _assemble(plan, positions, xp=xp, dtype=cdt, out_dtype=dtype)
    shift = dict(checked)["padding_idx"] + 1
    rule = (
        f"at least -(padding_idx + 1) = {-shift} for convention 'fairseq' (fairseq row = position + {shift})"
    )
    _validate.check_position_range(positions, "positions", xp, low=-shift, high=None, rule=rule)
    table = _assemble(plan, positions, xp=xp, dtype=cdt, out_dtype=dtype, offset=shift)
    if xp.isdtype(positions.dtype, "signed integer"):
        keep = positions != -1  # -1: the padding token, fairseq's zero row
        if not _compat.values_known(keep) or not bool(xp.all(keep)):  # a pass over the table only if needed
            table = xp.where(xp.expand_dims(keep, axis=-1), table, xp.zeros_like(table))
    return table
