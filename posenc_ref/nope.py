"""NoPE: no positional encoding; order comes from the causal mask alone.

Kazemnejad et al. (2023), "The Impact of Positional Encoding on Length
Generalization in Transformers", https://arxiv.org/abs/2305.19466.  Hybrids
interleave NoPE layers with RoPE layers: Llama 4 (every 4th layer NoPE, global
causal mask and attention-temperature tuning; RoPE layers use chunked local
masks), Cohere2 (Command R7B / A: every 4th layer global NoPE, the others
sliding-window RoPE) and SmolLM3.  This module holds what is NoPE's own,
Llama 4's attention-temperature factor; the masks that carry the order are in
:mod:`posenc_ref.masks` (:func:`posenc_ref.causal_mask`).  Combine both with
:func:`posenc_ref.attention`.
"""

from __future__ import annotations

from typing import Any

from . import _compat
from ._validate import (
    POSITION_LIMIT,
    check_nonnegative_positions,
    check_positions,
    check_real,
    namespace,
    output_dtype,
)

__all__ = ["llama4_attn_scale"]


def llama4_attn_scale(
    positions: Any,
    /,
    *,
    floor_scale: float = 8192,
    attn_scale: float = 0.1,
    dtype: Any = None,
) -> Any:
    r"""Llama 4 attention-temperature factor for NoPE layers, one per query position.

    Parameters
    ----------
    positions : array of an integer dtype, any shape
        Non-negative absolute query positions (Meta: ``start_pos .. start_pos +
        L - 1``; HF: ``arange(L) + past_seen_tokens``, ignoring ``position_ids``).
    floor_scale : float
        HF/Meta ``floor_scale`` (8192), in ``(0, 2**62]``.  Integral values use
        exact integer division; others a float64 (or float32 where that is
        all) division.
    attn_scale : float
        HF/Meta ``attn_scale`` (0.1).
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape of ``positions``
        Multiply the queries by it (``q * scale[..., None]`` for ``q`` of shape
        ``[..., L, D]``); keys are unchanged.  Exactly 1 while ``pos + 1 <
        floor_scale``.

    Raises
    ------
    TypeError
        For non-integer positions or non-real options.
    ValueError
        For ``floor_scale`` outside ``(0, 2**62]`` or negative positions
        (checked on eager arrays).  Positions of any integer dtype are widened
        to int64 first (int8 positions work with ``floor_scale=8192``).

    Notes
    -----
    .. math:: s(p) = \ln\bigl(\lfloor (p + 1) / F \rfloor + 1\bigr)\,\alpha + 1

    with :math:`F` = ``floor_scale`` and :math:`\alpha` = ``attn_scale``
    (Meta ``llama_models/llama4/model.py``; HF ``Llama4TextAttention``, which
    writes ``log1p``).

    Examples
    --------
    With the defaults (:math:`F = 8192`, :math:`\alpha = 0.1`) the factor is 1
    up to position 8190, :math:`1 + 0.1 \ln 2` from 8191 (``(p + 1) / F = 1``)
    and :math:`1 + 0.1 \ln 3` from 16383:

    >>> import numpy as np
    >>> s = llama4_attn_scale(np.asarray([0, 8190, 8191, 16383]))
    >>> [round(float(v), 6) for v in s]
    [1.0, 1.0, 1.069315, 1.109861]
    """
    xp = namespace(positions=positions)
    positions = check_positions(positions, "positions", xp)
    floor_scale = check_real(floor_scale, "floor_scale", exclusive_minimum=0.0, maximum=float(POSITION_LIMIT))
    attn_scale = check_real(attn_scale, "attn_scale")
    check_nonnegative_positions(positions, "positions", xp)
    device = _compat.device(positions)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    if floor_scale.is_integer():
        # floor((p + 1) / f) without forming p + 1; f beyond the dtype's max acts like its max (level 0)
        f = min(int(floor_scale), int(xp.iinfo(positions.dtype).max))
        level = _compat.astype(
            xp.floor_divide(positions, f) + xp.floor_divide(xp.remainder(positions, f) + 1, f), work, xp=xp
        )
    else:
        level = xp.floor((_compat.astype(positions, work, xp=xp) + 1.0) / floor_scale)
    return _compat.astype(xp.log1p(level) * attn_scale + 1.0, dtype, xp=xp)
