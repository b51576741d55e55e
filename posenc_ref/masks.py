"""Attention masks from explicit positions: causal, sliding-window and chunked.

Every decoder masks the keys a query may see; these masks are built from
absolute positions rather than from sequence indices, so a KV-cache decode step
and packed or offset sequences get the same rule.  Three factors combine:
causal (``k <= q``, all decoders), a sliding window (``q - k < W``: Mistral,
Gemma, Cohere2's local layers) and Llama 4's chunked local attention (keys in
the query's chunk only).  NoPE layers (:mod:`posenc_ref.nope`) take their order
from the causal mask alone.  Pass the result as ``mask=`` of
:func:`posenc_ref.attention`.
"""

from __future__ import annotations

from typing import Any

from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    check_int,
    check_nonnegative_positions,
    check_position_pair,
    namespace,
)

__all__ = ["causal_mask"]


def _window(value: object, name: str) -> int:
    """A window or chunk size: an integer in ``[1, 2**62]``."""
    return check_int(value, name, minimum=1, maximum=POSITION_LIMIT, reason=POSITION_REASON)


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

    Examples
    --------
    Three tokens at positions 0, 1, 2 (row ``i`` is query ``i``, column ``j``
    key ``j``); with ``sliding_window=2`` query 2 no longer sees key 0
    (:math:`q - k = 2` is not below 2).

    >>> import numpy as np
    >>> pos = np.arange(3)
    >>> causal_mask(pos, pos).tolist()
    [[True, False, False], [True, True, False], [True, True, True]]
    >>> causal_mask(pos, pos, sliding_window=2).tolist()
    [[True, False, False], [True, True, False], [False, True, True]]
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
