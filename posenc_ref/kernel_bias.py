r"""Kernel biases: attention biases that are kernels of the relative distance.

Both functions here add to every logit a per-head function of the distance
:math:`|k_j - q_i|` alone, a (conditionally) positive-definite kernel of the
relative position, as symmetric ALiBi does with a linear one:

* :func:`sandwich_bias`, Sandwich (Chi, Fan, Rudnicky & Ramadge, 2023,
  https://arxiv.org/abs/2212.10356): a sum of cosines of the distance, the
  inner product of two sinusoidal position embeddings;
* :func:`kerple_bias`, KERPLE (Chi, Fan, Ramadge & Rudnicky, 2022,
  https://arxiv.org/abs/2205.09921): the logarithmic kernel
  :math:`-r_1 \ln(1 + r_2 |d|)` or the power kernel :math:`-r_1 |d|^{r_2}`.

Depending on the distance only, they are valid with or without a causal mask.
The public implementations (NVIDIA NeMo, chijames/KERPLE) apply them to causal
decoders, where they zero the distances of future keys (``tril``) before
masking: on every unmasked entry the values here are identical to theirs.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from . import _compat
from ._angles import Reduction, power_turns, reduction
from ._row_blocks import in_row_blocks, row_layout
from ._validate import (
    HEADS_REASON,
    MAX_HEADS,
    broadcast_shapes,
    check_choice,
    check_dim,
    check_finite_values,
    check_float_array,
    check_int,
    check_position_pair,
    check_real,
    namespace,
    output_dtype,
    text,
    value_error,
)

__all__ = ["KERPLE_KINDS", "kerple_bias", "sandwich_bias"]

#: Kernels of :func:`kerple_bias`.
KERPLE_KINDS = ("log", "power")

_GROUP_ELEMENTS = 2**22  # Sandwich: distances x frequencies per pass of the phase reduction


@functools.lru_cache(maxsize=32)
def _sandwich_turns(dim: int, base: float) -> tuple[Any, ...]:
    """``base**(-2k/dim) / (2 pi)`` for ``k = 1 .. dim/2``, exact to 42 digits."""
    return power_turns(base, dim, range(1, dim // 2 + 1))


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
        For ``num_heads`` outside ``[1, 2**15]``, a ``dim`` that is not an even
        integer in ``[2, 2**15]``, ``base <= 1``, or positions with
        :math:`|p| \ge 2^{62}` (read back on eager 64-bit arrays).

    Notes
    -----
    .. math::
        b_{h,i,j} = \frac{\sum_{k=1}^{d'/2} \cos\bigl((j - i)\,\theta^{-2k/d'}\bigr) - d'/2}
                         {8h/H}

    Chi, Fan, Rudnicky & Ramadge (2023), "Dissecting Transformer Length
    Extrapolation via the Lens of Receptive Field Analysis",
    https://arxiv.org/abs/2212.10356; matches NeMo
    ``SandwichRelativePositionEmbedding`` (frequencies ``k = 1 .. d'/2``).
    Each cosine is evaluated by the library's exact phase reduction (the
    frequencies held to 42 digits, the integer distance split into exact
    digits, as for :func:`posenc_ref.rope_cos_sin`), so every term is within
    a few ulp at any distance up to :math:`2^{63}`, on every backend (MLX
    included); the sum of the :math:`d'/2` terms adds at most about
    :math:`d'/2` ulp of :math:`d'/2` before the division by :math:`8h/H`.  The
    frequencies are processed in groups that keep temporaries near
    :math:`2^{22}` elements.

    Examples
    --------
    With ``dim=2`` the kernel has the single frequency ``base**-1``; ``base=2``
    makes it :math:`1/2`, so for a query at 2 and keys at 2, 1, 0 head ``h`` of
    ``H = 2`` holds :math:`(\cos(d/2) - 1) / (4h)` for :math:`d = 2, 1, 0`:
    :math:`(\cos 1 - 1)/4 = -0.114924`, :math:`(\cos 0.5 - 1)/4 = -0.030604`.

    >>> import numpy as np
    >>> b = sandwich_bias(np.asarray([2]), np.arange(3), num_heads=2, dim=2, base=2.0)
    >>> np.round(b, 6).tolist()
    [[[-0.114924, -0.030604, 0.0]], [[-0.057462, -0.015302, 0.0]]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions)
    q, k = check_position_pair(q_positions, k_positions, xp)
    num_heads = check_int(num_heads, "num_heads", minimum=1, maximum=MAX_HEADS, reason=HEADS_REASON)
    dim = check_dim(dim, even=True)
    base = check_real(base, "base", exclusive_minimum=1.0)
    device = _compat.device(q_positions)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    rel = _compat.pairwise_difference(q, k)
    turns = _sandwich_turns(dim, base)
    group = max(1, _GROUP_ELEMENTS // max(1, math.prod(rel.shape)))

    total = None
    for start in range(0, len(turns), group):
        angles = reduction(row_layout(rel, xp), turns=turns[start : start + group], xp=xp, dtype=work)

        def cos_sum(rows: slice | None, angles: Reduction = angles) -> tuple[Any]:
            """``sum_k cos(omega_k r)`` over this group's frequencies: one pipeline, run in row blocks."""
            return (xp.sum(angles.cos_sin(rows)[0], axis=-1),)

        part = in_row_blocks(cos_sum, rel, width=angles.width, xp=xp)[0]
        total = part if total is None else total + part
    inv_scales = [num_heads / (8.0 * h) for h in range(1, num_heads + 1)]
    inv = _compat.asarray(inv_scales, xp=xp, dtype=work, device=device)
    bias = (total - dim / 2)[..., None, :, :] * inv[:, None, None]
    return _compat.astype(bias, dtype, xp=xp)


def kerple_bias(q_positions: Any, k_positions: Any, r1: Any, r2: Any, /, *, kind: str = "log") -> Any:
    r"""KERPLE bias (Chi et al. 2022) for given per-head parameters ``r1``, ``r2``.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions (leading dimensions broadcast).
    r1, r2 : arrays, shape ``[..., H]``, real floating
        Per-head kernel parameters, finite and non-negative (checked on eager
        arrays; a negative ``r2`` would make the log kernel NaN).  KERPLE keeps
        both positive by clamping them at 0.01 during training (power:
        ``r2 <= 2``); they are used as given here.
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
        For an unknown ``kind``, ``r1``/``r2`` of different shapes, or negative
        or non-finite parameters.

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

    Examples
    --------
    A query at 3 and keys at 0, 1, 2 (distances 3, 2, 1): the log kernel with
    :math:`r_1 = r_2 = 1` gives :math:`-\ln 4, -\ln 3, -\ln 2`, the power kernel
    with :math:`r_1 = 1/2, r_2 = 2` gives :math:`-d^2/2`.

    >>> import numpy as np
    >>> q, k = np.asarray([3]), np.arange(3)
    >>> b = kerple_bias(q, k, np.asarray([1.0]), np.asarray([1.0]))
    >>> np.round(b, 6).tolist()
    [[[-1.386294, -1.098612, -0.693147]]]
    >>> kerple_bias(q, k, np.asarray([0.5]), np.asarray([2.0]), kind="power").tolist()
    [[[-4.5, -2.0, -0.5]]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions, r1=r1, r2=r2)
    q, k = check_position_pair(q_positions, k_positions, xp)
    for name, r in (("r1", r1), ("r2", r2)):
        check_float_array(r, name, xp, min_ndim=1)
        check_finite_values(r, name, xp, minimum=0.0)
    if tuple(r1.shape) != tuple(r2.shape):
        raise value_error("r2", f"of the shape of r1 {tuple(r1.shape)}", text(f"shape {tuple(r2.shape)}"))
    kind = check_choice(kind, "kind", KERPLE_KINDS)
    broadcast_shapes(q_positions=q.shape[:-1], k_positions=k.shape[:-1], r1=r1.shape[:-1])
    out_dtype = xp.result_type(r1.dtype, r2.dtype)
    work = _compat.compute_dtype(xp, _compat.device(r1))
    dist = _compat.astype(xp.abs(_compat.pairwise_difference(q, k)), work, xp=xp)[..., None, :, :]
    a = _compat.astype(r1, work, xp=xp)[..., :, None, None]
    p = _compat.astype(r2, work, xp=xp)[..., :, None, None]
    bias = -a * (xp.log1p(p * dist) if kind == "log" else xp.pow(dist, p))
    return _compat.astype(bias, out_dtype, xp=xp)
