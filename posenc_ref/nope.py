"""NoPE: no positional encoding; order comes from the causal mask alone.

Kazemnejad et al. (2023), "The Impact of Positional Encoding on Length
Generalization in Transformers", https://arxiv.org/abs/2305.19466.  Hybrids
interleave NoPE layers with RoPE layers: Llama 4 (every 4th layer NoPE, global
causal mask and attention-temperature tuning; RoPE layers use chunked local
masks), Cohere2 (Command R7B / A: every 4th layer global NoPE, the others
sliding-window RoPE) and SmolLM3.  This module builds the masks from explicit
positions and Llama 4's temperature factor; combine them with
:func:`posenc_ref.attention`.
"""

from __future__ import annotations

from typing import Any

from . import _compat
from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    check_int,
    check_nonnegative_positions,
    check_position_pair,
    check_positions,
    check_real,
    namespace,
    output_dtype,
)


def _window(value: object, name: str) -> int:
    return check_int(value, name, minimum=1, maximum=POSITION_LIMIT, reason=POSITION_REASON)


__all__ = ["causal_mask", "llama4_attn_scale"]


def causal_mask(
    q_positions: Any,
    k_positions: Any,
    /,
    *,
    sliding_window: int | None = None,
    chunk_size: int | None = None,
) -> Any:
    r"""Boolean attention mask from positions: ``True`` where a query may attend a key.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions (leading dimensions broadcast).  Decoding with a KV
        cache is ``q_positions = arange(past, past + Lq)``, ``k_positions =
        arange(past + Lq)``.
    sliding_window : int, optional
        Keep only the ``sliding_window`` most recent keys, the query's own key
        included: ``q - k < sliding_window`` (HF ``sliding_window`` masks:
        Mistral, Cohere2, Gemma; the key ``q - sliding_window`` is excluded).
    chunk_size : int, optional
        Llama 4 chunked local attention (``attention_chunk_size``, 8192): keys
        in the same chunk ``floor(pos / chunk_size)`` as the query only (Meta
        ``create_chunked_attention_mask``, HF ``chunked_attention``).  Positions
        must then be non-negative.

    Returns
    -------
    array of bool, shape ``[..., Lq, Lk]``
        On the positions' device.  Use ``mask=`` of :func:`posenc_ref.attention`.

    Raises
    ------
    TypeError
        For non-integer positions or options.
    ValueError
        For a window or chunk size below 1 or above ``2**62``, positions with
        :math:`|p| \ge 2^{62}`, or negative positions with ``chunk_size``
        (the value checks run on eager arrays).

    Notes
    -----
    .. math::
        M_{ij} = [k_j \le q_i]\;\wedge\;[q_i - k_j < W]\;\wedge\;
        [\lfloor k_j / C \rfloor = \lfloor q_i / C \rfloor]

    with the last two factors only when ``sliding_window`` (:math:`W`) or
    ``chunk_size`` (:math:`C`) is given.  Positions of any integer dtype are
    widened to int64 first, so :math:`q_i - k_j` never wraps (int8 positions
    127 and -128 are 255 apart, not -1).
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions)
    q, k = check_position_pair(q_positions, k_positions, xp)
    if sliding_window is not None:
        sliding_window = _window(sliding_window, "sliding_window")
    if chunk_size is not None:
        chunk_size = _window(chunk_size, "chunk_size")
        check_nonnegative_positions(q, "q_positions", xp)
        check_nonnegative_positions(k, "k_positions", xp)
    top = int(xp.iinfo(q.dtype).max)  # larger windows and chunks act like this one (|p| < top / 2)
    q = q[..., :, None]
    k = k[..., None, :]
    mask = k <= q
    if sliding_window is not None:  # widened positions: q - k cannot wrap
        mask = xp.logical_and(mask, (q - k) < min(sliding_window, top))
    if chunk_size is not None:
        chunk_size = min(chunk_size, top)
        same = xp.floor_divide(k, chunk_size) == xp.floor_divide(q, chunk_size)
        mask = xp.logical_and(mask, same)
    return mask


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
