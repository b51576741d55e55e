"""2-D RoPE tables of vision encoders (Pixtral, Qwen2-VL, Gemma 4, DINOv3, Llama 4, SAM 2, Kimi), one call.

Each vision tower below rotates a patch by its row and column (or its
continuous ``(y, x)`` coordinate), but each lays the two axes and their
frequencies out over the head differently.  :func:`rope_2d_cos_sin` returns
the family's own ``(cos, sin)`` table, ``[..., L, head_dim]``, so the rotation
is the existing :func:`posenc_ref.apply_rope` (``layout="half"``; Llama 4 and
SAM 2 ``"interleaved"``):

* ``"pixtral"``: frequencies ``w_k = base**(-2k/D)`` of the full head; rows take
  the even ones, columns the odd ones, angles ``[h w_0, h w_2, ... | x w_1,
  x w_3, ...]`` duplicated (half layout).
* ``"qwen2_vl"``: ``D/4`` frequencies ``base**(-4k/D)`` shared by both axes, angles
  ``[y w | x w]`` duplicated (half layout): Qwen2-VL's vision tower and the
  vision towers that copy it.
* ``"gemma4_vision"``: ``D/4`` frequencies ``base**(-4k/D)`` shared by both axes,
  table ``[cos h w | cos h w | cos x w | cos x w]``; each half of the head is
  rotated on its own (``apply_rope`` on ``x[..., :D/2]`` and ``x[..., D/2:]``).
* ``"dinov3"``: real coordinates (patch centres in ``[-1, 1]``), angles
  ``2 pi [y w | x w]`` with ``w_k = base**(-4k/D)``, duplicated (half layout).
* ``"llama4_vision"``: positions plus one, columns first, angles ``[(x+1) w |
  (y+1) w]`` with ``w_k = base**(-4k/D)``, each on one interleaved pair; the
  cls token is position ``(-1, -1)`` (all angles 0).
* ``"sam2"``: the same layout from 0, ``[x w | y w]`` on interleaved pairs (SAM 2
  memory attention's axial RoPE).
* ``"kimi_k25"``: per frequency a (column, row) slot pair, ``[x w_0, y w_0, x w_1,
  y w_1, ...]`` with ``w_k = base**(-4k/D)``, duplicated (half layout).

Integer positions go through the library's exact angle reduction (as
:func:`posenc_ref.rope_cos_sin`); real coordinates are turned into turns by one
product ``c t`` and reduced exactly from there (so ``cos(2 pi / 4) = 0``).  The
families themselves round ``p * inv_freq`` in float32.
"""

from __future__ import annotations

import decimal
from typing import Any

from . import _compat
from ._angles import PI, _cos_sin_phase, power_turns
from ._angles import cos_sin as exact_cos_sin
from ._validate import (
    MAX_CHANNELS,
    check_choice,
    check_finite_values,
    check_float_array,
    check_int,
    check_positions,
    check_real,
    namespace,
    output_dtype,
    text,
    type_error,
    value_error,
)

__all__ = ["ROPE_2D_CONVENTIONS", "rope_2d_cos_sin"]

#: The vision-encoder 2-D RoPE layouts :func:`rope_2d_cos_sin` names (after the implementation).
ROPE_2D_CONVENTIONS = ("pixtral", "qwen2_vl", "gemma4_vision", "dinov3", "llama4_vision", "sam2", "kimi_k25")

_ALIASES = {
    "axial": "Qwen2-VL's [row w | col w] is 'qwen2_vl'; Pixtral and Gemma 4 also call theirs 'axial'",
    "qwen2_5_vl": "use 'qwen2_vl' (Qwen2.5-VL's vision tower copies it)",
    "gemma4": "use 'gemma4_vision' (the text model's RoPE is 1-D)",
    "dinov3_vit": "use 'dinov3'",
    "mistral": "Pixtral (Mistral's vision encoder) is 'pixtral'",
    "llama4": "use 'llama4_vision' (the text model's RoPE is 1-D)",
    "kimi": "use 'kimi_k25'",
    "sam2_video": "use 'sam2'",
}


def _axis_turns(head_dim: int, base: float, convention: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Row (y) and column (x) frequencies in turns per unit of position, ``D/4`` each (42 digits)."""
    if convention == "pixtral":  # the even and odd slots of base**(-2k/D), k < D/2
        half = head_dim // 2
        return power_turns(base, head_dim, range(0, half, 2)), power_turns(base, head_dim, range(1, half, 2))
    shared = power_turns(base, head_dim // 2, range(head_dim // 4))  # base**(-4k/D) / (2 pi)
    if convention == "dinov3":  # angle 2 pi c w: c w turns
        ctx = decimal.Context(prec=42)
        shared = tuple(ctx.multiply(t, ctx.multiply(2, PI)) for t in shared)
    return shared, shared


def _cos_sin_of_turns(t: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``/``sin`` of ``2 pi t`` for real ``t``: whole and quarter turns dropped exactly."""
    q = t * 4.0
    n = xp.round(q)
    r = q - n  # exact: q minus its nearest integer
    k = n - 4.0 * xp.round(n / 4.0)  # quarter turns, in {-2..2}
    return _cos_sin_phase(r, k, xp)


def _axis_cos_sin(coords: Any, turns: tuple[Any, ...], offset: int, work: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``/``sin`` ``[..., L, D/4]`` of one axis at ``coords + offset``: exact reduction for
    integers, else ``2 pi c t`` from one product."""
    if xp.isdtype(coords.dtype, "integral"):
        return exact_cos_sin(coords, turns=turns, xp=xp, dtype=work, offset=offset)
    if offset:
        coords = _compat.astype(coords, work, xp=xp) + float(offset)
    t = _compat.asarray([float(x) for x in turns], xp=xp, dtype=work, device=_compat.device(coords))
    return _cos_sin_of_turns(_compat.astype(coords, work, xp=xp)[..., None] * t, xp)


def rope_2d_cos_sin(
    positions: Any, /, head_dim: int, *, base: float, convention: str, dtype: Any = None
) -> tuple[Any, Any]:
    r"""The ``(cos, sin)`` table of a vision encoder's 2-D RoPE, in the family's own layout.

    Parameters
    ----------
    positions : array, shape ``[2, ..., L]``
        Row (y) then column (x) of each token.  Every convention but
        ``"dinov3"``: patch indices (an integer dtype, or floats holding them;
        Llama 4's cls token is ``(-1, -1)``);
        ``"dinov3"``: real coordinates, the patch centres
        :math:`2 (i + 1/2)/n - 1` of an ``n``-patch axis (or their train-time
        shifted/jittered values).
    head_dim : int
        Channels per head ``D``, a multiple of 4 (each axis gets ``D/4`` pairs).
    base : float
        ``rope_theta`` (> 0): Pixtral 10000, Qwen2-VL vision 10000, Gemma 4 vision 100, DINOv3 100,
        Llama 4 vision 10000, SAM 2 memory attention 10000, Kimi-K2.5 vision 10000.
    convention : {"pixtral", "qwen2_vl", "gemma4_vision", "dinov3", "llama4_vision", "sam2", "kimi_k25"}
        Which implementation's frequencies and channel layout (see Notes).
    dtype : dtype, optional
        Output dtype; default float64 where available.

    Returns
    -------
    cos, sin : arrays, shape ``[..., L, head_dim]``
        On the device of ``positions``.  Rotate with ``apply_rope(x, cos, sin)``
        (``layout="half"``), for ``"gemma4_vision"`` on each half of the head
        separately, for ``"llama4_vision"`` and ``"sam2"`` with
        ``layout="interleaved"``.

    Raises
    ------
    TypeError
        ``positions`` not an array of a real dtype, or a non-number option.
    ValueError
        A first axis other than 2, non-finite values, ``head_dim`` not a positive
        multiple of 4, ``base <= 0`` or an unknown convention.

    Notes
    -----
    With :math:`q = D/4`, row/column positions :math:`y, x` and :math:`k < q`:

    .. math::

        \text{pixtral:}\quad & a = [\,y\,b^{-4k/D} \;|\; x\,b^{-(4k+2)/D}\,],
            \quad \cos = [\cos a \,|\, \cos a] \\
        \text{qwen2\_vl:}\quad & a = [\,y\,\omega \;|\; x\,\omega\,],
            \quad \cos = [\cos a \,|\, \cos a] \\
        \text{dinov3:}\quad & a = 2\pi\,[\,y\,b^{-4k/D} \;|\; x\,b^{-4k/D}\,],
            \quad \cos = [\cos a \,|\, \cos a] \\
        \text{gemma4\_vision:}\quad & \cos = [\cos y\omega \,|\, \cos y\omega \,|\,
            \cos x\omega \,|\, \cos x\omega],\quad \omega_k = b^{-4k/D} \\
        \text{llama4\_vision:}\quad & a = [\,(x+1)\,\omega \;|\; (y+1)\,\omega\,],
            \quad \cos_{2j} = \cos_{2j+1} = \cos a_j \\
        \text{sam2:}\quad & a = [\,x\,\omega \;|\; y\,\omega\,],
            \quad \cos_{2j} = \cos_{2j+1} = \cos a_j \\
        \text{kimi\_k25:}\quad & a_{2k} = x\,\omega_k,\; a_{2k+1} = y\,\omega_k,
            \quad \cos = [\cos a \,|\, \cos a]

    and ``sin`` alike.  Pixtral: HF ``PixtralVisionRotaryEmbedding``
    (``pixtral/modeling_pixtral.py:58-104``: ``cat(inv_freq[0::2],
    inv_freq[1::2])``, the H block of the first chunk and the W block of the
    second); Mistral's original builds the same angles as complex pairs
    (interleaved layout, weights permuted on conversion).  Qwen2-VL:
    ``Qwen2VLVisionRotaryEmbedding`` (``qwen2_vl/modeling_qwen2_vl.py:195-251``:
    ``inv_freq = base**(-arange(0, D/2, 2)/(D/2))`` and ``recomposition_frequencies``,
    ``cat([cat([h, w]), cat([h, w])])`` of the ``(2, N)`` row/column ids), copied by
    Qwen2.5-VL, Qwen3-VL, GLM-4V and the other towers of that lineage.  Gemma 4:
    ``Gemma4VisionRotaryEmbedding`` (``gemma4/modeling_gemma4.py:723-758``) with
    ``apply_multidimensional_rope`` (``:836-887``), which splits the head into
    one half per axis.  DINOv3: ``DINOv3ViTRopePositionEmbedding``
    (``dinov3_vit/modeling_dinov3_vit.py:153-207``), coordinates from
    ``get_patches_center_coordinates`` (``:96-121``); the train-time shift,
    jitter and rescale (``:124-150``) only change the coordinates, and prefix
    tokens (cls, registers) are not rotated.  Llama 4:
    ``Llama4VisionRotaryEmbedding._compute_freqs_ci``
    (``llama4/modeling_llama4.py:979-997``: ``img_idx % idx + 1`` first, the
    ``::2`` of the pairwise-repeated angles, the cls row masked to 0) applied by
    ``vision_apply_rotary_emb`` (``:738-749``, complex pairs).  SAM 2:
    ``Sam2VideoVisionRotaryEmbedding`` (``sam2_video/modeling_sam2_video.py:744-803``,
    position ids ``[w, h]`` from ``precompute_positions``, ``:1009-1017``) with
    ``apply_rotary_pos_emb_2d`` (``:823-869``: ``rotate_pairwise``; keys of
    several memory frames repeat the table, ``repeat_freqs_k``, and the last
    ``num_k_exclude_rope`` keys, object pointers, are not rotated: pass the
    repeated positions, rotate only the rotated keys).  Kimi-K2.5:
    ``Kimi_K25VisionRotaryEmbedding`` (``kimi_k25/modeling_kimi_k25.py:158-226``:
    ``freq.transpose(1, 2).flip(-1).flatten(1)`` of the ``(h, w)`` ids, then
    duplicated) with ``apply_rotary_pos_emb_vision`` (``rotate_half``).  All seven compute
    ``inv_freq`` and the product in float32; here integer positions take the
    exact reduction of :func:`posenc_ref.rope_cos_sin` and real coordinates
    one float64 product ``c w / (2 pi)`` (``c w`` for DINOv3) before an exact
    reduction of whole and quarter turns.

    References
    ----------
    Su et al., "RoFormer", arXiv:2104.09864; Heo et al., "Rotary Position
    Embedding for Vision Transformer", arXiv:2403.13298 (axial 2-D RoPE);
    Agrawal et al., "Pixtral 12B", arXiv:2410.07073; Siméoni et al., "DINOv3",
    arXiv:2508.10104; Ravi et al., "SAM 2", arXiv:2408.00714.

    Examples
    --------
    One patch at row 1, column 2, ``D = 8``, base 16: Pixtral's frequencies are
    :math:`16^{0}, 16^{-1/2}` (rows) and :math:`16^{-1/4}, 16^{-3/4}` (columns):

    >>> import numpy as np
    >>> cos, sin = rope_2d_cos_sin(np.asarray([[1], [2]]), 8, base=16.0, convention="pixtral")
    >>> np.round(np.arccos(cos[0, :4]), 6).tolist()
    [1.0, 0.25, 1.0, 0.25]
    """
    xp = namespace(positions=positions)
    ids = _checked_positions(positions, xp)
    if ids.shape[0] != 2:
        shape = text(f"shape {tuple(ids.shape)}")
        raise value_error("positions", "an array of shape [2, ..., L] (row, column)", shape)
    head_dim = check_int(head_dim, "head_dim", maximum=MAX_CHANNELS)
    if head_dim % 4:
        raise value_error("head_dim", "a positive multiple of 4 (D/4 pairs per axis)", head_dim)
    base = check_real(base, "base", exclusive_minimum=0.0)
    convention = check_choice(convention, "convention", ROPE_2D_CONVENTIONS, aliases=_ALIASES)
    dev = _compat.device(ids)
    out = output_dtype(dtype, "dtype", xp, dev)
    work = _compat.compute_dtype(xp, dev)
    turns_y, turns_x = _axis_turns(head_dim, base, convention)
    offset = 1 if convention == "llama4_vision" else 0
    cos_y, sin_y = _axis_cos_sin(ids[0, ...], turns_y, offset, work, xp)
    cos_x, sin_x = _axis_cos_sin(ids[1, ...], turns_x, offset, work, xp)
    if convention == "gemma4_vision":
        cos, sin = (xp.concat([y, y, x, x], axis=-1) for y, x in ((cos_y, cos_x), (sin_y, sin_x)))
    elif convention in ("llama4_vision", "sam2"):  # columns first, each angle on one interleaved pair
        cos, sin = (_pairwise(xp.concat([x, y], axis=-1), xp) for y, x in ((cos_y, cos_x), (sin_y, sin_x)))
    elif convention == "kimi_k25":  # slots (x w_k, y w_k) side by side, then duplicated (half layout)
        cos, sin = (_slot_pairs(x, y, xp) for y, x in ((cos_y, cos_x), (sin_y, sin_x)))
    else:
        cos, sin = (xp.concat([y, x, y, x], axis=-1) for y, x in ((cos_y, cos_x), (sin_y, sin_x)))
    return _compat.astype(cos, out, xp=xp), _compat.astype(sin, out, xp=xp)


def _pairwise(t: Any, xp: Any) -> Any:
    """``t[..., j]`` repeated for the pair ``(2j, 2j + 1)``: the interleaved layout."""
    return xp.reshape(xp.stack([t, t], axis=-1), (*t.shape[:-1], 2 * t.shape[-1]))


def _slot_pairs(x: Any, y: Any, xp: Any) -> Any:
    """``[x_0, y_0, x_1, y_1, ...]`` duplicated: Kimi's per-frequency (w, h) slots in the half layout."""
    pairs = xp.reshape(xp.stack([x, y], axis=-1), (*x.shape[:-1], 2 * x.shape[-1]))
    return xp.concat([pairs, pairs], axis=-1)


def _checked_positions(positions: Any, xp: Any) -> Any:
    """Integer positions widened and bounded (:func:`check_positions`), or finite real ones."""
    try:
        check_float_array(positions, "positions", xp)
    except TypeError:  # not floats: integer patch indices, or a TypeError naming integers too
        try:
            return check_positions(positions, "positions", xp, min_ndim=2)
        except TypeError:
            rule = "an array of an integer or real floating dtype"
            raise type_error("positions", rule, text(type(positions).__name__)) from None
    check_float_array(positions, "positions", xp, min_ndim=2)
    check_finite_values(positions, "positions", xp)
    return positions
