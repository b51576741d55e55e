"""NaViT fractional position buckets as Idefics2 computes them (Dehghani et al. 2023).

HF ``Idefics2VisionEmbeddings.forward`` (transformers 5.24,
``models/idefics2/modeling_idefics2.py:109-141``), for an image of ``h x w``
real patches (counted in column 0 and row 0 of its patch mask) on a table grid
of side ``N``::

    boundaries = torch.arange(1/N, 1.0, 1/N)                  # float32 result
    step_h = 1.0 / nb_patches_h                                # float32
    frac_h = clamp(arange(Hmax, float32) * step_h, max=1 - 1e-6)
    bucket_h = bucketize(frac_h, boundaries, right=True)       # #{k : boundaries[k] <= frac}
    id = bucket_h * N + bucket_w   (real patches), 0 (padding)

The float32 arithmetic is part of the result: where ``i / h`` equals a
boundary ``k / N`` exactly, the rounded product and the rounded boundary
decide the bucket.  Here every rounding is modelled explicitly:

* ``step = round32(1/h)`` (a float32 division of exact operands: 1.0 and the
  integer count, both exact in float32, correctly rounded);
* ``frac = min(round32(i * step), round32(1 - 1e-6))`` (an exact product of an
  integer and a float32, rounded once; the clamp bound is the double
  ``1 - 1e-6`` converted to float32);
* PyTorch's CPU ``arange`` for a float32 result computes its length
  ``ceil((end - start) / step)`` in double precision and fills blocks of 16
  elements as two vectors of 8 floats (``Vectorized<float>::arange(base,
  step)``): the vector starting at element ``k0`` holds
  ``round32(b + m * step)``, ``m = 0..7``, with the float32 start
  ``b = round32(start + k0 * step)`` and the sums in double; elements after
  the last full block are ``round32(start + k * step)`` (the scalar loop).
  Python floats are IEEE doubles, so the double steps are Python float
  arithmetic, as in the kernel.  This model reproduces torch 2.13's CPU
  ``arange(1/N, 1.0, 1/N)`` bit for bit for N = 2..299 and every 37th N up
  to 4096 (DEFAULT, AVX2 and AVX512 kernels alike); the correctly rounded
  ``round32(k/N)`` would not (N = 19, element 11);
* the comparison ``boundary <= frac`` is exact.

``arithmetic="float32_divide"`` is MiniCPM-V's ``get_vision_nearest_position_ids``
(``transformers/vision_utils.py:326-356``): ``frac = arange(h) / h``, one correctly
rounded float32 division ``round32(i / h)`` (int64 tensor over an int: a float32 true
division), no clamp, against the same boundaries.

``arithmetic="exact"`` is the idealised rule ``min(floor(N i / h), N - 1)``
in integers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._numeric import mp, round_float32

__all__ = ["NAVIT_ARITHMETIC", "navit_position_ids"]

NAVIT_ARITHMETIC = ("float32", "float32_divide", "exact")


def _boundaries(side: int) -> list[float]:
    s = 1.0 / side
    count = max(0, math.ceil((1.0 - s) / s))
    full = count - count % 16  # blocks of two 8-float vectors; the rest element by element

    def element(k: int) -> float:
        if k >= full:
            return round_float32(mp.mpf(s + k * s))
        k0 = k - k % 8
        return round_float32(mp.mpf(round_float32(mp.mpf(s + k0 * s)) + (k - k0) * s))

    return [element(k) for k in range(count)]


def _buckets(count: int, length: int, side: int, arithmetic: str) -> list[int]:
    count = max(count, 1)  # an image with no real row: every patch is padding, ids 0 anyway
    if arithmetic == "exact":
        return [min(i * side // count, side - 1) for i in range(length)]
    bounds = _boundaries(side)
    with mp.workprec(200):
        if arithmetic == "float32_divide":
            fracs = [round_float32(mp.mpf(i) / count) if i else 0.0 for i in range(length)]
        else:
            step = round_float32(mp.mpf(1) / count)
            top = round_float32(mp.mpf(1.0 - 1e-6))
            fracs = [min(round_float32(mp.mpf(i) * mp.mpf(step)) if i else 0.0, top) for i in range(length)]
    return [sum(1 for b in bounds if b <= f) for f in fracs]


def navit_position_ids(
    patch_attention_mask: Sequence[Sequence[Sequence[bool]]], *, num_patches_per_side: int, arithmetic: str
) -> list[list[int]]:
    """``[B][Hmax * Wmax]`` table rows (row-major over patches), 0 at padding."""
    if arithmetic not in NAVIT_ARITHMETIC:
        msg = f"arithmetic must be one of {NAVIT_ARITHMETIC}; got {arithmetic!r}"
        raise ValueError(msg)
    side = num_patches_per_side
    out = []
    for image in patch_attention_mask:
        rows, cols = len(image), len(image[0])
        bh = _buckets(sum(1 for row in image if row[0]), rows, side, arithmetic)
        bw = _buckets(sum(1 for v in image[0] if v), cols, side, arithmetic)
        out.append([bh[i] * side + bw[j] if image[i][j] else 0 for i in range(rows) for j in range(cols)])
    return out
