r"""Resizing position tables laid out on a grid: PyTorch ``F.interpolate`` semantics, exactly.

Vision transformers learn one position row per patch of a fixed ``n x m`` grid
(plus rows for prefix tokens: a class token, DeiT's distillation token).  Run
on another image size, they resample the grid part of the table to the new
``n' x m'`` grid (HF ``ViTEmbeddings.interpolate_pos_encoding`` and 65 other
families, timm ``resample_abs_pos_embed``), and SAM resamples a 1-D relative
table to a new length.  Every one of them calls ``torch.nn.functional.interpolate``:

* :func:`grid_resize` resamples the grid axes of a ``[..., *grid, D]`` table
  (1 or 2 grid axes, channels last) with the kernels of ``F.interpolate``:
  ``nearest`` (PyTorch's legacy ``floor(dst * scale)``, *not* ``nearest-exact``),
  ``linear`` / ``bilinear`` and ``bicubic``, ``align_corners`` and
  ``scale_factor`` coordinate maps, and the ``antialias=True`` kernels;
* :func:`patch_grid_resize` is the patch-table call on top: split off the
  prefix rows, reshape the rest row-major to ``n x m``, resize, flatten and
  re-join.

Interpolation weights are computed on the host in exact rational arithmetic
and rounded once to the compute dtype; each grid axis is then a sum over the
tap slots of gathered rows times their weights (``nearest`` and unchanged axes
are exact copies).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from . import _compat, _validate

__all__ = ["RESIZE_MODES", "grid_resize", "patch_grid_resize"]

#: Modes of :func:`grid_resize`: ``linear`` and ``bilinear`` are one kernel (per grid axis).
RESIZE_MODES = ("nearest", "linear", "bilinear", "bicubic")

_MODE_ALIASES = {
    "cubic": "use 'bicubic' (PyTorch's name; it also serves a 1-D grid here)",
    "nearest-exact": "not offered: 'nearest' is PyTorch's legacy floor(dst * scale) rule",
    "trilinear": "grids of 1 or 2 axes only: 'linear' is applied per axis",
    "area": "not offered: area resampling is not used by position tables",
}
_CUBIC_A = Fraction(-3, 4)  # F.interpolate's bicubic (upsample_bicubic2d): A = -0.75
_AA_CUBIC_A = Fraction(-1, 2)  # its antialias kernel (PIL's, Keys 1981): A = -0.5
_HALF = Fraction(1, 2)
#: Largest grid side: weights are host rows of exact rationals, one per output index.
MAX_SIDE = 2**16
_SIDE_REASON = "weights are computed per output index on the host; patch grids are far smaller"


def _cubic(x: Fraction, a: Fraction) -> Fraction:
    """Keys' cubic-convolution kernel at ``|x|`` with parameter ``a``."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return Fraction(0)


def _scale(n_in: int, n_out: int, align_corners: bool, factor: float | None) -> Fraction:
    """ATen's ``area_pixel_compute_scale``: the step in source coordinates per output index."""
    if align_corners:
        return Fraction(n_in - 1, n_out - 1) if n_out > 1 else Fraction(0)
    return 1 / Fraction(factor) if factor is not None else Fraction(n_in, n_out)


@functools.lru_cache(maxsize=64)
def _axis_weights(
    n_in: int, n_out: int, mode: str, align_corners: bool, factor: float | None, antialias: bool
) -> tuple[tuple[tuple[int, Fraction], ...], ...] | None:
    """Per output index the ``(source index, exact weight)`` taps; ``None`` when the axis is copied."""
    if n_out == n_in and (mode != "bicubic" or antialias):
        return None  # ATen copies an axis whose size is unchanged, whatever the scale_factor
    s = _scale(n_in, n_out, align_corners, factor)
    rows = []
    for d in range(n_out):
        taps: dict[int, Fraction] = {}
        if mode == "nearest":
            k = d >> 1 if n_out == 2 * n_in else min(math.floor(d * s), n_in - 1)
            taps[k] = Fraction(1)
        elif antialias:
            size = 2 if mode != "bicubic" else 4
            support = size * _HALF * (s if s >= 1 else 1)
            inv = 1 / s if s >= 1 else Fraction(1)
            center = s * (d + _HALF)
            lo = max(math.floor(center - support + _HALF), 0)
            hi = min(math.floor(center + support + _HALF), n_in)
            for j in range(lo, hi):
                x = (j - center + _HALF) * inv
                taps[j] = max(1 - abs(x), Fraction(0)) if mode != "bicubic" else _cubic(x, _AA_CUBIC_A)
            total = sum(taps.values())
            if total != 0:
                taps = {j: w / total for j, w in taps.items()}
        elif mode != "bicubic":
            src = s * d if align_corners else max(s * (d + _HALF) - _HALF, Fraction(0))
            i0 = min(math.floor(src), n_in - 1)
            lam = min(max(src - i0, Fraction(0)), Fraction(1))
            i1 = i0 + 1 if i0 < n_in - 1 else i0
            taps[i0] = 1 - lam
            taps[i1] = taps.get(i1, Fraction(0)) + lam
        else:
            src = s * d if align_corners else s * (d + _HALF) - _HALF
            i0 = math.floor(src)
            t = src - i0
            for k, w in zip(range(i0 - 1, i0 + 3), (t + 1, t, 1 - t, 2 - t), strict=True):
                j = min(max(k, 0), n_in - 1)  # taps outside the grid take the border row
                taps[j] = taps.get(j, Fraction(0)) + _cubic(w, _CUBIC_A)
        rows.append(tuple(sorted(taps.items())))
    return tuple(rows)


def _resample_axis(x: Any, axis: int, taps: Any, mode: str, xp: Any) -> Any:
    """``x`` resampled along ``axis`` (negative): ``sum_k take(x, index_k) * weight_k`` over the tap slots.

    Gathers and elementwise products, not a matrix product: no dense ``n' x n`` host matrix, and no
    reduced-precision matmul path (TF32) on any backend.  ``nearest`` is one gather (exact copies).
    """
    dev = _compat.device(x)
    index_dtype = _compat.index_dtype(xp, dev)
    where = x.ndim + axis
    if mode == "nearest":
        index = _compat.asarray([row[0][0] for row in taps], xp=xp, dtype=index_dtype, device=dev)
        return xp.take(x, index, axis=where)
    width = max(len(row) for row in taps)
    trailing = (1,) * (-axis - 1)
    out = None
    for slot in range(width):
        rows = [row[slot] if slot < len(row) else (0, Fraction(0)) for row in taps]
        index = _compat.asarray([j for j, _ in rows], xp=xp, dtype=index_dtype, device=dev)
        weight = _compat.asarray([float(w) for _, w in rows], xp=xp, dtype=x.dtype, device=dev)
        term = xp.take(x, index, axis=where) * xp.reshape(weight, (len(taps), *trailing))
        out = term if out is None else out + term
    return out


def _check_sides(value: object, name: str, *, lengths: tuple[int, ...] = (1, 2)) -> tuple[int, ...]:
    rule = "a sequence of " + " or ".join(str(n) for n in lengths) + " positive integers"
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise _validate.type_error(name, rule, value)
    if len(value) not in lengths:
        raise _validate.value_error(name, rule, tuple(value))
    return tuple(_validate.check_int(v, name, maximum=MAX_SIDE, reason=_SIDE_REASON) for v in value)


def _check_factors(value: object, sides: tuple[int, ...], size: tuple[int, ...]) -> tuple[float, ...] | None:
    """``scale_factor`` as floats, one per grid axis, each giving ``size`` as PyTorch derives it."""
    if value is None:
        return None
    rule = f"None or a sequence of {len(size)} positive real numbers"
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise _validate.type_error("scale_factor", rule, value)
    if len(value) != len(size):
        raise _validate.value_error("scale_factor", rule, tuple(value))
    factors = tuple(_validate.check_real(f, "scale_factor", exclusive_minimum=0.0) for f in value)
    derived = tuple(math.floor(n * f) for n, f in zip(sides, factors, strict=True))
    if derived != size:
        rule = f"factors with floor(grid * scale_factor) = size {size} (F.interpolate's output size)"
        got = _validate.text(f"{factors}, which gives {derived} for grid {sides}")
        raise _validate.value_error("scale_factor", rule, got)
    return factors


def grid_resize(
    table: Any,
    /,
    size: Sequence[int],
    *,
    mode: str = "bicubic",
    align_corners: bool = False,
    scale_factor: Sequence[float] | None = None,
    antialias: bool = False,
) -> Any:
    r"""Resample the grid axes of a table as PyTorch's ``F.interpolate`` does.

    The table is channels-last: ``[..., n, D]`` for a 1-D grid (SAM's relative
    table), ``[..., n, m, D]`` for a 2-D one (a patch grid).  The result is what
    ``F.interpolate`` gives on the channels-first ``[..., D, n, m]`` view, for
    every mode, ``align_corners``, ``scale_factor`` and ``antialias`` setting.

    Parameters
    ----------
    table : array of a real floating dtype, shape ``[..., *grid, D]``
        The table; the ``len(size)`` axes before the last are the grid.
    size : sequence of 1 or 2 ints
        The new grid ``(n',)`` or ``(n', m')``, each side at least 1.
    mode : {"nearest", "linear", "bilinear", "bicubic"}
        ``nearest``: PyTorch's legacy rule, source index ``floor(dst * scale)``
        (not ``nearest-exact``).  ``linear`` and ``bilinear`` (the same kernel
        per axis), ``bicubic``: cubic convolution with :math:`A = -0.75`.
    align_corners : bool
        Map the corner samples onto each other (``False`` for ``nearest``).
    scale_factor : sequence of floats, optional
        F.interpolate's ``scale_factor`` (Idefics' ``(h + 0.1) / n``): the
        coordinate map then steps by ``1 / scale_factor`` instead of
        ``n / n'``.  ``size`` must be the output size PyTorch derives,
        ``floor(n * scale_factor)``.
    antialias : bool
        PyTorch's antialiased kernels (``linear``/``bicubic`` only).

    Returns
    -------
    array, shape ``[..., *size, D]``
        The table's dtype, namespace and device; computed in float64 where
        available.

    Raises
    ------
    TypeError
        ``table`` not a real floating array; ``size``, ``scale_factor`` not
        sequences; options of the wrong type.
    ValueError
        A side below 1 or above ``2**16``, an unknown ``mode``, ``align_corners``
        or ``antialias`` with ``nearest``, a ``scale_factor`` that does not give
        ``size``, a table with fewer than ``len(size) + 1`` axes.

    Notes
    -----
    Each grid axis is resampled in turn (rows, then columns); output index
    :math:`d` of an axis with :math:`n` inputs and :math:`n'` outputs reads
    source coordinate

    .. math::

        s = \begin{cases} d \, \frac{n - 1}{n' - 1} & \text{align\_corners} \\
                          (d + \tfrac12)\, r - \tfrac12 & \text{otherwise,} \end{cases}
        \qquad r = n / n' \text{ or } 1 / \text{scale\_factor},

    clamped at 0 for ``linear``.  ``linear`` weights :math:`1 - \lambda,
    \lambda` the rows :math:`\lfloor s \rfloor, \lfloor s \rfloor + 1` (the
    last row past the end); ``bicubic`` weights rows :math:`\lfloor s \rfloor
    - 1 \dots \lfloor s \rfloor + 2` (clamped to the border) by Keys' kernel
    :math:`W(x) = (A+2)|x|^3 - (A+3)|x|^2 + 1` for :math:`|x| \le 1`,
    :math:`A|x|^3 - 5A|x|^2 + 8A|x| - 4A` for :math:`1 < |x| < 2`,
    :math:`A = -0.75` (``aten/src/ATen/native/UpSample.h``, ``cubic_convolution1/2``).
    ``nearest`` reads row :math:`\min(\lfloor d\, r \rfloor, n - 1)`, or
    :math:`\lfloor d / 2 \rfloor` when :math:`n' = 2n`.  ``antialias=True``
    (``cpu/UpSampleKernel.cpp``, ``_compute_weights_aa``): with :math:`r` (or
    :math:`(n-1)/(n'-1)` for ``align_corners``), support :math:`\sigma =
    \tfrac{K}{2} \max(r, 1)` (:math:`K = 2` linear, 4 cubic) and centre
    :math:`c = r (d + \tfrac12)`, rows :math:`j` from :math:`\max(\lfloor c -
    \sigma + \tfrac12 \rfloor, 0)` to :math:`\min(\lfloor c + \sigma + \tfrac12
    \rfloor, n) - 1` weigh :math:`f((j - c + \tfrac12) / \max(r, 1))`, normalised
    to sum 1; :math:`f` is the triangle :math:`\max(1 - |x|, 0)` or the cubic
    kernel with :math:`A = -0.5` (PIL's; not -0.75).  As in PyTorch's CPU
    kernels, an axis whose size is unchanged is copied, whatever
    ``scale_factor`` says, except by ``bicubic`` without antialias, which
    resamples it with the ``1/scale_factor`` map (PyTorch's 1-D
    ``upsample_nearest1d`` also resamples it: a 1-D ``nearest`` with a
    ``scale_factor`` keeping the size differs from this).  PyTorch computes the
    coordinates in float32 for float32 tables; ``nearest`` then picks another
    row where :math:`d\,r` is an integer that float32 rounds down (14 to 46
    rows, ``d = 23``): here the row is the exact floor.  The weights are exact
    rationals rounded once; sums of products carry the usual rounding.

    References
    ----------
    R. Keys, "Cubic convolution interpolation for digital image processing",
    IEEE Trans. ASSP 29(6), 1981.  Dosovitskiy et al., "An Image is Worth 16x16
    Words", https://arxiv.org/abs/2010.11929 (fine-tuning at higher resolution
    by 2-D interpolation of the position table).

    Examples
    --------
    A 1-D table of two rows, ``[0]`` and ``[1]``, resized to four rows with
    ``linear`` (SAM's call): source coordinates ``-0.25, 0.25, 0.75, 1.25``,
    clamped to the rows.

    >>> import numpy as np
    >>> import posenc_ref as pr
    >>> pr.grid_resize(np.asarray([[0.0], [1.0]]), (4,), mode="linear")[:, 0].tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    xp = _validate.namespace(table=table)
    _validate.check_float_array(table, "table", xp)
    size = _check_sides(size, "size")
    mode = _validate.check_choice(mode, "mode", RESIZE_MODES, aliases=_MODE_ALIASES)
    align_corners = _validate.check_bool(align_corners, "align_corners")
    antialias = _validate.check_bool(antialias, "antialias")
    if mode == "nearest" and (align_corners or antialias):
        name = "align_corners" if align_corners else "antialias"
        raise _validate.value_error(name, "False with mode='nearest' (F.interpolate refuses it)", True)
    k = len(size)
    if table.ndim < k + 1:
        rule = f"an array of shape [..., {', '.join('n' * k if k == 1 else 'nm')}, D] ({k + 1} axes at least)"
        raise _validate.value_error("table", rule, _validate.text(f"shape {tuple(table.shape)}"))
    sides = tuple(int(n) for n in table.shape[table.ndim - 1 - k : table.ndim - 1])
    if min(sides) < 1:
        raise _validate.value_error("table", "a grid of sides >= 1", _validate.text(f"grid {sides}"))
    factors = _check_factors(scale_factor, sides, size)
    out_elements = math.prod(table.shape[: table.ndim - 1 - k]) * math.prod(size) * int(table.shape[-1])
    if out_elements > _validate.MAX_ELEMENTS:
        rule = "a size with at most 2**30 output elements"
        got = _validate.text(f"{size} ({out_elements} elements)")
        raise _validate.value_error("size", rule, got, hint=_validate.ELEMENTS_REASON)
    dev = _compat.device(table)
    x = _compat.astype(table, _compat.compute_dtype(xp, dev), xp=xp)
    for axis in range(k):
        factor = None if factors is None else factors[axis]
        taps = _axis_weights(sides[axis], size[axis], mode, align_corners, factor, antialias)
        if taps is not None:
            x = _resample_axis(x, axis - k - 1, taps, mode, xp)
    return _compat.astype(x, table.dtype, xp=xp)


def patch_grid_resize(
    table: Any,
    /,
    grid: Sequence[int],
    new_grid: Sequence[int],
    *,
    prefix_tokens: int = 1,
    mode: str = "bicubic",
    align_corners: bool = False,
    scale_factor: Sequence[float] | None = None,
    antialias: bool = False,
    skip_same_grid: bool = False,
) -> Any:
    r"""A patch-position table resized to a new patch grid (ViT ``interpolate_pos_encoding``).

    The table holds ``prefix_tokens`` rows (class, distillation, register
    tokens) followed by one row per patch of an ``n x m`` grid, row-major.  The
    prefix rows are kept, the patch rows resized to ``n' x m'`` by
    :func:`grid_resize` and appended, row-major.

    Parameters
    ----------
    table : array of a real floating dtype, shape ``[..., prefix_tokens + n m, D]``
        The stored table (HF's ``position_embeddings`` is ``[1, 1 + n m, D]``).
    grid : pair of ints
        The stored grid ``(n, m)``: rows, columns (HF's ``sqrt(N)`` square).
    new_grid : pair of ints
        The new grid ``(n', m')``: ``(height // patch, width // patch)``.
    prefix_tokens : int
        Rows before the patches: 0 (SigLIP), 1 (ViT, CLIP, DINOv2), 2 (DeiT).
    mode, align_corners, scale_factor, antialias
        As for :func:`grid_resize` (ViT: ``bicubic``, ``align_corners=False``).
    skip_same_grid : bool
        Return ``table`` itself when ``new_grid == grid`` (the early return of
        HF's ViT, DeiT, CLIP, SigLIP, DINOv2, Idefics).  It only matters with a
        ``scale_factor`` (otherwise a same-size resize copies the table).

    Returns
    -------
    array, shape ``[..., prefix_tokens + n' m', D]``
        The table's dtype, namespace and device.

    Raises
    ------
    TypeError
        As for :func:`grid_resize`; ``prefix_tokens`` or ``skip_same_grid`` of
        the wrong type.
    ValueError
        ``grid`` or ``new_grid`` not two sides in ``[1, 2**16]``; a table whose
        rows are not ``prefix_tokens + n m``; the errors of :func:`grid_resize`.

    Notes
    -----
    .. math::

        \mathrm{out} = \bigl[\, T_{0 \dots P-1} \;;\; \mathrm{vec}\bigl(
        \mathrm{resize}(\mathrm{grid}(T_{P \dots P + nm - 1}), n', m')\bigr) \bigr]

    HF ``ViTEmbeddings.interpolate_pos_encoding`` (``vit/modeling_vit.py:89-127``),
    CLIP (``clip/modeling_clip.py:161-200``), SigLIP without a class row
    (``siglip/modeling_siglip.py:137-173``), DeiT with 2 prefix rows, DINOv2
    (the same call in float32: it casts the table to float32 and back,
    ``dinov2/modeling_dinov2.py:113-121``; here the compute dtype is float64
    where available), DINOv2 with registers (``antialias=True``; its register
    tokens carry no position rows) and Idefics (``scale_factor = ((h + 0.1) /
    n, (w + 0.1) / n)``, ``idefics/vision.py:93-140``).  All of them return the
    stored table when the patch count is unchanged and the image square
    (``skip_same_grid``); timm's ``resample_abs_pos_embed`` when the grid is
    unchanged (given ``old_size``); SAM never.  Timesformer (``mode="nearest"``)
    returns early on the patch count alone, so a new grid of the same count in
    another shape keeps the stored table there; here it is resized.

    Examples
    --------
    A class row and a 1 x 2 grid, stretched to 1 x 4 with ``bilinear``: the
    class row is kept.

    >>> import numpy as np
    >>> import posenc_ref as pr
    >>> t = np.asarray([[9.0], [0.0], [1.0]])
    >>> pr.patch_grid_resize(t, (1, 2), (1, 4), mode="bilinear")[:, 0].tolist()
    [9.0, 0.0, 0.25, 0.75, 1.0]
    """
    xp = _validate.namespace(table=table)
    _validate.check_float_array(table, "table", xp, min_ndim=2)
    n, m = _check_sides(grid, "grid", lengths=(2,))
    new = _check_sides(new_grid, "new_grid", lengths=(2,))
    rows = int(table.shape[-2])
    prefix = _validate.check_int(prefix_tokens, "prefix_tokens", minimum=0, maximum=max(rows, 0))
    skip = _validate.check_bool(skip_same_grid, "skip_same_grid")
    if rows != prefix + n * m:
        rule = f"rows * cols = {rows - prefix}, the table's {rows} rows less prefix_tokens={prefix}"
        raise _validate.value_error("grid", rule, (n, m))
    if skip and new == (n, m):
        return table
    lead, dim = tuple(table.shape[:-2]), int(table.shape[-1])
    patches = xp.reshape(table[..., prefix:, :], (*lead, n, m, dim))
    resized = grid_resize(
        patches, new, mode=mode, align_corners=align_corners, scale_factor=scale_factor, antialias=antialias
    )
    flat = xp.reshape(resized, (*lead, new[0] * new[1], dim))
    return xp.concat((table[..., :prefix, :], flat), axis=-2) if prefix else flat
