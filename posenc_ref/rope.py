r"""Rotary position embeddings: cos/sin tables, their application, and xPos scales.

Two memory layouts of the rotated pairs exist in the wild and are the same
function up to a fixed permutation of q/k channels:

- ``"half"``: channel ``i`` pairs with ``i + d/2`` (GPT-NeoX, HF ``rotate_half``,
  vLLM ``is_neox_style=True``, MLX ``traditional=False``, ggml NEOX);
- ``"interleaved"``: channel ``2i`` pairs with ``2i + 1`` (RoFormer, Meta's
  Llama reference, GPT-J, torchtune, vLLM ``is_neox_style=False``, MLX
  ``traditional=True``, ggml NORMAL).
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._angles import exact_angles
from ._mlx_float64 import exp
from ._row_blocks import in_row_blocks, row_layout
from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    check_choice,
    check_compute_dtype,
    check_dim,
    check_float_array,
    check_int,
    check_positions,
    check_real,
    dtype_name,
    namespace,
    output_dtype,
    text,
    type_error,
    value_error,
    value_range,
)
from .rope_scaling import RopeFrequencies

__all__ = ["LAYOUTS", "apply_rope", "rope_cos_sin", "xpos_scale"]

LAYOUTS = ("half", "interleaved")
_LAYOUT_ALIASES = {
    "neox": "GPT-NeoX and HF use 'half'",
    "gpt-neox": "GPT-NeoX and HF use 'half'",
    "rotate_half": "HF's rotate_half is 'half'",
    "gptj": "GPT-J uses 'interleaved'",
    "gpt-j": "GPT-J uses 'interleaved'",
    "traditional": "MLX traditional=True is 'interleaved'",
    "normal": "ggml's NORMAL mode is 'interleaved'",
    "meta": "Meta's reference Llama is 'interleaved'",
}


def _check_layout(layout: object) -> str:
    return check_choice(layout, "layout", LAYOUTS, aliases=_LAYOUT_ALIASES)


def _expand(pairs: Any, layout: str, xp: Any) -> Any:
    """Per-pair values ``[..., n]`` to per-channel ``[..., 2n]`` in ``layout``."""
    if layout == "half":
        return xp.concat([pairs, pairs], axis=-1)
    shape = (*pairs.shape[:-1], 2 * pairs.shape[-1])
    return xp.reshape(xp.stack([pairs, pairs], axis=-1), shape)


def _finish_table(table: Any, factor: float, layout: str, dtype: Any, xp: Any) -> Any:
    """A per-pair cos or sin table times ``factor``, in ``layout`` and ``dtype``."""
    if factor != 1.0:
        table = table * factor
    table = _expand(table, layout, xp)
    return _compat.astype(table, dtype, xp=xp)


def _rope_compute_dtype(freqs: RopeFrequencies, xp: Any, device: Any, requested: Any) -> Any:
    fxp = _compat.array_namespace(freqs.inv_freq)
    if requested is None and freqs.inv_freq.dtype == fxp.float32:  # the caller built float32 frequencies
        requested = xp.float32
    return check_compute_dtype(requested, "compute_dtype", xp, device)


def rope_cos_sin(
    positions: Any,
    /,
    freqs: RopeFrequencies,
    *,
    layout: str = "half",
    dtype: Any = None,
    compute_dtype: Any = None,
) -> tuple[Any, Any]:
    r"""Cos and sin tables of rotary position embeddings at integer positions.

    HF's ``XRotaryEmbedding.forward`` (``cat(freqs, freqs)``, times
    ``attention_scaling``) for ``layout="half"``; Meta/torchtune's repeated
    pairs for ``layout="interleaved"``.  Unlike those (and vLLM, MLX, ggml),
    which round the product ``m theta_i`` in float32, the phase is reduced
    modulo one turn with exact arithmetic (see Notes), so the tables stay
    accurate at millions of positions even in float32.

    Parameters
    ----------
    positions : array of an integer dtype, any shape
        Token positions ``m`` (KV-cache offsets, per-batch rows, single
        decoding steps).  Negative values rotate backwards.
    freqs : RopeFrequencies
        From :func:`posenc_ref.rope_frequencies` or
        :meth:`RopeFrequencies.from_inv_freq` (both carry exact turns and work
        with positions of any namespace), or built directly from an
        ``inv_freq`` array (its values, cast to the compute dtype, are then
        taken as exact and must share the namespace of ``positions``).
    layout : {"half", "interleaved"}, optional
        Channel order of the output.  Default ``"half"``.
    dtype : dtype, optional
        Output dtype; default the compute dtype.  A float32 answer from a
        float64 compute dtype is the float64 value rounded once (error at
        most half a float32 ulp plus ``2**-49``, times the attention factor
        and plus half an ulp where it is not 1); on NumPy, PyTorch CPU and
        array-api-strict, when the positions are many compared with
        ``sqrt(max - min)``, it is built from two small float64 tables by the
        angle-addition formulas (``posenc_ref._angles``, "Float32 answers"),
        at about the speed of the naive float32 ``cos(m theta)``.
    compute_dtype : dtype, optional
        ``xp.float32`` or ``xp.float64``.  Default: float32 if
        ``freqs.inv_freq`` is float32, else float64 where the backend/device
        has it (float32 on MLX GPU and JAX without x64).  ``xp.float32`` is
        the precise float32 path (error about 1e-7, see Notes), for devices
        without float64.

    Returns
    -------
    cos, sin : arrays of shape ``positions.shape + (2 * len(inv_freq),)``
        ``attention_factor * cos(m theta_i)`` and ``attention_factor *
        sin(m theta_i)``, on the device of ``positions``.

    Raises
    ------
    TypeError
        ``positions`` not an integer array, ``freqs`` not a RopeFrequencies,
        ``dtype`` not a floating dtype object (a string such as
        ``"float32"`` included: pass ``xp.float32``).
    ValueError
        Unknown ``layout`` (aliases such as ``"neox"`` are named in the
        message), float64 requested where it does not exist, positions with
        :math:`|p| \ge 2^{62}`.

    Notes
    -----
    .. math:: \cos_{m, c} = a \cos(m\theta_{i(c)}), \quad \sin_{m, c} = a \sin(m\theta_{i(c)}),

    with :math:`i(c) = c \bmod d/2` (half) or :math:`\lfloor c/2 \rfloor`
    (interleaved) and :math:`a` the attention factor.  The phase in turns
    :math:`m\theta_i/2\pi` is summed exactly from base-:math:`2^v` digits of
    :math:`m` (as many as the positions need; float64 :math:`v=23`, float32
    :math:`v=10`) times pieces of :math:`\theta_i/2\pi` on fixed binary grids,
    reduced to a quarter-turn count and a remainder of about :math:`1/8` turn,
    and only then multiplied by :math:`2\pi`.  Error: the rounding of the
    remainder's small tail terms and of :math:`2\pi r`, the backend's cos/sin
    near :math:`[-\pi/4, \pi/4]` and the multiplication by :math:`a`: a few ulp
    in float64 (measured <= 2 ulp up to :math:`m = 2^{24}`) and about 1e-7
    absolute in float32 compute (measured < 1.2e-7 up to :math:`2^{20}`).
    Float32 output from float64 compute (the default wherever float64
    exists): at most half a float32 ulp plus :math:`2^{-49}` at any position
    (measured: within the bound up to :math:`2^{62}`; ``tests/test_float32_answers.py``),
    plus half an ulp when the attention factor is not 1.  Frequencies
    given only as an ``inv_freq`` array are known to about twice the compute
    precision, which keeps phases accurate to about :math:`|m| = 2^{50}`
    in float64 and :math:`2^{21}` in float32.
    A float32 product :math:`m\theta` is off by up to 0.06 rad at
    :math:`m = 2^{20}` (measured cos/sin errors of 0.05), a float64 one by
    up to 2e-9 at :math:`2^{24}`; HF computes a float32 GEMM (TF32 under
    ``"high"`` matmul precision, huggingface/transformers#48428) and vLLM a
    float32 einsum.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from posenc_ref import rope_frequencies
    >>> f = rope_frequencies(8, xp=xp)
    >>> cos, sin = rope_cos_sin(xp.asarray([[0, 1, 2]]), f)
    >>> cos.shape
    (1, 3, 8)
    """
    layout = _check_layout(layout)
    if not isinstance(freqs, RopeFrequencies):
        rule = "a RopeFrequencies (from rope_frequencies or RopeFrequencies.from_inv_freq)"
        raise type_error("freqs", rule, freqs)
    # exact turns work with any namespace; inv_freq values alone must live where the positions do
    xp = namespace(
        positions=positions, **({} if freqs.turns is not None else {"freqs.inv_freq": freqs.inv_freq})
    )
    positions = check_positions(positions, "positions", xp)
    device = _compat.device(positions)
    dtype_c = _rope_compute_dtype(freqs, xp, device, compute_dtype)
    out_dtype = dtype_c if dtype is None else output_dtype(dtype, "dtype", xp, device)

    rows = row_layout(positions, xp)
    if freqs.turns is not None:
        given = {"turns": freqs.turns}
    else:
        given = {"inv_freq": _compat.asarray(freqs.inv_freq, xp=xp, dtype=dtype_c, device=device)}
    angles = exact_angles(rows, xp=xp, dtype=dtype_c, out_dtype=out_dtype, **given)

    def tables(rows: slice | None) -> tuple[Any, ...]:
        """The finished cos and sin tables of some positions: one pipeline, run in row blocks."""
        return tuple(
            _finish_table(t, freqs.attention_factor, layout, out_dtype, xp) for t in angles.cos_sin(rows)
        )

    cos, sin = in_row_blocks(tables, positions, width=angles.width, xp=xp, elements=angles.block_elements)
    return cos, sin


def _check_rope_shapes(x: Any, cos: Any, sin: Any) -> int:
    """The rotary width ``R``; errors unless cos/sin fit ``x``."""
    if tuple(cos.shape) != tuple(sin.shape):
        raise value_error("sin", f"of the shape of cos {tuple(cos.shape)}", text(f"shape {tuple(sin.shape)}"))
    width, channels = cos.shape[-1], x.shape[-1]
    if width % 2 or width > channels:
        raise value_error("cos.shape[-1]", f"even and <= x.shape[-1] = {channels}", width)
    lead_x, lead_c = tuple(x.shape[:-1]), tuple(cos.shape[:-1])
    fits = len(lead_c) <= len(lead_x) and all(
        c in (1, n) for c, n in zip(reversed(lead_c), reversed(lead_x), strict=False)
    )
    if not fits:
        raise value_error("cos.shape[:-1]", f"broadcastable to x.shape[:-1] = {lead_x}", lead_c)
    return width


def _rotate_pairs(part: Any, swapped: Any, cos: Any, signed_sin: Any) -> Any:
    """``part * cos + swapped * signed_sin``, with ``swapped`` (a temporary of ours) reused.

    The array API's in-place operators (``*=``, ``+=``) write into ``swapped`` and the
    product ``part * cos`` instead of allocating two more arrays the size of ``x``: the
    same 9 passes over memory, but 2 new arrays instead of 4, and a fresh large array
    costs page faults about as dear as a pass (NumPy, half layout: 4.05 - 4.36x one copy
    of ``x`` against 4.75 - 5.21x; ``scripts/asv_ratios.py``).  The bits are the same,
    since the rounding of each product and of the sum is unchanged.  JAX arrays are
    immutable, so there the operators rebind; autograd (torch) records the in-place
    products correctly.  ``part`` and the tables, which may be the caller's arrays, are
    only read (``tests/test_rope.py`` checks both on every backend).
    """
    swapped *= signed_sin
    rotated = part * cos
    rotated += swapped
    return rotated


def apply_rope(x: Any, cos: Any, sin: Any, /, *, layout: str = "half") -> Any:
    r"""Rotate the first ``cos.shape[-1]`` channels of ``x`` by the RoPE angles.

    ``layout="half"`` is HF's ``q * cos + rotate_half(q) * sin``;
    ``"interleaved"`` is Meta's complex multiplication on adjacent pairs.
    Channels past ``cos.shape[-1]`` pass through unchanged (partial rotary,
    as HF ``partial_rotary_factor``, vLLM ``rotary_dim``, MLX ``dims``).

    Parameters
    ----------
    x : array of a real floating dtype, shape ``[..., S, D]``
        Queries or keys.
    cos, sin : arrays of shape ``[..., S, R]``, ``R`` even and ``<= D``
        From :func:`rope_cos_sin` in the same ``layout``; leading axes must
        broadcast to those of ``x`` (add a head axis, ``cos[:, None]``, for
        ``x`` of shape ``[B, H, S, D]``).
    layout : {"half", "interleaved"}, optional
        Default ``"half"``.

    Returns
    -------
    array
        Same shape, dtype and device as ``x``.  The rotation is computed in
        the promoted dtype of ``x`` and ``cos`` (so float16 inputs with
        float32 tables rotate in float32, like MLX's kernel and torchtune),
        then cast back to ``x.dtype``.

    Raises
    ------
    TypeError
        ``x``, ``cos`` or ``sin`` not of a real floating dtype.
    ValueError
        Shapes that do not fit; unknown ``layout``.

    Notes
    -----
    For each pair :math:`(a, b)` of channels (``(i, i + R/2)`` or ``(2i, 2i+1)``):

    .. math:: (a, b) \mapsto (a\cos\phi - b\sin\phi,\; b\cos\phi + a\sin\phi).

    References
    ----------
    Su et al., RoFormer, arXiv:2104.09864.

    Examples
    --------
    One frequency :math:`\theta = 1` at position 1 is the angle :math:`\phi = 1`:
    the unit vector :math:`(1, 0)` turns into :math:`(\cos 1, \sin 1)`, and a
    third channel past the rotary width passes through.

    >>> import math
    >>> import numpy as np
    >>> from posenc_ref import RopeFrequencies
    >>> cos, sin = rope_cos_sin(np.asarray([1]), RopeFrequencies.from_inv_freq([1.0]))
    >>> y = apply_rope(np.asarray([[1.0, 0.0, 7.0]]), cos, sin)
    >>> [round(float(v), 6) for v in y[0]]
    [0.540302, 0.841471, 7.0]
    >>> round(math.cos(1), 6), round(math.sin(1), 6)
    (0.540302, 0.841471)
    """
    layout = _check_layout(layout)
    xp = namespace(x=x, cos=cos, sin=sin)
    for name, arr in (("x", x), ("cos", cos), ("sin", sin)):
        check_float_array(arr, name, xp, min_ndim=1)
    width = _check_rope_shapes(x, cos, sin)
    work = xp.result_type(x.dtype, cos.dtype, sin.dtype)
    part = _compat.astype(x[..., :width], work, xp=xp)
    cos, sin = _compat.astype(cos, work, xp=xp), _compat.astype(sin, work, xp=xp)
    if layout == "half":
        half = width // 2
        # HF's x * cos + rotate_half(x) * sin with rotate_half(x) = [-x2, x1]; the sign
        # moves onto the small sin table (exact), so x is swapped once and never negated.
        swapped = xp.concat([part[..., half:], part[..., :half]], axis=-1)
        signed_sin = xp.concat([-sin[..., :half], sin[..., half:]], axis=-1)
    else:
        # Pairs (2i, 2i+1): (a c - b s, b c + a s) = [a, b] * [c, c] + [b, a] * [-s, s].
        pairs = (*part.shape[:-1], width)
        swapped = xp.reshape(xp.stack([part[..., 1::2], part[..., 0::2]], axis=-1), pairs)
        c, s = cos[..., 0::2], sin[..., 0::2]
        cos = xp.reshape(xp.stack([c, c], axis=-1), (*c.shape[:-1], width))
        signed_sin = xp.reshape(xp.stack([-s, s], axis=-1), (*s.shape[:-1], width))
    rotated = _rotate_pairs(part, swapped, cos, signed_sin)
    rotated = _compat.astype(rotated, x.dtype, xp=xp)
    if width == x.shape[-1]:
        return rotated
    return xp.concat([rotated, x[..., width:]], axis=-1)


def _check_xpos_range(
    shifted: Any, scale_base: float, log_zeta: float, dtype: Any, offset: int, xp: Any
) -> None:
    """A ``ValueError`` when a scale ``exp(+-(m - c)/B ln zeta_0)`` would overflow ``dtype`` (read back)."""
    span = value_range(shifted, xp)
    ceiling = math.log(float(xp.finfo(dtype).max))
    if span is not None and log_zeta and max(-span[0], span[1]) / scale_base * log_zeta > ceiling:
        limit = ceiling * scale_base / log_zeta
        rule = (
            f"within {limit:.6g} of offset={offset} (farther, the xPos scales overflow {dtype_name(dtype)})"
        )
        raise value_error("positions", rule, text(f"values from {span[0] + offset} to {span[1] + offset}"))


def xpos_scale(
    positions: Any,
    /,
    dim: int,
    *,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    offset: int = 0,
    layout: str = "half",
    dtype: Any = None,
) -> tuple[Any, Any]:
    r"""xPos per-channel scales for queries and keys (Sun et al. 2022).

    Multiply the rotated queries by ``q_scale`` and the rotated keys by
    ``k_scale``; then each pair's contribution to :math:`q_n \cdot k_m` is
    damped by :math:`\zeta_i^{(n-m)/B}`.  Only lucidrains'
    rotary-embedding-torch (``use_xpos=True``) ships this among the libraries
    read here; ggml removed its xPos mode.

    Parameters
    ----------
    positions : array of an integer dtype, any shape
        Positions of the tokens (the same array for q and k scales).
    dim : int
        Rotated channels (even), as ``cos.shape[-1]``.
    scale_base : float, optional
        :math:`B`, > 0.  Default 512 (paper and lucidrains).
    gamma : float, optional
        :math:`\gamma > 0`.  Default 0.4.
    offset : int, optional
        Centre :math:`c` of the exponent, :math:`(m - c)/B`.  The paper uses
        0; lucidrains uses ``seq_len // 2`` and torchscale ``(len + offset) //
        2`` to keep the scales near 1.  The product :math:`q_n \cdot k_m` does
        not depend on it.
    layout : {"half", "interleaved"}, optional
        Channel order, as for :func:`rope_cos_sin`.
    dtype : dtype, optional
        Output dtype; default float64 where available, else float32.

    Returns
    -------
    q_scale, k_scale : arrays of shape ``positions.shape + (dim,)``
        :math:`\zeta_i^{(m-c)/B}` and :math:`\zeta_i^{-(m-c)/B}`.

    Raises
    ------
    TypeError
        ``positions`` not an integer array; ``dim`` not an integer.
    ValueError
        ``dim`` odd or above 2**15, ``scale_base <= 0``, ``gamma <= 0``,
        ``|offset| >= 2**62``, unknown ``layout``, positions whose scales
        would overflow the output dtype.

    Notes
    -----
    .. math:: \zeta_i = \frac{2i/d + \gamma}{1 + \gamma}, \quad i < d/2,

    computed as :math:`\exp(\pm (m-c)/B \cdot \ln\zeta_i)` (float64-accurate
    on MLX too, whose own float64 ``exp`` has float32 accuracy).  Far from the
    centre the scales overflow (:math:`|m - c| > B \ln(\text{max}) /
    |\ln\zeta_0|`, about :math:`710 B / |\ln\zeta_0|` in float64): such
    positions are refused (checked on eager arrays), which is why
    implementations centre them.

    References
    ----------
    Sun et al., "A Length-Extrapolatable Transformer", arXiv:2212.10554.

    Examples
    --------
    ``dim=4`` with :math:`\gamma = 0.4` has :math:`\zeta = (0.4/1.4,\; 0.9/1.4) =
    (2/7, 9/14)`; at :math:`m = B = 512` the query scales are :math:`\zeta`
    and the key scales :math:`1/\zeta = (3.5, 14/9)` (``"half"`` layout: each
    pair's value twice), at :math:`m = 0` all ones.

    >>> import numpy as np
    >>> q_scale, k_scale = xpos_scale(np.asarray([0, 512]), 4)
    >>> np.round(q_scale, 6).tolist()
    [[1.0, 1.0, 1.0, 1.0], [0.285714, 0.642857, 0.285714, 0.642857]]
    >>> np.round(k_scale, 6).tolist()
    [[1.0, 1.0, 1.0, 1.0], [3.5, 1.555556, 3.5, 1.555556]]
    """
    layout = _check_layout(layout)
    dim = check_dim(dim, even=True)
    scale_base = check_real(scale_base, "scale_base", exclusive_minimum=0.0)
    gamma = check_real(gamma, "gamma", exclusive_minimum=0.0)
    offset = check_int(
        offset, "offset", minimum=1 - POSITION_LIMIT, maximum=POSITION_LIMIT - 1, reason=POSITION_REASON
    )
    xp = namespace(positions=positions)
    positions = check_positions(positions, "positions", xp)
    device = _compat.device(positions)
    out = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    log_zeta = [math.log((2 * i / dim + gamma) / (1 + gamma)) for i in range(dim // 2)]
    log_zeta_arr = _compat.asarray(log_zeta, xp=xp, dtype=work, device=device)
    shifted = positions - offset if offset else positions  # int64: |p - c| < 2**63, no wrap
    _check_xpos_range(shifted, scale_base, max(abs(v) for v in log_zeta), out, offset, xp)
    power = _compat.astype(xp.expand_dims(shifted, axis=-1), work, xp=xp) / scale_base
    q_scale, k_scale = exp(power * log_zeta_arr, xp=xp), exp(-power * log_zeta_arr, xp=xp)
    q_scale, k_scale = (_compat.astype(_expand(s, layout, xp), out, xp=xp) for s in (q_scale, k_scale))
    return q_scale, k_scale
