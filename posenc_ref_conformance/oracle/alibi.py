"""ALiBi slopes and biases (Press et al., ICLR 2022).

Slopes follow the original code's recursion (ofirpress/attention_with_linear_biases,
``get_slopes``) with MPT's / keras-hub's ``max_bias`` generalisation: for a
power-of-two ``n``, ``m_h = 2 ** (-max_bias (h + 1) / n)``; otherwise the slopes of
the nearest smaller power of two ``c`` followed by every second slope of ``2c``
(the first ``n - c`` of them).  For ``max_bias = 8`` this is BLOOM's, MPT's and
MLX's (after mlx PR #3071) rule; ``2 ** (-8 h / n)`` for non-powers of two is the
old bug.

Biases: ``symmetric`` is ``-m |k - q|`` (encoder-safe; MLX ``nn.ALiBi``,
data2vec); ``causal`` is given in its canonical form ``m (k - q)``, equal to the
symmetric form wherever ``k <= q``.  The original, BLOOM (``m k``) and MPT
(``m (k - (L-1))``) row forms differ from it by a constant per query row, which
softmax ignores under a causal mask; golden cases compare ``causal`` results only
on ``k <= q`` and up to a per-row constant.

Padding (HF BLOOM ``build_alibi_tensor(attention_mask, num_heads, dtype)``): the
key index of token ``t`` is ``(cumsum(mask)[t] - 1) * mask[t]`` (real tokens
count 0, 1, ... from the first real token; padding gets 0), and the bias is
``m_h * index``, the same in every query row (BLOOM returns ``[B H, 1, L]``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["FORMS", "alibi_bias", "alibi_bias_from_mask", "alibi_slopes", "padded_key_index"]

FORMS = ("symmetric", "causal")


def _power_of_two_slopes(n: int, max_bias: mp.mpf) -> list[mp.mpf]:
    return [mp.power(2, -max_bias * (h + 1) / n) for h in range(n)]


def alibi_slopes(num_heads: int, *, max_bias: float = 8.0) -> list[mp.mpf]:
    """The original recursion for any ``num_heads >= 1``."""
    if num_heads < 1:
        msg = f"num_heads must be a positive integer; got {num_heads!r}"
        raise ValueError(msg)
    bias = exact(max_bias)
    if num_heads & (num_heads - 1) == 0:
        return _power_of_two_slopes(num_heads, bias)
    closest = 1 << (num_heads.bit_length() - 1)
    return (
        _power_of_two_slopes(closest, bias)
        + alibi_slopes(2 * closest, max_bias=max_bias)[0::2][: num_heads - closest]
    )


def alibi_bias(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    slopes: Sequence[float],
    *,
    form: str = "symmetric",
) -> list[list[list[mp.mpf]]]:
    """``[H][Lq][Lk]`` biases for the given slopes (taken exactly)."""
    if form not in FORMS:
        msg = f"form must be one of {FORMS}; got {form!r}"
        raise ValueError(msg)
    out = []
    for slope in slopes:
        m = exact(slope)
        if form == "symmetric":
            out.append([[-m * abs(k - q) for k in k_positions] for q in q_positions])
        else:
            out.append([[m * (k - q) for k in k_positions] for q in q_positions])
    return out


def padded_key_index(mask: Sequence[bool | int]) -> list[int]:
    """BLOOM's key index of one sequence: ``(cumsum(mask) - 1) * mask``."""
    out, count = [], 0
    for m in mask:
        real = int(bool(m))
        count += real
        out.append((count - 1) * real)
    return out


def alibi_bias_from_mask(
    mask: Sequence[bool | int], *, num_heads: int, max_bias: float = 8.0
) -> list[list[list[mp.mpf]]]:
    """``[H][1][L]``: ``m_h * padded_key_index(mask)`` (BLOOM's padded, row-identical causal form)."""
    index = padded_key_index(mask)
    return [[[m * i for i in index]] for m in alibi_slopes(num_heads, max_bias=max_bias)]
