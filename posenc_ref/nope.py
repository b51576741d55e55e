"""NoPE: no positional encoding; order comes from the causal mask alone.

Kazemnejad et al. (2023), "The Impact of Positional Encoding on Length
Generalization in Transformers", https://arxiv.org/abs/2305.19466.  Hybrids
interleave NoPE layers with RoPE layers: Llama 4 (every 4th layer NoPE, global
causal mask and attention-temperature tuning; RoPE layers use chunked local
masks), Cohere2 (Command R7B / A: every 4th layer global NoPE, the others
sliding-window RoPE) and SmolLM3.  This module holds what is NoPE's own,
the position-dependent query temperature of NoPE layers (Llama 4's, and the
variants of Mistral 3 / 4 and Beam); the masks that carry the order are in
:mod:`posenc_ref.masks` (:func:`posenc_ref.causal_mask`).  Combine both with
:func:`posenc_ref.attention`.
"""

from __future__ import annotations

from typing import Any

from . import _compat
from ._mlx_float64 import exp
from ._validate import (
    POSITION_LIMIT,
    check_choice,
    check_nonnegative_positions,
    check_positions,
    check_real,
    namespace,
    output_dtype,
)

__all__ = ["ATTN_SCALE_CONVENTIONS", "llama4_attn_scale"]

#: The query-temperature formulas :func:`llama4_attn_scale` computes (``convention=``).
ATTN_SCALE_CONVENTIONS = ("llama4", "mistral", "beam")

_CONVENTION_ALIASES = {
    "ministral3": "Ministral 3 / Mistral 3 use 'mistral'",
    "mistral3": "Ministral 3 / Mistral 3 use 'mistral'",
    "mistral4": "Mistral 4 uses 'mistral'",
    "llama": "Llama 4 uses 'llama4'",
    "ssmax": "Beam's scalable-softmax power law is 'beam'",
}


def llama4_attn_scale(
    positions: Any,
    /,
    *,
    floor_scale: float = 8192,
    attn_scale: float = 0.1,
    convention: str = "llama4",
    dtype: Any = None,
) -> Any:
    r"""Attention-temperature factor of NoPE layers (Llama 4 and its variants), one per query position.

    Parameters
    ----------
    positions : array of an integer dtype, any shape
        Non-negative absolute query positions (Llama 4, Meta: ``start_pos .. start_pos +
        L - 1``; HF: ``arange(L) + past_seen_tokens``, ignoring ``position_ids``;
        Ministral 3, Mistral 4 and Beam read ``position_ids``).
    floor_scale : float
        The length scale :math:`F`, in ``(0, 2**62]``: HF/Meta ``floor_scale``
        (8192) for ``"llama4"``; ``rope_parameters["original_max_position_embeddings"]``
        for ``"mistral"`` (16384 Ministral 3, 8192 Mistral 4); 2048 for ``"beam"``.
        Integral values use exact integer division in the floor conventions;
        others (and ``"beam"``) a float64 (or float32 where that is all) division.
    attn_scale : float
        :math:`\alpha`: HF/Meta ``attn_scale`` (0.1); Mistral's
        ``llama_4_scaling_beta`` (0.1); Beam's exponent (0.1).
    convention : {"llama4", "mistral", "beam"}
        Which formula (see Notes).  ``"llama4"``: Meta ``llama_models/llama4/model.py``,
        HF ``llama4/modeling_llama4.py:363-365`` (``Llama4TextAttention``).
        ``"mistral"``: ``get_llama_4_attn_scale`` of HF ``ministral3/modeling_ministral3.py:105-107``
        and ``mistral4/modeling_mistral4.py:358-360`` (vLLM's ``_get_llama_4_scaling`` in
        ``deepseek_v2.py``, the Mistral ``llama_4_scaling`` config, is the same formula).
        ``"beam"``: ``compute_attention_scaling`` of HF ``beam/modeling_beam.py:492-494``.
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape of ``positions``
        Multiply the queries by it (``q * scale[..., None]`` for ``q`` of shape
        ``[..., L, D]``); keys are unchanged.  Exactly 1 while ``pos + 1 <
        floor_scale`` (``"llama4"``) or ``pos < floor_scale`` (``"mistral"``);
        ``"beam"`` grows from position 0 on.

    Raises
    ------
    TypeError
        For non-integer positions, non-real options or a non-string convention.
    ValueError
        For ``floor_scale`` outside ``(0, 2**62]``, an unknown convention or negative positions
        (checked on eager arrays).  Positions of any integer dtype are widened
        to int64 first (int8 positions work with ``floor_scale=8192``).

    Notes
    -----
    With :math:`F` = ``floor_scale`` and :math:`\alpha` = ``attn_scale``:

    .. math::

        s_\text{llama4}(p) &= 1 + \alpha \ln\bigl(\lfloor (p + 1) / F \rfloor + 1\bigr) \\
        s_\text{mistral}(p) &= 1 + \alpha \ln\bigl(\lfloor p / F \rfloor + 1\bigr) \\
        s_\text{beam}(p) &= \bigl(1 + (p + 1) / F\bigr)^{\alpha}
            = \exp\bigl(\alpha \ln(1 + (p + 1) / F)\bigr)

    (Kazemnejad et al. 2023 for NoPE; the Llama 4 model card for the
    temperature tuning.  Beam's docstring calls its factor a scalable-softmax
    query scale; Nakanishi 2025, "Scalable-Softmax Is Superior for Attention",
    arXiv:2501.19399, scales logits by :math:`s \ln n`, Beam by this power law.)
    Mistral's steps come one position later than Llama 4's:
    :math:`s_\text{mistral}(p) = s_\text{llama4}(p - 1)` for :math:`p \ge 1`, and
    :math:`s_\text{mistral}(0) = 1`.  HF's Ministral 3 and Mistral 4 and vLLM's
    ``_get_llama_4_scaling`` (fed by Mistral's own ``llama_4_scaling`` config) all
    read it so: it is Mistral's convention, not an off-by-one of the port.

    Examples
    --------
    With the defaults (:math:`F = 8192`, :math:`\alpha = 0.1`) the factor is 1
    up to position 8190, :math:`1 + 0.1 \ln 2` from 8191 (``(p + 1) / F = 1``)
    and :math:`1 + 0.1 \ln 3` from 16383:

    >>> import numpy as np
    >>> s = llama4_attn_scale(np.asarray([0, 8190, 8191, 16383]))
    >>> [round(float(v), 6) for v in s]
    [1.0, 1.0, 1.069315, 1.109861]

    Mistral steps at 8192 instead; Beam's power law (:math:`F = 2048`) is
    :math:`(1 + 1/2048)^{0.1}` at position 0 and :math:`2^{0.1}` at 2047:

    >>> s = llama4_attn_scale(np.asarray([8191, 8192]), convention="mistral")
    >>> [round(float(v), 6) for v in s]
    [1.0, 1.069315]
    >>> s = llama4_attn_scale(np.asarray([0, 2047]), floor_scale=2048, convention="beam")
    >>> [round(float(v), 6) for v in s]
    [1.000049, 1.071773]
    """
    xp = namespace(positions=positions)
    positions = check_positions(positions, "positions", xp)
    floor_scale = check_real(floor_scale, "floor_scale", exclusive_minimum=0.0, maximum=float(POSITION_LIMIT))
    attn_scale = check_real(attn_scale, "attn_scale")
    convention = check_choice(convention, "convention", ATTN_SCALE_CONVENTIONS, aliases=_CONVENTION_ALIASES)
    check_nonnegative_positions(positions, "positions", xp)
    device = _compat.device(positions)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    if convention == "beam":
        # (p + 1) / F in the working dtype (exact below 2**53), then one log1p and one exp
        # (float64-accurate on MLX too: _mlx_float64.exp)
        ratio = (_compat.astype(positions, work, xp=xp) + 1.0) / floor_scale
        return _compat.astype(exp(xp.log1p(ratio) * attn_scale, xp=xp), dtype, xp=xp)
    if convention == "mistral":
        f = min(int(floor_scale), int(xp.iinfo(positions.dtype).max)) if floor_scale.is_integer() else None
        if f is not None:
            level = _compat.astype(xp.floor_divide(positions, f), work, xp=xp)
        else:
            level = xp.floor(_compat.astype(positions, work, xp=xp) / floor_scale)
        return _compat.astype(xp.log1p(level) * attn_scale + 1.0, dtype, xp=xp)
    if floor_scale.is_integer():
        # floor((p + 1) / f) without forming p + 1; f beyond the dtype's max acts like its max (level 0)
        f = min(int(floor_scale), int(xp.iinfo(positions.dtype).max))
        level = _compat.astype(
            xp.floor_divide(positions, f) + xp.floor_divide(xp.remainder(positions, f) + 1, f), work, xp=xp
        )
    else:
        level = xp.floor((_compat.astype(positions, work, xp=xp) + 1.0) / floor_scale)
    return _compat.astype(xp.log1p(level) * attn_scale + 1.0, dtype, xp=xp)
