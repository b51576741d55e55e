"""Reference attention, NoPE masks and Llama 4's attention-temperature scaling.

``attention``: ``softmax(scale * q k^T + bias, masked) v`` for one head, computed
exactly (mpmath); a row with every key masked out yields zeros.  HF's eager
attention writes ``finfo.min`` on masked logits instead, so such a row sees equal
logits everywhere and gets uniform weights: the mean of ``v``
(``fully_masked="uniform"``, the named variant).

NoPE (Kazemnejad et al. 2023) carries no positional signal: order comes only
from the causal mask ``k <= q`` built from positions.  Llama 4 scales the queries
of NoPE layers by ``1 + attn_scale * ln(floor((p + 1) / floor_scale) + 1)``
(Meta ``llama4/model.py``; HF ``Llama4TextAttention``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["attention", "causal_mask", "llama4_attention_scale"]


def causal_mask(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    *,
    sliding_window: int | None = None,
    chunk_size: int | None = None,
) -> list[list[bool]]:
    """``[Lq][Lk]``: True where query ``q`` may attend key ``k``.

    ``k <= q``; with ``sliding_window`` W also ``q - k < W`` (HF sliding-window
    masks); with ``chunk_size`` C also ``k // C == q // C`` (Llama 4 chunked
    local attention).
    """

    def allowed(q: int, k: int) -> bool:
        ok = k <= q
        if sliding_window is not None:
            ok = ok and q - k < sliding_window
        if chunk_size is not None:
            ok = ok and k // chunk_size == q // chunk_size
        return ok

    return [[allowed(int(q), int(k)) for k in k_positions] for q in q_positions]


def llama4_attention_scale(
    positions: Sequence[int],
    *,
    floor_scale: float = 8192.0,
    attn_scale: float = 0.1,
    convention: str = "llama4",
) -> list[mp.mpf]:
    """The NoPE query temperature per position, with ``F = floor_scale``, ``a = attn_scale``.

    ``llama4`` (Llama 4 model card / Meta ``llama_models``): ``1 + a ln(floor((p + 1) / F) + 1)``;
    ``mistral`` (Mistral's ``llama_4_scaling``: ``original_max_position_embeddings``, ``beta``):
    ``1 + a ln(floor(p / F) + 1)``; ``beam`` (Beam's "scalable-softmax query scale", a power
    law in the length): ``(1 + (p + 1) / F) ** a``.
    """
    fs, scale = exact(floor_scale), exact(attn_scale)
    if convention == "beam":
        return [mp.power(1 + (exact(p) + 1) / fs, scale) for p in positions]
    shift = {"llama4": 1, "mistral": 0}[convention]
    return [1 + scale * mp.log(mp.floor((exact(p) + shift) / fs) + 1) for p in positions]


def attention(
    q: Sequence[Sequence[float]],
    k: Sequence[Sequence[float]],
    v: Sequence[Sequence[float]],
    *,
    scale: float,
    bias: Sequence[Sequence[float]] | None = None,
    mask: Sequence[Sequence[bool]] | None = None,
    fully_masked: str = "zero",
) -> list[list[mp.mpf]]:
    """``[Lq][Dv]`` output for one head; fully masked rows are zero (``"uniform"``: the mean of ``v``)."""
    s = exact(scale)
    out = []
    for i, qi in enumerate(q):
        logits = []
        for j, kj in enumerate(k):
            if mask is not None and not mask[i][j]:
                logits.append(None)
                continue
            value = s * mp.fsum(exact(a) * exact(b) for a, b in zip(qi, kj, strict=True))
            if bias is not None:
                value += exact(bias[i][j])
            logits.append(value)
        allowed = [x for x in logits if x is not None]
        if not allowed and fully_masked == "uniform":
            out.append([mp.fsum(exact(vj[c]) for vj in v) / len(v) for c in range(len(v[0]))])
            continue
        if not allowed:
            out.append([mp.mpf(0)] * len(v[0]))
            continue
        top = max(allowed)
        weights = [mp.exp(x - top) if x is not None else mp.mpf(0) for x in logits]
        total = mp.fsum(weights)
        out.append(
            [
                mp.fsum(w * exact(vj[c]) for w, vj in zip(weights, v, strict=True)) / total
                for c in range(len(v[0]))
            ]
        )
    return out
