"""2-D RoPE tables of vision encoders (Pixtral, Qwen2-VL, Gemma 4, DINOv3, Llama 4, SAM 2, Kimi), exact.

Written from each family's reference code (HF transformers 5.24 and the
originals it ports), importing nothing from ``posenc_ref``; ``D`` is the head
dimension, ``q = D/4``, ``b`` the base, ``(y, x)`` a token's row and column:

* Pixtral (Mistral ``vision_encoder.precompute_freqs_cis_2d``, HF
  ``PixtralVisionRotaryEmbedding``): ``freqs = b**(-2k/D)`` for ``k < D/2``; rows
  take ``freqs[0::2]``, columns ``freqs[1::2]``; table ``[cos a | cos a]`` with
  ``a = [y freqs[0::2] | x freqs[1::2]]``.
* Qwen2-VL vision (Qwen's ``VisionRotaryEmbedding`` + ``rot_pos_emb``, HF
  ``Qwen2VLVisionRotaryEmbedding``): ``w = b**(-2k/(D/2))``, ``k < q``; table
  ``[cos a | cos a]`` with ``a = [y w | x w]``.
* Gemma 4 vision (HF ``Gemma4VisionRotaryEmbedding``): ``w = b**(-2k/(D/2))``,
  ``k < q``; table ``[cos y w | cos y w | cos x w | cos x w]``.
* Llama 4 vision (Meta ``llama_models`` vision encoder, HF
  ``Llama4VisionRotaryEmbedding._compute_freqs_ci``): ``w = b**(-2k/(D/2))``,
  ``k < q``; complex pair ``j`` (channels ``2j, 2j+1``) turns by
  ``[(x+1) w | (y+1) w][j]``; the cls token (given as ``(-1, -1)``) by 0.
* SAM 2 memory attention (Meta ``sam2/modeling/position_encoding.py``
  ``compute_axial_cis``, HF ``Sam2VideoVisionRotaryEmbedding``): as Llama 4 from 0,
  ``[x w | y w]`` on complex pairs.
* Kimi-K2.5 vision (HF ``Kimi_K25VisionRotaryEmbedding``): ``w = b**(-2k/(D/2))``;
  slots ``[x w_0, y w_0, x w_1, y w_1, ...]``, table ``[cos a | cos a]``.
* DINOv3 (Meta ``dinov3/layers/rope_position_encoding.py``, HF
  ``DINOv3ViTRopePositionEmbedding``): ``periods = b**(4k/D)``, angles
  ``2 pi coord / period``, ``[y | x]`` then tiled twice.

Every angle is computed exactly (mpmath ``power`` at the working precision) from
the exact inputs; DINOv3's ``2 pi c w`` is evaluated as ``cospi``/``sinpi`` of
``2 c w``, so the exact zeros at ``c w = 1/4`` (centres of a 2- or 4-patch axis at
``k = 0``) come out as 0, not as rounding noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._numeric import exact, mp

__all__ = ["CONVENTIONS", "rope_2d_cos_sin", "rope_2d_frequencies"]

CONVENTIONS = ("pixtral", "qwen2_vl", "gemma4_vision", "dinov3", "llama4_vision", "sam2", "kimi_k25")


def rope_2d_frequencies(head_dim: int, base: Any, convention: str) -> tuple[list[Any], list[Any]]:
    """The ``D/4`` row and column angular frequencies: radians per unit of position, or for
    ``"dinov3"`` half-turns (multiples of pi) per unit of coordinate."""
    b, d = exact(base), mp.mpf(head_dim)
    if convention == "pixtral":
        full = [mp.power(b, -mp.mpf(2 * k) / d) for k in range(head_dim // 2)]
        return full[0::2], full[1::2]
    if convention in ("qwen2_vl", "gemma4_vision", "llama4_vision", "sam2", "kimi_k25"):
        spatial = d / 2
        shared = [mp.power(b, -mp.mpf(2 * k) / spatial) for k in range(head_dim // 4)]
        return shared, shared
    if convention == "dinov3":  # in units of pi: 2 pi / period
        shared = [2 / mp.power(b, mp.mpf(4 * k) / d) for k in range(head_dim // 4)]
        return shared, shared
    msg = f"convention must be one of {CONVENTIONS}; got {convention!r}"
    raise ValueError(msg)


def rope_2d_cos_sin(
    rows: Sequence[Any], cols: Sequence[Any], head_dim: int, base: Any, convention: str
) -> tuple[list[list[Any]], list[list[Any]]]:
    """``[L][D]`` exact cos and sin tables of tokens at ``(rows[l], cols[l])``."""
    w_y, w_x = rope_2d_frequencies(head_dim, base, convention)
    cos_rows, sin_rows = [], []
    for y, x in zip(rows, cols, strict=True):
        a_y = [exact(y) * w for w in w_y]
        a_x = [exact(x) * w for w in w_x]
        if convention in ("llama4_vision", "sam2"):
            shift = 1 if convention == "llama4_vision" else 0
            a_y = [(exact(y) + shift) * w for w in w_y]
            a_x = [(exact(x) + shift) * w for w in w_x]
            angles = [a for a in a_x + a_y for _ in range(2)]
        elif convention == "gemma4_vision":
            angles = a_y + a_y + a_x + a_x
        elif convention == "kimi_k25":
            angles = [a for pair in zip(a_x, a_y, strict=True) for a in pair] * 2
        else:
            angles = (a_y + a_x) * 2
        cos, sin = (mp.cospi, mp.sinpi) if convention == "dinov3" else (mp.cos, mp.sin)
        cos_rows.append([cos(a) for a in angles])
        sin_rows.append([sin(a) for a in angles])
    return cos_rows, sin_rows
