"""A plain reference attention that composes every positional scheme.

RoPE rotates ``q`` and ``k`` before the call; ALiBi, T5, Shaw, Sandwich and
KERPLE arrive as ``bias``; NoPE, sliding-window and chunked layers as ``mask``.
Nothing is fused or tiled: the point is a trustworthy result to compare kernels
against, computed in float64 where the backend has it.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._mlx_float64 import exp
from ._validate import (
    broadcast_shapes,
    check_bool,
    check_float_array,
    check_mask_array,
    check_real,
    namespace,
    text,
    value_error,
)

__all__ = ["attention"]


def _check_shapes(q: Any, k: Any, v: Any, bias: Any, mask: Any) -> None:
    if q.shape[-1] != k.shape[-1]:
        rule = f"of shape [..., Lk, {q.shape[-1]}] (the head dimension of q)"
        raise value_error("k", rule, text(f"shape {tuple(k.shape)}"))
    if k.shape[-2] != v.shape[-2]:
        rule = f"of shape [..., {k.shape[-2]}, Dv] (as many rows as k)"
        raise value_error("v", rule, text(f"shape {tuple(v.shape)}"))
    lead = broadcast_shapes(q=q.shape[:-2], k=k.shape[:-2], v=v.shape[:-2])
    logits = (*lead, q.shape[-2], k.shape[-2])
    for name, x in (("bias", bias), ("mask", mask)):
        if x is not None and broadcast_shapes(logits=logits, **{name: tuple(x.shape)}) != logits:
            raise value_error(
                name, f"broadcastable to the logits' shape {logits}", text(f"shape {tuple(x.shape)}")
            )


def _masked_softmax(logits: Any, mask: Any, xp: Any) -> Any:
    """Softmax over the last axis; masked entries get 0, fully masked rows are all 0."""
    if mask is not None:
        logits = xp.where(mask, logits, -math.inf)
    row_max = xp.max(logits, axis=-1, keepdims=True)
    row_max = xp.where(row_max == -math.inf, 0.0, row_max)
    weights = exp(logits - row_max, xp=xp)  # float64-accurate on MLX too
    total = xp.sum(weights, axis=-1, keepdims=True)
    return weights / xp.where(total == 0.0, 1.0, total)


def attention(
    q: Any,
    k: Any,
    v: Any,
    /,
    *,
    bias: Any = None,
    mask: Any = None,
    scale: float | None = None,
    return_weights: bool = False,
) -> Any:
    r"""Reference scaled dot-product attention with an optional bias and mask.

    Parameters
    ----------
    q : array, shape ``[..., Lq, D]``, real floating
    k : array, shape ``[..., Lk, D]``, real floating
    v : array, shape ``[..., Lk, Dv]``, real floating
        Leading dimensions broadcast (``[B, H, L, D]``, or ``[B, 1, L, D]`` keys
        shared by heads).
    bias : array broadcastable to ``[..., Lq, Lk]``, optional
        Added *after* scaling (BLOOM, MPT, MLX, flash-attention, Shaw via
        ``scale * shaw_logits``).  Entries of ``-inf`` act as a mask.
    mask : bool array broadcastable to ``[..., Lq, Lk]``, optional
        ``True`` where a query may attend a key (as :func:`posenc_ref.causal_mask`).
    scale : float, optional
        Multiplies ``q . k``; default ``1/sqrt(D)``.  T5 uses ``scale=1.0``; an
        explicit ``0.0`` is honoured.
    return_weights : bool
        Also return the attention weights ``[..., Lq, Lk]``.

    Returns
    -------
    array, shape ``[..., Lq, Dv]`` (and the weights when asked)
        In the promoted dtype of ``q, k, v``; computed in float64 where available.
        A row whose keys are all masked (by ``mask`` or ``-inf`` bias) has zero
        weights and a zero output, rather than NaN.

    Raises
    ------
    TypeError
        For non-float ``q``/``k``/``v``/``bias`` or a non-bool ``mask``.
    ValueError
        For mismatched shapes.

    Notes
    -----
    .. math::
        \ell_{ij} = s\, q_i \cdot k_j + b_{ij}, \qquad
        w_{ij} = \frac{M_{ij}\, e^{\ell_{ij} - \max_{j'} \ell_{ij'}}}
                      {\sum_{j'} M_{ij'}\, e^{\ell_{ij'} - \max_{j'} \ell_{ij'}}}, \qquad
        o_i = \sum_j w_{ij} v_j

    with the maximum taken over unmasked entries (numerically stable) and
    :math:`w_{ij} = 0` for rows without an unmasked entry.

    Examples
    --------
    Zero queries give every visible key the same logit, so each output is the
    mean of the values it may see: query 0 sees key 0 only, query 1 both keys.
    A bias of :math:`(0, \ln 3)` then weights the keys :math:`1 : 3`.

    >>> import numpy as np
    >>> from posenc_ref import causal_mask
    >>> q = np.zeros((2, 2))
    >>> k = np.asarray([[3.0, -1.0], [0.5, 2.0]])
    >>> v = np.asarray([[1.0, 0.0], [0.0, 1.0]])
    >>> attention(q, k, v, mask=causal_mask(np.arange(2), np.arange(2))).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    >>> out, w = attention(q[:1], k, v, bias=np.log(np.asarray([[1.0, 3.0]])), return_weights=True)
    >>> np.round(w, 6).tolist(), np.round(out, 6).tolist()
    ([[0.25, 0.75]], [[0.25, 0.75]])
    """
    xp = namespace(q=q, k=k, v=v, bias=bias, mask=mask)
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_float_array(x, name, xp, min_ndim=2)
    if bias is not None:
        check_float_array(bias, "bias", xp)
    if mask is not None:
        check_mask_array(mask, "mask", xp, min_ndim=0, bool_only=True)
    _check_shapes(q, k, v, bias, mask)
    scale = 1.0 / math.sqrt(max(q.shape[-1], 1)) if scale is None else check_real(scale, "scale")
    return_weights = check_bool(return_weights, "return_weights")
    out_dtype = xp.result_type(q.dtype, k.dtype, v.dtype)
    work = _compat.compute_dtype(xp, _compat.device(q))
    q, k, v = (_compat.astype(x, work, xp=xp) for x in (q, k, v))
    axes = (*range(k.ndim - 2), k.ndim - 1, k.ndim - 2)
    logits = xp.matmul(q, xp.permute_dims(k, axes)) * scale
    if bias is not None:
        logits = logits + _compat.astype(bias, work, xp=xp)
    weights = _masked_softmax(logits, mask, xp)
    out = _compat.astype(xp.matmul(weights, v), out_dtype, xp=xp)
    return (out, _compat.astype(weights, out_dtype, xp=xp)) if return_weights else out
