"""RoPE: inverse frequencies for every scaling type, cos/sin tables, and the rotation.

Frequencies follow HF ``modeling_rope_utils`` (v4 ``rope_scaling`` / v5
``rope_parameters`` keys), written from the formulas of the papers they
implement: RoFormer (Su et al.), position interpolation (Chen et al.), NTK-aware
and dynamic NTK (bloc97, emozilla), YaRN (Peng et al.), Llama 3.1 (Meta
``apply_scaling``), LongRoPE (Ding et al., Phi-3 release), ``proportional``.

Real-number semantics throughout, with these documented decision rules where a
real implementation makes a discrete choice:

* YaRN ``truncate=True``: ``floor``/``ceil`` of the exact correction dimensions;
  a case whose correction dimension lies within 1e-9 of an integer is rejected
  (:class:`IllConditioned`), since float rounding could flip it.
* Llama 3 bands: exact comparisons; the blend is continuous at both edges of
  the inclusive middle band, so only the ``low_freq_factor == high_freq_factor``
  case needs a margin (1e-12) around its single edge.
* LongRoPE switches to ``long_factor`` only when ``seq_len > original_max``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._numeric import IllConditioned, exact, floor_checked, mp

__all__ = [
    "LAYOUTS",
    "SCALING_TYPES",
    "apply_rope",
    "ntk_vllm",
    "rope_angles",
    "rope_cos_sin",
    "rope_frequencies",
    "rotate",
]

LAYOUTS = ("half", "interleaved")
SCALING_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")


def _default(dim: int, base: mp.mpf) -> list[mp.mpf]:
    """theta_i = base ** (-2i/dim), i = 0 .. dim/2 - 1."""
    return [mp.power(base, mp.mpf(-2 * i) / dim) for i in range(dim // 2)]


def _get(params: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = params.get(key)
    return default if value is None else value


def _dynamic(dim: int, base: mp.mpf, params: Mapping[str, Any], seq_len: int | None) -> list[mp.mpf]:
    """b' = b (s L/Lmax - (s - 1)) ** (d/(d-2)), L = max(seq_len, Lmax); Lmax = max_position_embeddings."""
    factor, lmax = exact(params["factor"]), int(params["max_position_embeddings"])
    length = lmax if seq_len is None else max(int(seq_len), lmax)
    new_base = base * mp.power(factor * length / lmax - (factor - 1), mp.mpf(dim) / (dim - 2))
    return _default(dim, new_base)


def _yarn_attention_factor(params: Mapping[str, Any], factor: mp.mpf) -> mp.mpf:
    def get_mscale(s: mp.mpf, m: Any = 1) -> mp.mpf:
        return mp.mpf(1) if s <= 1 else mp.mpf("0.1") * exact(m) * mp.log(s) + 1

    if params.get("attention_factor") is not None:
        return exact(params["attention_factor"])
    mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
    if mscale and mscale_all_dim:  # HF: truthiness, so 0 or None falls back
        return get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
    return get_mscale(factor)


def _original_max(params: Mapping[str, Any]) -> int:
    """``original_max_position_embeddings``, else ``max_position_embeddings`` (HF v5 ``setdefault``)."""
    value = params.get("original_max_position_embeddings")
    return int(params["max_position_embeddings"] if value is None else value)


def _yarn_factor(params: Mapping[str, Any]) -> mp.mpf:
    if params.get("factor") is not None:
        return exact(params["factor"])
    return mp.mpf(int(params["max_position_embeddings"])) / _original_max(params)


def _yarn(dim: int, base: mp.mpf, params: Mapping[str, Any]) -> tuple[list[mp.mpf], mp.mpf]:
    """NTK-by-parts blend of interpolated and extrapolated frequencies (YaRN §3.2, HF code path)."""
    factor = _yarn_factor(params)
    original = _original_max(params)
    beta_fast, beta_slow = exact(params.get("beta_fast") or 32), exact(params.get("beta_slow") or 1)

    def correction_dim(rotations: mp.mpf) -> mp.mpf:
        return dim * mp.log(original / (rotations * 2 * mp.pi)) / (2 * mp.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if params.get("truncate", True):
        low = mp.mpf(floor_checked(low, "yarn low correction dim"))
        high = -mp.mpf(floor_checked(-high, "yarn high correction dim"))
    low, high = max(low, mp.mpf(0)), min(high, mp.mpf(dim - 1))
    if low == high:
        high += mp.mpf("0.001")
    thetas = _default(dim, base)
    out = []
    for i, theta in enumerate(thetas):
        ramp = min(max((i - low) / (high - low), mp.mpf(0)), mp.mpf(1))
        out.append(theta / factor * ramp + theta * (1 - ramp))
    return out, _yarn_attention_factor(params, factor)


def _llama3(dim: int, base: mp.mpf, params: Mapping[str, Any]) -> list[mp.mpf]:
    """Three wavelength bands; the middle band ``high_wl <= wl <= low_wl`` is inclusive.

    With ``low_freq_factor < high_freq_factor`` the result is continuous at both
    edges (``smooth`` is 0 at ``low_wl`` and 1 at ``high_wl``), so exact
    comparisons need no tie rule; an *exclusive* middle band (mlx-lm) leaves a
    frequency whose float64 wavelength equals ``low_wl`` unscaled.  With equal
    factors the single edge is a jump and a wavelength within 1e-12 of it is
    rejected.
    """
    factor = exact(params["factor"])
    low_ff, high_ff = exact(params["low_freq_factor"]), exact(params["high_freq_factor"])
    old = _original_max(params)
    low_wl, high_wl = old / low_ff, old / high_ff
    out = []
    for theta in _default(dim, base):
        wl = 2 * mp.pi / theta
        if low_ff == high_ff and abs(wl - low_wl) <= mp.mpf("1e-12") * low_wl:
            msg = f"llama3 wavelength {mp.nstr(wl, 20)} is within 1e-12 of the single band edge"
            raise IllConditioned(msg)
        if wl > low_wl:
            out.append(theta / factor)
        elif wl < high_wl:
            out.append(theta)
        else:
            smooth = (old / wl - low_ff) / (high_ff - low_ff) if high_ff != low_ff else mp.mpf(0)
            out.append((1 - smooth) * theta / factor + smooth * theta)
    return out


def _longrope(
    dim: int, base: mp.mpf, params: Mapping[str, Any], seq_len: int | None
) -> tuple[list[mp.mpf], mp.mpf]:
    """theta_i / ext_i with ext = long_factor iff seq_len > original_max, else short_factor."""
    original = _original_max(params)
    if params.get("factor") is not None:
        factor = exact(params["factor"])
    else:
        factor = mp.mpf(int(params["max_position_embeddings"])) / original
    if params.get("attention_factor") is not None:
        attention = exact(params["attention_factor"])
    else:
        attention = mp.mpf(1) if factor <= 1 else mp.sqrt(1 + mp.log(factor) / mp.log(original))
    use_long = seq_len is not None and int(seq_len) > original
    ext = params["long_factor"] if use_long else params["short_factor"]
    if len(ext) != dim // 2:
        msg = f"longrope factors must have length dim/2 = {dim // 2}; got {len(ext)}"
        raise ValueError(msg)
    return [theta / exact(e) for theta, e in zip(_default(dim, base), ext, strict=True)], attention


def _proportional(dim: int, base: mp.mpf, params: Mapping[str, Any]) -> list[mp.mpf]:
    """b^(-2i/head_dim) / factor for the first int(p*head_dim//2) pairs, 0 for the rest."""
    fraction = float(_get(params, "partial_rotary_factor", 1.0))
    factor = exact(_get(params, "factor", 1.0))
    rotated = int(fraction * dim // 2)
    thetas = _default(dim, base)
    return [theta / factor if i < rotated else mp.mpf(0) for i, theta in enumerate(thetas)]


def rope_frequencies(
    dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
) -> tuple[list[mp.mpf], mp.mpf]:
    """``(inv_freq, attention_factor)`` for ``dim`` rotated channels (``dim // 2`` frequencies).

    ``scaling`` uses HF v5 ``rope_parameters`` keys (``rope_type`` or legacy ``type``);
    ``max_position_embeddings`` is read from the same dict where a type needs it.
    """
    params = dict(scaling or {})
    kind = params.get("rope_type", params.get("type", "default"))
    b = exact(base)
    one = mp.mpf(1)
    if kind == "default":
        return _default(dim, b), one
    if kind == "linear":
        return [t / exact(params["factor"]) for t in _default(dim, b)], one
    if kind == "ntk":
        new_base = b * mp.power(exact(params["factor"]), mp.mpf(dim) / (dim - 2))
        return _default(dim, new_base), one
    if kind == "dynamic":
        return _dynamic(dim, b, params, seq_len), one
    if kind == "yarn":
        return _yarn(dim, b, params)
    if kind == "llama3":
        return _llama3(dim, b, params), one
    if kind == "longrope":
        return _longrope(dim, b, params, seq_len)
    if kind == "proportional":
        return _proportional(dim, b, params), one
    msg = f"rope_type must be one of {SCALING_TYPES}; got {kind!r}"
    raise ValueError(msg)


def ntk_vllm(dim: int, *, base: float, factor: float) -> list[mp.mpf]:
    """vLLM's ``"ntk"`` (``NTKScalingRotaryEmbedding``): theta_i = (b s)^(-2i/d) s^(-2/d).

    A different scheme from HF's ``"ntk"`` (b' = b s^(d/(d-2)), theta_i = b'^(-2i/d)) under the
    same name: the base is multiplied by the factor and every frequency divided by s^(2/d).
    """
    s = exact(factor)
    return [t / mp.power(s, mp.mpf(2) / dim) for t in _default(dim, exact(base) * s)]


def _expand(values: Sequence[mp.mpf], layout: str) -> list[mp.mpf]:
    if layout == "half":
        return list(values) + list(values)
    if layout == "interleaved":
        return [v for v in values for _ in range(2)]
    msg = f"layout must be one of {LAYOUTS}; got {layout!r}"
    raise ValueError(msg)


def rope_angles(position: int, inv_freq: Sequence[float | mp.mpf]) -> list[mp.mpf]:
    """Exact angles ``m * theta_i`` for one integer position (``theta_i`` taken exactly)."""
    m = exact(position)
    return [m * exact(t) if not isinstance(t, mp.mpf) else m * t for t in inv_freq]


def rope_cos_sin(
    positions: Sequence[int],
    inv_freq: Sequence[float | mp.mpf],
    *,
    attention_factor: float | mp.mpf = 1.0,
    layout: str = "half",
) -> tuple[list[list[mp.mpf]], list[list[mp.mpf]]]:
    """Per position: ``a cos(m theta)``, ``a sin(m theta)`` expanded to ``2 len(theta)`` channels.

    ``half``: ``[c_0 .. c_{n-1}, c_0 .. c_{n-1}]``; ``interleaved``: ``[c_0, c_0, c_1, c_1, ...]``.
    """
    scale = attention_factor if isinstance(attention_factor, mp.mpf) else exact(attention_factor)
    cos_rows, sin_rows = [], []
    for m in positions:
        angles = rope_angles(m, inv_freq)
        cos_rows.append(_expand([scale * mp.cos(a) for a in angles], layout))
        sin_rows.append(_expand([scale * mp.sin(a) for a in angles], layout))
    return cos_rows, sin_rows


def _pairs(rotary: int, layout: str) -> list[tuple[int, int]]:
    if layout == "half":
        return [(i, i + rotary // 2) for i in range(rotary // 2)]
    return [(2 * i, 2 * i + 1) for i in range(rotary // 2)]


def apply_rope(
    x: Sequence[float | mp.mpf], cos: Sequence[float | mp.mpf], sin: Sequence[float | mp.mpf], *, layout: str
) -> list[mp.mpf]:
    """Rotate one row ``x`` (length D) by one row of ``cos``/``sin`` (length R <= D).

    Each pair ``(a, b)`` of the layout becomes ``(x_a c_a - x_b s_a, x_b c_b + x_a s_b)``;
    channels from R on pass through unchanged.
    """
    xs = [v if isinstance(v, mp.mpf) else exact(v) for v in x]
    cs = [v if isinstance(v, mp.mpf) else exact(v) for v in cos]
    ss = [v if isinstance(v, mp.mpf) else exact(v) for v in sin]
    rotary = len(cs)
    out = list(xs)
    for a, b in _pairs(rotary, layout):
        out[a] = xs[a] * cs[a] - xs[b] * ss[a]
        out[b] = xs[b] * cs[b] + xs[a] * ss[b]
    return out


def rotate(
    x: Sequence[float],
    position: int,
    inv_freq: Sequence[float | mp.mpf],
    *,
    attention_factor: Any,
    layout: str,
) -> list[mp.mpf]:
    """End-to-end: rotate row ``x`` at integer ``position`` with exact (unrounded) cos/sin."""
    cos_rows, sin_rows = rope_cos_sin([position], inv_freq, attention_factor=attention_factor, layout=layout)
    return apply_rope(x, cos_rows[0], sin_rows[0], layout=layout)
