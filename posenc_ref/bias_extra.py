r"""Distance-kernel biases beyond ALiBi: Sandwich and KERPLE.

Both are functions of :math:`|k_j - q_i|` only, like the symmetric ALiBi form, so
they are valid with or without a causal mask.  The public implementations
(NVIDIA NeMo, chijames/KERPLE) apply them to causal decoders, where they zero
the distances of future keys (``tril``) before masking: on every unmasked entry
the values here are identical to theirs.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._angles import cos_sin_turns
from ._validate import check_choice, check_int, check_real
from .relative import _check_float_array, _check_position_pair, _float_dtype, _relative

__all__ = ["KERPLE_KINDS", "kerple_bias", "sandwich_bias"]

#: Kernels of :func:`kerple_bias`.
KERPLE_KINDS = ("log", "power")


def sandwich_bias(
    q_positions: Any,
    k_positions: Any,
    /,
    *,
    num_heads: int,
    dim: int,
    base: float = 10000.0,
    dtype: Any = None,
) -> Any:
    r"""Sandwich bias (Chi et al. 2023): a sinusoidal kernel of the distance, per head.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions (leading dimensions broadcast).
    num_heads : int
        Number of heads ``H``; head ``h = 1..H`` is divided by ``8 h / H``.
    dim : int
        The even width ``d'`` of the sinusoidal kernel (NeMo's ``hidden_size``).
    base : float
        Frequency base (10000).
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape ``[..., H, Lq, Lk]``
        Non-positive; zero on the diagonal.

    Raises
    ------
    TypeError
        For non-integer positions or options of the wrong type.
    ValueError
        For ``num_heads < 1``, a ``dim`` that is not a positive even integer, or
        ``base <= 1``.

    Notes
    -----
    .. math::
        b_{h,i,j} = \frac{\sum_{k=1}^{d'/2} \cos\bigl((j - i)\,\theta^{-2k/d'}\bigr) - d'/2}
                         {8h/H}

    Chi, Fan, Rudnicky & Ramadge (2023), "Dissecting Transformer Length
    Extrapolation via the Lens of Receptive Field Analysis",
    https://arxiv.org/abs/2212.10356; matches NeMo
    ``SandwichRelativePositionEmbedding`` (frequencies ``k = 1 .. d'/2``).  The
    sum runs as ``d'/2`` passes over the output, so memory stays at one output.
    Each angle is reduced to ``[-pi, pi]`` in turns (one rounding of
    ``(j - i) * theta**(-2k/d') / (2 pi)``) before the cosine, which is
    float64-accurate on every backend (MLX included).
    """
    xp = _compat.array_namespace(q_positions, k_positions)
    _check_position_pair(q_positions, k_positions, xp)
    num_heads = check_int(num_heads, "num_heads", minimum=1)
    dim = check_int(dim, "dim", minimum=1)
    if dim % 2:
        msg = f"dim must be a positive even integer; got {dim}"
        raise ValueError(msg)
    base = check_real(base, "base", exclusive_minimum=1.0)
    device = _compat.device(q_positions)
    dtype = _float_dtype(xp, device, dtype)
    work = _compat.compute_dtype(xp, device)
    rel = xp.astype(_relative(q_positions, k_positions), work)
    total = xp.zeros_like(rel)
    for k in range(1, dim // 2 + 1):
        turns = rel * (base ** (-2.0 * k / dim) / (2.0 * math.pi))
        total = total + cos_sin_turns(turns, xp=xp)[0]
    inv_scales = [num_heads / (8.0 * h) for h in range(1, num_heads + 1)]
    inv = _compat.asarray(inv_scales, xp=xp, dtype=work, device=device)
    bias = (total - dim / 2)[..., None, :, :] * inv[:, None, None]
    return xp.astype(bias, dtype)


def kerple_bias(q_positions: Any, k_positions: Any, r1: Any, r2: Any, /, *, kind: str = "log") -> Any:
    r"""KERPLE bias (Chi et al. 2022) for given per-head parameters ``r1``, ``r2``.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions (leading dimensions broadcast).
    r1, r2 : arrays, shape ``[..., H]``, real floating
        Per-head kernel parameters.  KERPLE keeps both positive by clamping them
        at 0.01 during training (power: ``r2 <= 2``); they are used as given here.
    kind : {"log", "power"}
        ``"log"``: :math:`-r_1 \ln(1 + r_2 |j - i|)` (``ParallelKerpleLog``:
        ``bias_p = r1``, ``bias_a = r2``).
        ``"power"``: :math:`-r_1 |j - i|^{r_2}` (``ParallelKerplePower``:
        ``bias_a = r1``, ``bias_p = r2``).

    Returns
    -------
    array, shape ``[..., H, Lq, Lk]``, promoted dtype of ``r1`` and ``r2``

    Raises
    ------
    TypeError
        For non-integer positions or non-float parameters.
    ValueError
        For an unknown ``kind`` or ``r1``/``r2`` of different shapes.

    Notes
    -----
    .. math::
        b^{\log}_{h,i,j} = -r_{1,h} \ln\bigl(1 + r_{2,h}\,|k_j - q_i|\bigr), \qquad
        b^{\mathrm{pow}}_{h,i,j} = -r_{1,h}\,|k_j - q_i|^{r_{2,h}}

    Chi, Fan, Ramadge & Rudnicky (2022), "KERPLE: Kernelized Relative Positional
    Embedding for Length Extrapolation", https://arxiv.org/abs/2205.09921; code
    chijames/KERPLE ``megatron/mpu/layers.py``.  NeMo's
    ``KERPLERelativePositionEmbedding`` uses the general
    :math:`-b \ln(1 + a |d|^p)`; with ``p = 1`` it is the log kernel here.
    """
    xp = _compat.array_namespace(q_positions, k_positions, r1, r2)
    _check_position_pair(q_positions, k_positions, xp)
    _check_float_array(r1, "r1", xp)
    _check_float_array(r2, "r2", xp)
    if tuple(r1.shape) != tuple(r2.shape):
        msg = f"r2 must have the shape of r1 {tuple(r1.shape)}; got {tuple(r2.shape)}"
        raise ValueError(msg)
    kind = check_choice(kind, "kind", KERPLE_KINDS)
    out_dtype = xp.result_type(r1.dtype, r2.dtype)
    work = _compat.compute_dtype(xp, _compat.device(r1))
    dist = xp.astype(xp.abs(_relative(q_positions, k_positions)), work)[..., None, :, :]
    a = xp.astype(r1, work)[..., :, None, None]
    p = xp.astype(r2, work)[..., :, None, None]
    bias = -a * (xp.log1p(p * dist) if kind == "log" else xp.pow(dist, p))
    return xp.astype(bias, out_dtype)
