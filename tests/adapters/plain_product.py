"""An honest plain implementation of every canonical function: NumPy arithmetic in the run's dtype.

The way model code is usually written: positions cast to the float dtype, the
angle the product of position and frequency (frequencies derived in that dtype
where the function derives them), then ``sin``/``cos``; ALiBi slopes by ``pow``;
T5 buckets by HF's float expression; softmax attention.  No extra precision
anywhere, and no input validation (``invalid_inputs: False``).  It declares the
``product`` precision class, and the suite must pass it at float32 and float64
with an empty xfail file; the planted bugs of ``tests/test_precision_classes.py``
start from here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CAPABILITIES = {"phase": "product", "invalid_inputs": False}


def _f(dtype: str) -> Any:
    return np.dtype(dtype).type


# --- absolute --------------------------------------------------------------------------------------------


def _sinusoidal_freqs(dim: int, convention: str, options: dict[str, Any], dtype: str) -> tuple[Any, int]:
    """(frequencies of the first half (or of each pair), how many) computed in ``dtype``."""
    f = _f(dtype)
    if convention in ("vaswani", "marian"):
        count = (dim + 1) // 2
        base = f(options.get("base", 10000.0))
        return np.exp(np.arange(count, dtype=dtype) * f(2.0) / f(dim) * -np.log(base)), count
    n = dim // 2
    if convention in ("tensor2tensor", "fairseq"):
        lo = f(options.get("min_timescale", 1.0)) if convention == "tensor2tensor" else f(1.0)
        hi = f(options.get("max_timescale", 1.0e4)) if convention == "tensor2tensor" else f(10000.0)
        step = np.log(hi / lo) / f(max(n - 1, 1))
        return lo * np.exp(np.arange(n, dtype=dtype) * -step), n
    lo, hi = f(options.get("min_freq", 0.0001)), f(options.get("max_freq", 1.0))
    t = np.ones(1, dtype=dtype) if n == 1 else f(1) - np.arange(n, dtype=dtype) / f(n - 1)
    freqs = np.exp(t * (np.log(hi) - np.log(lo)) + np.log(lo))
    if options.get("full_turns"):
        freqs = freqs * f(2 * math.pi)
    return freqs, n


def sinusoidal(positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str) -> Any:
    f = _f(dtype)
    pos = np.asarray(positions)
    if convention == "patchtst":  # PatchTST: the vaswani table of every row, standardised (torch.std)
        table = sinusoidal(
            np.arange(options["num_positions"]), dim, convention="vaswani", options={}, dtype=dtype
        )
        table = (table - table.mean()) / (table.std(ddof=1) * f(10))
        return table[pos].astype(dtype)
    if convention == "fairseq":
        pad = int(options.get("padding_idx", 1))
        rows = pos + pad + 1
        padded = rows == pad
        pos = rows
    freqs, count = _sinusoidal_freqs(dim, convention, options, dtype)
    angle = pos.astype(dtype)[..., None] * freqs
    s, c = np.sin(angle), np.cos(angle)
    if convention == "vaswani":
        out = np.stack([s, c], axis=-1).reshape(*pos.shape, 2 * count)[..., :dim]
    elif convention == "marian":
        out = np.concatenate([s, c[..., : dim // 2]], axis=-1)
    elif convention == "mlx":
        scale = f(options["scale"]) if options.get("scale") is not None else f(math.sqrt(2.0 / dim))
        out = np.concatenate([c, s] if options.get("cos_first") else [s, c], axis=-1) * scale
    else:
        first = [c, s] if options.get("cos_first") else [s, c]  # MusicGen: [cos | sin]
        out = np.concatenate([*first, np.zeros((*pos.shape, dim % 2), dtype=dtype)], axis=-1)
        if convention == "fairseq":
            out = np.where(padded[..., None], f(0), out)
    return out.astype(dtype)


def learned(table: Any, positions: Any, *, offset: str, padding_idx: int | None) -> Any:
    shift = {"plain": 0, "opt": 2, "roberta": (1 if padding_idx is None else padding_idx) + 1}[offset]
    return np.asarray(table)[np.asarray(positions) + shift]


def token_positions(mask: Any, *, cache_length: int) -> Any:
    real = (np.asarray(mask) != 0).astype(np.int64)
    return (np.cumsum(real, axis=-1) + cache_length) * real - 1


def interpolate_table(table: Any, new_length: int) -> Any:
    t = np.asarray(table)
    f = t.dtype.type
    where = np.arange(new_length, dtype=t.dtype) * f(t.shape[0] - 1) / f(max(new_length - 1, 1))
    lo = np.minimum(np.floor(where).astype(np.int64), t.shape[0] - 1)
    hi = np.minimum(lo + 1, t.shape[0] - 1)
    w = (where - lo.astype(t.dtype))[:, None]
    return (t[lo] * (f(1) - w) + t[hi] * w).astype(t.dtype)


# --- RoPE ------------------------------------------------------------------------------------------------


def _default(dim: int, base: Any, dtype: str) -> Any:
    f = _f(dtype)
    return f(1.0) / (f(base) ** (np.arange(0, dim, 2, dtype=dtype) / f(dim)))


def _yarn(dim: int, base: float, p: dict[str, Any], dtype: str) -> tuple[Any, float]:
    f = _f(dtype)
    original = p.get("original_max_position_embeddings") or p["max_position_embeddings"]
    factor = p["factor"] if p.get("factor") is not None else p["max_position_embeddings"] / original
    fast, slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def correction(rotations: float) -> float:
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction(fast), correction(slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=dtype) - f(low)) / f(high - low), 0, 1)
    theta = _default(dim, base, dtype)
    inv = theta / f(factor) * ramp + theta * (f(1) - ramp)

    def mscale(s: float, m: float = 1.0) -> float:
        return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0

    if p.get("attention_factor") is not None:
        attention = p["attention_factor"]
    elif p.get("mscale") and p.get("mscale_all_dim"):
        attention = mscale(factor, p["mscale"]) / mscale(factor, p["mscale_all_dim"])
    else:
        attention = mscale(factor)
    return inv, attention


def _llama3(dim: int, base: float, p: dict[str, Any], dtype: str) -> Any:
    f = _f(dtype)
    theta = _default(dim, base, dtype)
    old = p.get("original_max_position_embeddings") or p["max_position_embeddings"]
    low_wl, high_wl = old / p["low_freq_factor"], old / p["high_freq_factor"]
    wl = f(2 * math.pi) / theta
    spread = p["high_freq_factor"] - p["low_freq_factor"]
    smooth = (f(old) / wl - f(p["low_freq_factor"])) / f(spread) if spread else np.zeros_like(wl)
    middle = (f(1) - smooth) * theta / f(p["factor"]) + smooth * theta
    return np.where(wl > f(low_wl), theta / f(p["factor"]), np.where(wl < f(high_wl), theta, middle))


def rope_frequencies(
    dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
) -> Any:
    f = _f(dtype)
    p = dict(scaling or {})
    kind = p.get("rope_type", p.get("type", "default"))
    attention = 1.0
    if kind == "default":
        inv = _default(dim, base, dtype)
    elif kind == "linear":
        inv = _default(dim, base, dtype) / f(p["factor"])
    elif kind == "ntk":
        inv = _default(dim, base * p["factor"] ** (dim / (dim - 2)), dtype)
    elif kind == "dynamic":
        lmax = p["max_position_embeddings"]
        length = lmax if seq_len is None else max(seq_len, lmax)
        inv = _default(
            dim, base * (p["factor"] * length / lmax - (p["factor"] - 1)) ** (dim / (dim - 2)), dtype
        )
    elif kind == "yarn":
        inv, attention = _yarn(dim, base, p, dtype)
    elif kind == "llama3":
        inv = _llama3(dim, base, p, dtype)
    elif kind == "longrope":
        original = p.get("original_max_position_embeddings") or p["max_position_embeddings"]
        factor = p["factor"] if p.get("factor") is not None else p["max_position_embeddings"] / original
        if p.get("attention_factor") is not None:
            attention = p["attention_factor"]
        elif factor > 1:
            attention = math.sqrt(1 + math.log(factor) / math.log(original))
        ext = p["long_factor"] if seq_len is not None and seq_len > original else p["short_factor"]
        inv = _default(dim, base, dtype) / np.asarray(ext, dtype=dtype)
    else:  # proportional
        rotated = int((p.get("partial_rotary_factor") or 1.0) * dim // 2)
        inv = _default(dim, base, dtype) / f(p.get("factor") or 1.0)
        inv = np.where(np.arange(dim // 2) < rotated, inv, f(0))
    return inv.astype(dtype), attention


def rope_cos_sin(positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str) -> Any:
    f = _f(dtype)
    angle = np.asarray(positions).astype(dtype)[..., None] * np.asarray(inv_freq).astype(dtype)
    if layout == "half":
        angle = np.concatenate([angle, angle], axis=-1)
    else:
        angle = np.repeat(angle, 2, axis=-1)
    return np.cos(angle) * f(attention_factor), np.sin(angle) * f(attention_factor)


def apply_rope(x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
    x, cos, sin = np.asarray(x), np.asarray(cos), np.asarray(sin)
    r = cos.shape[-1]
    rot, rest = x[..., :r], x[..., r:]
    if layout == "half":
        turned = np.concatenate([-rot[..., r // 2 :], rot[..., : r // 2]], axis=-1)
    else:
        turned = np.stack([-rot[..., 1::2], rot[..., 0::2]], axis=-1).reshape(rot.shape)
    return np.concatenate([rot * cos + turned * sin, rest], axis=-1).astype(x.dtype)


def rope_heads(
    x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, head_layout: str
) -> Any:
    x = np.asarray(x)
    cos, sin = rope_cos_sin(
        positions, inv_freq, attention_factor=attention_factor, layout=layout, dtype=str(x.dtype)
    )
    axis = {"bhsd": 1, "bshd": 2, "thd": 1}[head_layout]  # the head axis the tables broadcast over
    return apply_rope(x, np.expand_dims(cos, axis), np.expand_dims(sin, axis), layout=layout)


def rope_from_base(
    x: Any, positions: Any, *, dim: int, base: float, scaling: Any, seq_len: Any, layout: str
) -> Any:
    """Frequencies derived in x's dtype (as torchtune, keras-hub, MLX do), then the plain rotation."""
    x = np.asarray(x)
    dtype = str(x.dtype)
    inv, attention = rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
    cos, sin = rope_cos_sin(positions, inv, attention_factor=attention, layout=layout, dtype=dtype)
    return apply_rope(x, cos, sin, layout=layout)


def xpos_scale(
    positions: Any, dim: int, *, scale_base: float, gamma: float, offset: int, layout: str, dtype: str
) -> Any:
    """rotary-embedding-torch's get_scale: zeta in the run's dtype, zeta ** ((m - c) / B)."""
    f = _f(dtype)
    zeta = (np.arange(0, dim, 2, dtype=dtype) + f(gamma * dim)) / f((1 + gamma) * dim)
    power = ((np.asarray(positions).astype(dtype) - f(offset)) / f(scale_base))[..., None]
    q, k = zeta**power, zeta ** (-power)
    if layout == "half":
        return np.concatenate([q, q], axis=-1), np.concatenate([k, k], axis=-1)
    return np.repeat(q, 2, axis=-1), np.repeat(k, 2, axis=-1)


def mrope_position_ids(segments: Any, *, time_interval: float) -> Any:
    """HF 4.x / vLLM get_rope_index: every segment from max(previous ids) + 1."""
    parts, start = [], 0
    for segment in segments:
        if isinstance(segment, list):
            t, h, w = segment
            frames = (np.arange(t) * time_interval).astype(np.int64)
            grid = np.stack(np.meshgrid(frames, np.arange(h), np.arange(w), indexing="ij")).reshape(3, -1)
        else:
            grid = np.broadcast_to(np.arange(segment), (3, segment))
        parts.append(grid + start)
        start = int(parts[-1].max()) + 1 if grid.size else start
    return np.concatenate(parts, axis=1) if parts else np.zeros((3, 0), dtype=np.int64)


def vision_position_ids(grid_t: int, grid_h: int, grid_w: int, *, merge_size: int) -> Any:
    """HF Qwen2-VL rot_pos_emb's patch order: merge_size x merge_size windows contiguous."""
    m = merge_size
    rows = np.arange(grid_h)[:, None].repeat(grid_w, 1).reshape(grid_h // m, m, grid_w // m, m)
    cols = np.arange(grid_w)[None, :].repeat(grid_h, 0).reshape(grid_h // m, m, grid_w // m, m)
    ids = np.stack([a.transpose(0, 2, 1, 3).reshape(-1) for a in (rows, cols)])
    return np.tile(ids, (1, grid_t))


def mrope_angles(
    position_ids: Any, inv_freq: Any, *, mrope_section: Any, section_order: str, dtype: str
) -> Any:
    count, total = len(mrope_section), sum(mrope_section)
    if section_order == "chunked":
        components = np.repeat(np.arange(count), mrope_section)
    elif section_order == "ernie":
        if count < 2 or len(set(mrope_section[1:])) != 1:
            msg = f"mrope_section must have equal h and w sections for 'ernie'; got {mrope_section}"
            raise ValueError(msg)
        slots = np.arange(total)
        components = np.where(slots < total - mrope_section[0], 1 + slots % (count - 1), 0)
    else:
        slots = np.arange(total)
        limit = count * np.asarray(mrope_section)[slots % count]
        components = np.where((slots % count > 0) & (slots < limit), slots % count, 0)
    ids = np.asarray(position_ids).astype(dtype)[components]  # [F, ..., L]
    return np.moveaxis(ids, 0, -1) * np.asarray(inv_freq).astype(dtype)


# --- relative / bias -------------------------------------------------------------------------------------


def t5_bucket(relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
    rp = np.asarray(relative)
    out = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        out += (rp > 0).astype(rp.dtype) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    exact = num_buckets // 2
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf where rp < exact (unused there)
        ratio = np.log(rp.astype(np.float32) / np.float32(exact)) / np.float32(math.log(max_distance / exact))
        large = exact + (ratio * np.float32(num_buckets - exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return out + np.where(rp < exact, rp, large)


def alibi_slopes(num_heads: int, *, max_bias: float, dtype: str) -> Any:
    f = _f(dtype)
    closest = 2 ** math.floor(math.log2(num_heads))
    base = f(2.0) ** (f(-max_bias) / f(closest))
    slopes = base ** np.arange(1, closest + 1, dtype=dtype)
    if closest != num_heads:
        extra = f(2.0) ** (f(-max_bias) / f(2 * closest))
        slopes = np.concatenate([slopes, extra ** np.arange(1, 2 * (num_heads - closest), 2, dtype=dtype)])
    return slopes


def alibi_bias(q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
    s = np.asarray(slopes)
    q, k = np.asarray(q_positions), np.asarray(k_positions)
    if form == "symmetric":
        distance = np.abs(k[None, :] - q[:, None]).astype(s.dtype)
        return -s[:, None, None] * distance[None]
    return np.broadcast_to(s[:, None, None] * k.astype(s.dtype)[None, None, :], (s.size, q.size, k.size))


def alibi_bias_from_heads(
    q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
) -> Any:
    return alibi_bias(
        q_positions, k_positions, alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype), form=form
    )


def alibi_bias_from_mask(mask: Any, *, num_heads: int, max_bias: float, dtype: str) -> Any:
    real = (np.asarray(mask) != 0).astype(np.int64)
    keys = (np.cumsum(real, axis=-1) - 1) * real  # BLOOM's build_alibi_tensor
    slopes = alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype)
    return slopes[:, None, None] * keys.astype(dtype)[..., None, None, :]


def relative_positions(q_positions: Any, k_positions: Any) -> Any:
    return np.asarray(k_positions)[..., None, :] - np.asarray(q_positions)[..., :, None]


def t5_bias(q_positions: Any, k_positions: Any, table: Any, *, bidirectional: bool, max_distance: int) -> Any:
    t = np.asarray(table)
    rel = relative_positions(q_positions, k_positions)
    buckets = t5_bucket(rel, bidirectional=bidirectional, num_buckets=t.shape[0], max_distance=max_distance)
    return np.moveaxis(t[buckets], -1, -3)  # [..., Lq, Lk, H] -> [..., H, Lq, Lk]


def sandwich_bias(
    q_positions: Any, k_positions: Any, *, num_heads: int, dim: int, base: float, dtype: str
) -> Any:
    f = _f(dtype)
    rel = relative_positions(q_positions, k_positions).astype(dtype)
    inv_freq = f(1) / f(base) ** (
        f(2) * np.arange(1, dim // 2 + 1, dtype=dtype) / f(dim)
    )  # NeMo: k = 1 .. d/2
    total = np.sum(np.cos(rel[..., None] * inv_freq), axis=-1) - f(dim / 2)
    scales = np.arange(1, num_heads + 1, dtype=dtype) * f(8) / f(num_heads)
    return (total[..., None, :, :] / scales[:, None, None]).astype(dtype)


def kerple_bias(q_positions: Any, k_positions: Any, r1: Any, r2: Any, *, kind: str) -> Any:
    a, p = np.asarray(r1)[:, None, None], np.asarray(r2)[:, None, None]
    d = np.abs(relative_positions(q_positions, k_positions)).astype(a.dtype)[..., None, :, :]
    return -a * (np.log(a.dtype.type(1) + p * d) if kind == "log" else d**p)


def shaw_index(relative: Any, *, max_distance: Any, convention: str) -> Any:
    rel = np.asarray(relative)
    if convention == "bert":
        return -rel + max_distance - 1
    if convention == "speecht5":  # query minus key, clipped to [-L, L - 1]
        return np.clip(-rel, -max_distance, max_distance - 1) + max_distance
    if convention == "vits":  # inside the window r + w, outside the zero row 2w + 1
        return np.where(np.abs(rel) <= max_distance, rel + max_distance, 2 * max_distance + 1)
    if convention == "granite_speech":  # (context c, table half-width M): clip(-r, -c, c) + M
        context, half = max_distance
        return np.clip(-rel, -context, context) + half
    left, right = (max_distance, max_distance) if isinstance(max_distance, int) else max_distance
    return np.clip(rel, -left, right) + left


def shaw_table_rows(max_distance: Any, *, convention: str) -> int:
    if convention == "bert":
        return 2 * max_distance - 1
    if convention in ("speecht5", "vits"):
        return 2 * max_distance + (0 if convention == "speecht5" else 2)
    if convention == "granite_speech":
        return 2 * max_distance[1] + 1
    left, right = (max_distance, max_distance) if isinstance(max_distance, int) else max_distance
    return left + right + 1


def shaw_logits(q: Any, index: Any, table: Any, *, k: Any) -> Any:
    emb = np.asarray(table)[np.asarray(index)]  # [..., Lq, Lk, D]
    logits = np.einsum("...id,...ijd->...ij", np.asarray(q), emb)
    if k is not None:
        logits = logits + np.einsum("...jd,...ijd->...ij", np.asarray(k), emb)
    return logits


def shaw_values(weights: Any, index: Any, table: Any) -> Any:
    return np.einsum("...ij,...ijd->...id", np.asarray(weights), np.asarray(table)[np.asarray(index)])


def causal_mask(q_positions: Any, k_positions: Any, *, sliding_window: Any, chunk_size: Any) -> Any:
    q, k = np.asarray(q_positions)[:, None], np.asarray(k_positions)[None, :]
    mask = k <= q
    if sliding_window is not None:
        mask &= q - k < sliding_window
    if chunk_size is not None:
        mask &= q // chunk_size == k // chunk_size
    return mask


def llama4_attn_scale(
    positions: Any, *, floor_scale: float, attn_scale: float, convention: str, dtype: str
) -> Any:
    f = _f(dtype)
    p = np.asarray(positions).astype(dtype)
    if convention == "beam":
        return np.exp(np.log1p((p + f(1)) / f(floor_scale)) * f(attn_scale)).astype(dtype)
    shift = f(1) if convention == "llama4" else f(0)
    return (np.log(np.floor((p + shift) / f(floor_scale)) + f(1)) * f(attn_scale) + f(1)).astype(dtype)


def attention(q: Any, k: Any, v: Any, *, bias: Any, mask: Any, scale: float | None) -> Any:
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    f = q.dtype.type
    logits = (q @ np.swapaxes(k, -1, -2)) * f(1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if bias is not None:
        logits = logits + np.asarray(bias)
    if mask is not None:
        logits = np.where(np.asarray(mask), logits, -np.inf)
    top = np.max(logits, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, f(0))
    weights = np.exp(logits - top)
    total = np.sum(weights, axis=-1, keepdims=True)
    weights = np.where(total > 0, weights / np.where(total > 0, total, f(1)), f(0))
    return (weights @ v).astype(q.dtype)
