r"""NaViT-style fractional position buckets (Idefics 2/3, SmolVLM, MiniCPM-V).

A vision encoder trained on a fixed ``N x N`` patch grid (its learned table has
``N**2`` rows) meets images of ``h x w`` patches, any size.  Each patch row
``i`` is mapped to the fraction ``i / h`` of the image height and that
fraction to one of ``N`` buckets, ``floor(N i / h)`` in exact arithmetic; the
same for columns; the table row is ``bucket_h * N + bucket_w``.  Padding
patches (outside the image in a padded batch) get row 0.

Idefics2 computes the fractions and the bucket boundaries in float32
(:data:`NAVIT_ARITHMETIC` ``"float32"``), and where ``i / h`` is exactly a
boundary ``k / N`` the rounding decides: ``fl(i * fl(1/h))`` can fall below
the float32 boundary ``fl(k/N)`` and the patch lands in bucket ``k - 1``
(``h = 25, N = 5``: patch 5 gets bucket 0, not 1).  MiniCPM-V divides,
``fl(i / h)`` (``"float32_divide"``), a third rule; ``"exact"`` is the
idealised one.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from . import _compat
from ._validate import check_choice, check_int, check_mask_array, namespace, text, value_error

__all__ = ["NAVIT_ARITHMETIC", "navit_position_ids"]

#: How :func:`navit_position_ids` computes the buckets.
NAVIT_ARITHMETIC = ("float32", "float32_divide", "exact")

_SIDE_LIMIT = 2**12  # a table of N**2 = 2**24 rows; float32 fractions stay exact integers * 2**-24 apart


def _float32(x: float) -> float:
    """``x`` rounded to float32 (nearest, ties to even), as a Python float."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _float32_boundaries(side: int) -> list[float]:
    """``torch.arange(1/N, 1.0, 1/N)`` (float32) as PyTorch's CPU kernel computes it.

    The length is ``ceil((1 - 1/N) / (1/N))`` in double precision.  The kernel fills
    blocks of 16 elements as two vectors of 8: each vector starts at the float32
    ``b = fl32(1/N + k0 (1/N))`` (double arithmetic, then rounded) and element
    ``k0 + m`` is ``fl32(b + m (1/N))``; the elements after the last full block are
    ``fl32(1/N + k (1/N))``.  Measured against torch 2.13's CPU ``arange`` for every
    ``N`` from 2 to 299 and every 37th to 4096, under the DEFAULT, AVX2 and AVX512
    kernels alike.
    """
    step = 1.0 / side
    count = max(0, math.ceil((1.0 - step) / step))
    vectorised = count // 16 * 16
    out = []
    for k in range(count):
        if k < vectorised:
            k0 = k // 8 * 8
            out.append(_float32(_float32(step + k0 * step) + (k - k0) * step))
        else:
            out.append(_float32(step + k * step))
    return out


def _count(flags: Any, idx: Any, xp: Any) -> Any:
    """True entries along the last axis, in the index dtype ``idx`` (a cumulative sum keeps the dtype on
    every backend, where ``sum`` of int32 widens to int64 by the standard and MLX takes no ``dtype``)."""
    return xp.cumulative_sum(_compat.astype(flags, idx, xp=xp), axis=-1, dtype=idx)[..., -1]


def navit_position_ids(
    patch_attention_mask: Any, /, *, num_patches_per_side: int, arithmetic: str = "float32"
) -> Any:
    r"""Table rows of NaViT fractional buckets, per patch of a padded batch of images.

    Parameters
    ----------
    patch_attention_mask : bool array, shape ``[B, Hmax, Wmax]``
        True for the real patches of each image: a top-left ``h x w``
        rectangle, as the processors build it.  ``h`` is read as the number of
        True entries of column 0 and ``w`` of row 0, as HF does.
    num_patches_per_side : int
        ``N``, the side of the table's grid (``image_size // patch_size``; the
        table has ``N**2`` rows), in ``[1, 2**12]``.
    arithmetic : {"float32", "float32_divide", "exact"}
        ``"float32"``: Idefics2's float32 fractions ``fl(i fl(1/h))``, clamped,
        and PyTorch's float32 boundaries (see Notes).  ``"float32_divide"``:
        MiniCPM-V's ``fl(i / h)`` (one correctly rounded division, no clamp)
        against the same boundaries.  ``"exact"``:
        ``bucket = min(floor(N i / h), N - 1)``.

    Returns
    -------
    array of the index dtype (int64), shape ``[B, Hmax * Wmax]``
        ``bucket_h(i) * N + bucket_w(j)`` at real patches, 0 at padding,
        row-major over ``(i, j)``.

    Raises
    ------
    TypeError
        A non-boolean mask or a non-integer ``num_patches_per_side``.
    ValueError
        A mask that is not 3-D, ``N`` out of range, an unknown ``arithmetic``.

    Notes
    -----
    ``"float32"`` (``Idefics2VisionEmbeddings.forward``,
    ``transformers/models/idefics2/modeling_idefics2.py:109-141``, 5.24, and
    its copies in Idefics 3 and SmolVLM):

    .. math::
        s = \mathrm{fl}(1/h), \quad c_i = \min\bigl(\mathrm{fl}(i\,s),\ \mathrm{fl}(1 - 10^{-6})\bigr),

        b_k = \mathrm{fl}\bigl(\mathrm{fl}_{64}(1/N + k\,\mathrm{fl}_{64}(1/N))\bigr),
        \quad \mathrm{bucket}(i) = \#\{k : b_k \le c_i\}

    (``torch.bucketize(..., right=True)``), with ``fl`` rounding to float32.
    The boundaries follow PyTorch's CPU ``arange`` (double-precision steps
    from a float32 start every 8 elements; see ``_float32_boundaries``), so
    they are not always the float32 nearest to ``k/N`` (``N = 19``:
    ``b_{11}`` is one float32 above ``12/19``); PyTorch's CUDA kernel is
    another code path, not modelled.
    MiniCPM-V (``transformers/vision_utils.py:326-356``,
    ``get_vision_nearest_position_ids``) divides instead,
    ``arange(h) / h``: ``"float32_divide"``, which differs from
    ``"float32"`` (``h = 25, N = 5``: MiniCPM-V puts row 5 in bucket 1,
    Idefics2 in bucket 0) and from ``"exact"`` (``N = 19``: both put row 12
    of 19 in bucket 11).

    References
    ----------
    Dehghani et al. (2023), "Patch n' Pack: NaViT, a Vision Transformer for any
    Aspect Ratio and Resolution", https://arxiv.org/abs/2307.06304;
    Laurençon et al. (2024), "What matters when building vision-language
    models?" (Idefics2), https://arxiv.org/abs/2405.02246.

    Examples
    --------
    A 2 x 3-patch image padded to 2 x 4 on a 4 x 4 table: rows 0, 2 (``floor(4 i / 2)``),
    columns 0, 1, 2 (``floor(4 j / 3)``), then padding.

    >>> import numpy as np
    >>> mask = np.asarray([[[True, True, True, False], [True, True, True, False]]])
    >>> navit_position_ids(mask, num_patches_per_side=4).tolist()
    [[0, 1, 2, 0, 8, 9, 10, 0]]
    """
    xp = namespace(patch_attention_mask=patch_attention_mask)
    check_mask_array(patch_attention_mask, "patch_attention_mask", xp, min_ndim=3, bool_only=True)
    if patch_attention_mask.ndim != 3:
        shape = tuple(patch_attention_mask.shape)
        raise value_error("patch_attention_mask", "3-dimensional [B, Hmax, Wmax]", text(f"shape {shape}"))
    side = check_int(num_patches_per_side, "num_patches_per_side", maximum=_SIDE_LIMIT)
    arithmetic = check_choice(arithmetic, "arithmetic", NAVIT_ARITHMETIC)
    mask = patch_attention_mask
    batch, rows, cols = (int(n) for n in mask.shape)
    dev = _compat.device(mask)
    idx = _compat.index_dtype(xp, dev)
    if batch * rows * cols == 0:
        return _compat.zeros((batch, rows * cols), xp=xp, dtype=idx, device=dev)
    count_h = _count(mask[:, :, 0], idx, xp)
    count_w = _count(mask[:, 0, :], idx, xp)
    one = _compat.asarray(1, xp=xp, dtype=idx, device=dev)
    count_h, count_w = xp.maximum(count_h, one), xp.maximum(count_w, one)  # empty images: all padding
    if arithmetic == "exact":
        bh = (_compat.arange(0, rows, xp=xp, dtype=idx, device=dev)[None, :] * side) // count_h[:, None]
        bw = (_compat.arange(0, cols, xp=xp, dtype=idx, device=dev)[None, :] * side) // count_w[:, None]
        bh, bw = _compat.clip(bh, 0, side - 1, xp=xp), _compat.clip(bw, 0, side - 1, xp=xp)
    else:
        f32 = xp.float32
        bounds = _compat.asarray(_float32_boundaries(side) or [2.0], xp=xp, dtype=f32, device=dev)
        top = _compat.asarray(1.0 - 1e-6, xp=xp, dtype=f32, device=dev)

        def buckets(count: Any, n: int) -> Any:
            index = _compat.arange(0, n, xp=xp, dtype=f32, device=dev)[None, :]
            if arithmetic == "float32_divide":  # MiniCPM-V: arange(h) / h, one rounding, no clamp
                frac = index / _compat.astype(count, f32, xp=xp)[:, None]
            else:  # Idefics2: arange(h) * (1 / h), clamped below 1
                step = _compat.asarray(1.0, xp=xp, dtype=f32, device=dev) / _compat.astype(count, f32, xp=xp)
                frac = xp.minimum(index * step[:, None], top)
            return _count(frac[..., None] >= bounds, idx, xp)

        bh, bw = buckets(count_h, rows), buckets(count_w, cols)
    ids = xp.reshape(bh[:, :, None] * side + bw[:, None, :], (batch, rows * cols))
    flat = xp.reshape(mask, (batch, rows * cols))
    return xp.where(flat, ids, xp.zeros_like(ids))
