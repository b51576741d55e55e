r"""ALiBi: attention with linear biases (Press, Smith & Lewis, ICLR 2022).

https://arxiv.org/abs/2108.12409; code: ofirpress/attention_with_linear_biases
(``fairseq/models/transformer.py``, ``get_slopes``).

Two bias forms are offered (:data:`ALIBI_FORMS`):

``"symmetric"``
    :math:`-m\,|j - i|`.  Valid with or without a causal mask (encoders, prefix
    LMs).  Matches MLX ``nn.ALiBi`` (``i`` from ``offset``), flash-attention's
    ``alibi_slopes`` (``i + Lk - Lq`` as the query position); it is also the
    bidirectional form of the ALiBi README FAQ and fairseq data2vec ``get_alibi``.
``"causal"``
    :math:`+m\,j`, the same in every row.  Under a causal mask it differs from the
    symmetric form by the per-row constant :math:`m\,i`, which softmax ignores;
    without a causal mask it is *wrong* (attention_with_linear_biases#9).  Matches
    the original code, HF BLOOM (padding-aware key index: pass
    ``(cumsum(mask) - 1) * mask`` as ``k_positions``) and Baichuan-13B exactly.
    MPT and keras-hub ``AlibiBias`` add :math:`m\,(j - (L_k - 1))`: pass
    ``k_positions - (Lk - 1)``.  HF Falcon's bias is the BLOOM bias computed as a
    bfloat16 product and then scaled by ``1/sqrt(head_dim)``: compare it with
    ``alibi_bias(..., form="causal") / sqrt(head_dim)`` at bfloat16 tolerance.
"""

from __future__ import annotations

import decimal
import functools
from fractions import Fraction
from typing import Any

from . import _compat
from ._validate import (
    HEADS_REASON,
    MAX_HEADS,
    broadcast_shapes,
    check_choice,
    check_device,
    check_float_array,
    check_int,
    check_namespace,
    check_real,
    checked_positions,
    namespace,
    output_dtype,
    value_range,
)

__all__ = ["ALIBI_FORMS", "alibi_bias", "alibi_slopes"]

#: Forms of :func:`alibi_bias`.
ALIBI_FORMS = ("symmetric", "causal")

_FORM_ALIASES = {
    "bidirectional": "use 'symmetric' (-m|i-j|)",
    "row": "use 'causal' (+m*j in every row)",
    "bloom": "BLOOM uses 'causal'",
    "mpt": "MPT uses 'causal' with k_positions - (Lk - 1)",
    "mlx": "MLX nn.ALiBi uses 'symmetric'",
}


def _slope_exponents(num_heads: int, max_bias: Fraction) -> list[Fraction]:
    """Exact exponents ``e`` with slope ``2**-e``, by the original recursion."""
    if num_heads & (num_heads - 1) == 0:
        return [max_bias * (i + 1) / num_heads for i in range(num_heads)]
    closest = 1 << (num_heads.bit_length() - 1)
    extra = _slope_exponents(2 * closest, max_bias)[0::2][: num_heads - closest]
    return _slope_exponents(closest, max_bias) + extra


_CONTEXT = decimal.Context(prec=40)  # 40 digits: 2**-e rounds once, correctly, to float64
_LN2 = _CONTEXT.ln(2)


@functools.lru_cache(maxsize=256)
def _slope_values(num_heads: int, max_bias: float) -> tuple[float, ...]:
    """The float64 slopes of ``num_heads`` heads (exact arithmetic, computed once per argument pair)."""
    return tuple(_power_of_half(e) for e in _slope_exponents(num_heads, Fraction(max_bias)))


def _power_of_half(e: Fraction) -> float:
    """``2**-e`` correctly rounded: exact for integer ``e``, else 40-digit decimal, rounded once."""
    if e.denominator == 1:
        return 2.0 ** -int(e)
    exponent = _CONTEXT.multiply(_CONTEXT.divide(-e.numerator, e.denominator), _LN2)
    return float(_CONTEXT.exp(exponent))


def alibi_slopes(
    num_heads: int,
    *,
    max_bias: float = 8.0,
    xp: Any = None,
    device: Any = None,
    dtype: Any = None,
) -> Any:
    r"""Per-head ALiBi slopes, for any number of heads.

    Parameters
    ----------
    num_heads : int
        Number of attention heads, at least 1.  Not necessarily a power of two.
    max_bias : float
        MPT's / keras-hub's ``alibi_bias_max``: the power-of-two slopes are
        :math:`2^{-\text{max\_bias}\cdot k/n}`.  8 (the default) is the paper's.
    xp : namespace, optional
        Array namespace of the result (NumPy when omitted).
    device : optional
        Device of the result (ignored on MLX).
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape ``[num_heads]``
        Slopes in head order.

    Raises
    ------
    TypeError
        For a non-integer ``num_heads``, a non-real ``max_bias`` or a non-float ``dtype``.
    ValueError
        If ``num_heads < 1`` or above ``2**15``, or ``max_bias <= 0``.

    Notes
    -----
    For :math:`n` a power of two, :math:`m_k = 2^{-\beta k / n}`, :math:`k = 1..n`,
    :math:`\beta` = ``max_bias``.  Otherwise, with :math:`c = 2^{\lfloor \log_2 n\rfloor}`,
    the slopes are the :math:`c` slopes for :math:`c` heads followed by the first
    :math:`n - c` odd-numbered slopes of the :math:`2c` set,
    :math:`2^{-\beta (2k-1)/(2c)}` (Press et al., ``get_slopes``).  HF BLOOM,
    Falcon, MPT (``p = 2**ceil(log2 n)``, ``cat(s[1::2], s[::2])[:n]``),
    keras-hub and MLX (since PR #3071) give the same values.  Each slope is
    :math:`2^{-e}` with the exponent :math:`e` exact (``max_bias`` taken as the
    exact value of its float) and rounded once to float64: exact for integer
    :math:`e`, else from 40-digit decimal arithmetic, so correctly rounded for
    any ``max_bias`` (a float ``2.0 ** -e`` rounds :math:`e` first and is off
    by an ulp for most slopes of ``max_bias=7.3``); the original's float64 ``start * ratio**i`` accumulates
    rounding (38 ulp off at 112 heads), which vanishes once rounded to float32.
    The pre-#3071 MLX rule :math:`2^{-8k/n}` agrees only for powers of two.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> s = alibi_slopes(12, xp=xp, dtype=xp.float32)  # 1/2, 1/4, ..., 1/256, 0.7071, 0.3536, 0.1768, 0.0884
    """
    num_heads = check_int(num_heads, "num_heads", minimum=1, maximum=MAX_HEADS, reason=HEADS_REASON)
    max_bias = check_real(max_bias, "max_bias", exclusive_minimum=0.0)
    xp = check_namespace(xp)
    device = check_device(device, xp)
    dtype = output_dtype(dtype, "dtype", xp, device)
    return _compat.asarray(list(_slope_values(num_heads, max_bias)), xp=xp, dtype=dtype, device=device)


#: Significand bits of the float dtypes slopes may have (IEEE binary16/32/64, bfloat16).
_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _product_dtype(q_positions: Any, k_positions: Any, slopes: Any, xp: Any, spans: list[Any]) -> Any:
    """The dtype to form ``m * d`` in: the slopes' own dtype when that is exact, else the compute dtype.

    An IEEE multiplication rounds the exact product once.  When every distance
    ``d`` is an integer exactly representable in the slopes' dtype
    (``|d| <= 2**p``), multiplying in that dtype gives the same correctly rounded
    ``m * d`` as the float64 product cast down, without a float64 temporary as
    large as the output (twice its size for float32).  ``spans`` are the
    positions' ``(min, max)`` where the validation already read them (else
    ``None``: read here).  Positions of lazy arrays are not read, so those keep
    the float64 path.
    """
    bits = _SIGNIFICAND_BITS.get(str(slopes.dtype).rsplit(".", 1)[-1])
    if bits is not None and bits < _SIGNIFICAND_BITS["float64"]:  # float64 slopes: the compute dtype
        spans = [
            value_range(x, xp) if s is None else s
            for x, s in zip((q_positions, k_positions), spans, strict=True)
        ]
        if all(span is not None for span in spans):
            (q_lo, q_hi), (k_lo, k_hi) = spans
            # the largest |k - q| (symmetric) and |k| (causal)
            largest = max(abs(k_hi - q_lo), abs(k_lo - q_hi), abs(k_hi), abs(k_lo))
            if largest <= 2**bits:
                return slopes.dtype
    return _compat.compute_dtype(xp, _compat.device(slopes))


def alibi_bias(q_positions: Any, k_positions: Any, slopes: Any, /, *, form: str = "symmetric") -> Any:
    r"""ALiBi bias ``[..., H, Lq, Lk]`` for the given positions and slopes.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions of queries and keys (leading dimensions broadcast).
    slopes : array, shape ``[..., H]``, real floating
        From :func:`alibi_slopes`; leading dimensions (e.g. ``[B, H]`` as in
        flash-attention) broadcast against those of the positions.
    form : {"symmetric", "causal"}
        See the module notes: ``"symmetric"`` is :math:`-m|j-i|`, ``"causal"`` is
        :math:`+m\,j` (valid only together with a causal mask).

    Returns
    -------
    array, shape ``[..., H, Lq, Lk]``, dtype of ``slopes``
        Add to the *scaled* logits (BLOOM, MPT, MLX, flash-attention).  Each entry
        is the product :math:`m \cdot d` rounded once to the slopes' dtype, so a
        block of a long sequence equals the same slice of the full matrix and
        costs the same as the first block.

    Raises
    ------
    TypeError
        For non-integer positions or non-float slopes.
    ValueError
        For an unknown ``form``, slopes without a head axis, leading
        dimensions that do not broadcast, or a position with
        :math:`|p| \ge 2^{62}` (read back on eager 64-bit arrays).

    Notes
    -----
    .. math::
        \text{symmetric: } b_{h,i,j} = -m_h\,|k_j - q_i|, \qquad
        \text{causal: } b_{h,i,j} = m_h\,k_j

    For :math:`k_j \le q_i`: causal :math:`=` symmetric :math:`+\, m_h q_i`.
    Positions of any integer dtype are widened to int64 before subtracting
    (see :func:`posenc_ref.relative_positions`), so ``uint8`` positions 0 and 1
    give the distance 1, not 255.

    Examples
    --------
    One head of slope :math:`m = 1/2`, queries and keys at positions 0, 1, 2:
    symmetric entries are :math:`-|j - i|/2`, causal ones :math:`k_j/2` in every row.

    >>> import numpy as np
    >>> pos = np.arange(3)
    >>> alibi_bias(pos, pos, np.asarray([0.5])).tolist()
    [[[0.0, -0.5, -1.0], [-0.5, 0.0, -0.5], [-1.0, -0.5, 0.0]]]
    >>> alibi_bias(pos, pos, np.asarray([0.5]), form="causal").tolist()
    [[[0.0, 0.5, 1.0], [0.0, 0.5, 1.0], [0.0, 0.5, 1.0]]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions, slopes=slopes)
    q, q_span = checked_positions(q_positions, "q_positions", xp, min_ndim=1)
    k, k_span = checked_positions(k_positions, "k_positions", xp, min_ndim=1)
    check_float_array(slopes, "slopes", xp, min_ndim=1)
    form = check_choice(form, "form", ALIBI_FORMS, aliases=_FORM_ALIASES)
    broadcast_shapes(q_positions=q.shape[:-1], k_positions=k.shape[:-1], slopes=slopes.shape[:-1])
    work = _product_dtype(q, k, slopes, xp, [q_span, k_span])
    m = xp.reshape(_compat.astype(slopes, work, xp=xp), (*slopes.shape, 1, 1))
    if form == "symmetric":
        distance = _compat.astype(-xp.abs(_compat.pairwise_difference(q, k)), work, xp=xp)
        bias = m * xp.reshape(distance, (*distance.shape[:-2], 1, *distance.shape[-2:]))
    else:  # m_h k_j: the keys broadcast over the query axis (one pass, no [Lq, Lk] temporary)
        keys = xp.reshape(_compat.astype(k, work, xp=xp), (*k.shape[:-1], 1, 1, k.shape[-1]))
        if q.shape != (1,):  # more than one query, or leading dimensions: broadcast against q (its chunks)
            keys = _compat.broadcast_against(keys, xp.reshape(q, (*q.shape[:-1], 1, q.shape[-1], 1)), xp=xp)
        bias = m * keys
    return _compat.astype(bias, slopes.dtype, xp=xp)
