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

Named variants (formulas real implementations ship under a canonical scaling
type's name): :func:`ntk_vllm`, :func:`yarn_deepseek`, :func:`longrope_phi3`,
:func:`proportional_gemma4`, each citing the code it follows.  xPos scales:
:func:`xpos_scale`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._numeric import IllConditioned, exact, floor_checked, mp

__all__ = [
    "LAYOUTS",
    "SCALING_TYPES",
    "apply_rope",
    "log_span",
    "longrope_phi3",
    "ntk_vllm",
    "proportional_gemma4",
    "rope_angles",
    "rope_cos_sin",
    "rope_frequencies",
    "rotate",
    "xpos_scale",
    "yarn_deepseek",
    "yarn_variant",
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


def _get_mscale(scale: mp.mpf, mscale: Any) -> mp.mpf:
    """YaRN's magnitude ``0.1 m ln s + 1`` (1 for ``s <= 1``)."""
    return mp.mpf(1) if scale <= 1 else mp.mpf("0.1") * exact(mscale) * mp.log(scale) + 1


def _yarn_attention_factor(params: Mapping[str, Any], factor: mp.mpf) -> mp.mpf:
    if params.get("attention_factor") is not None:
        return exact(params["attention_factor"])
    mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
    if mscale and mscale_all_dim:  # HF: truthiness, so 0 or None falls back
        return _get_mscale(factor, mscale) / _get_mscale(factor, mscale_all_dim)
    return _get_mscale(factor, 1)


def _original_max(params: Mapping[str, Any]) -> int:
    """``original_max_position_embeddings``, else ``max_position_embeddings`` (HF v5 ``setdefault``)."""
    value = params.get("original_max_position_embeddings")
    return int(params["max_position_embeddings"] if value is None else value)


def _yarn_factor(params: Mapping[str, Any]) -> mp.mpf:
    if params.get("factor") is not None:
        return exact(params["factor"])
    return mp.mpf(int(params["max_position_embeddings"])) / _original_max(params)


def _yarn_blend(
    dim: int, base: mp.mpf, factor: mp.mpf, original: int, betas: tuple[Any, Any], *, truncate: bool
) -> list[mp.mpf]:
    """NTK-by-parts: theta_i / s * r_i + theta_i * (1 - r_i), the ramp r from the correction range."""
    beta_fast, beta_slow = exact(betas[0]), exact(betas[1])

    def correction_dim(rotations: mp.mpf) -> mp.mpf:
        return dim * mp.log(original / (rotations * 2 * mp.pi)) / (2 * mp.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low = mp.mpf(floor_checked(low, "yarn low correction dim"))
        high = -mp.mpf(floor_checked(-high, "yarn high correction dim"))
    low, high = max(low, mp.mpf(0)), min(high, mp.mpf(dim - 1))
    if low == high:
        high += mp.mpf("0.001")
    out = []
    for i, theta in enumerate(_default(dim, base)):
        ramp = min(max((i - low) / (high - low), mp.mpf(0)), mp.mpf(1))
        out.append(theta / factor * ramp + theta * (1 - ramp))
    return out


def _yarn(dim: int, base: mp.mpf, params: Mapping[str, Any]) -> tuple[list[mp.mpf], mp.mpf]:
    """NTK-by-parts blend of interpolated and extrapolated frequencies (YaRN §3.2, HF code path)."""
    factor = _yarn_factor(params)
    betas = (params.get("beta_fast") or 32, params.get("beta_slow") or 1)
    truncate = params.get("truncate", True)
    out = _yarn_blend(dim, base, factor, _original_max(params), betas, truncate=truncate)
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


def log_span(
    dim: int, *, base: float, scaling: Mapping[str, Any] | None = None, seq_len: int | None = None
) -> mp.mpf:
    """``L``: the largest ``|ln|`` an implementation exponentiates when it derives the frequencies.

    ``|ln b'| + |ln s|`` with ``b'`` the base raised to ``-2i/d`` (``b``; the NTK and
    dynamic bases) and ``s`` the largest divisor a scaling applies to a frequency
    (``factor`` of linear, YaRN, Llama 3 and proportional; the LongRoPE factor
    list in use; 1 otherwise).  An implementation that derives its frequencies
    in a dtype of unit roundoff ``u`` makes them wrong by up to about
    ``(3 L + 6) u`` relative: three roundings of the exponent (``ln b``, ``2i/d``,
    their product) of size ``L u``, plus a few for ``exp``/``pow``, the reciprocal,
    the divisor and a blend (the ``product`` class; see the tolerance guide).
    """
    params = dict(scaling or {})
    kind = params.get("rope_type", params.get("type", "default"))
    ln_base = mp.log(exact(base))
    divisor = mp.mpf(0)
    if kind in ("ntk", "dynamic"):
        factor = exact(params["factor"])
        stretch = factor
        if kind == "dynamic":
            lmax = int(params["max_position_embeddings"])
            length = lmax if seq_len is None else max(int(seq_len), lmax)
            stretch = factor * length / lmax - (factor - 1)
        ln_base += mp.mpf(dim) / (dim - 2) * mp.log(stretch)
    elif kind == "yarn":
        divisor = mp.log(_yarn_factor(params))
    elif kind in ("linear", "llama3"):
        divisor = mp.log(exact(params["factor"]))
    elif kind == "proportional":
        divisor = mp.log(exact(_get(params, "factor", 1.0)))
    elif kind == "longrope":
        use_long = seq_len is not None and int(seq_len) > _original_max(params)
        ext = params["long_factor"] if use_long else params["short_factor"]
        divisor = max(abs(mp.log(exact(e))) for e in ext)
    return abs(ln_base) + abs(divisor)


def ntk_vllm(dim: int, *, base: float, factor: float) -> list[mp.mpf]:
    """vLLM's ``"ntk"`` (``NTKScalingRotaryEmbedding``): theta_i = (b s)^(-2i/d) s^(-2/d).

    A different scheme from HF's ``"ntk"`` (b' = b s^(d/(d-2)), theta_i = b'^(-2i/d)) under the
    same name: the base is multiplied by the factor and every frequency divided by s^(2/d).
    """
    s = exact(factor)
    return [t / mp.power(s, mp.mpf(2) / dim) for t in _default(dim, exact(base) * s)]


def yarn_variant(
    dim: int,
    *,
    base: float,
    scaling: Mapping[str, Any],
    seq_len: int | None = None,
    attention_factor: str = "hf",
    truncate: str = "honoured",
) -> tuple[list[mp.mpf], mp.mpf]:
    """YaRN with each of its two variant axes chosen: the attention factor's formula and ``truncate``.

    ``attention_factor="hf"``: HF's rule (an explicit ``attention_factor`` wins; else
    ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)`` when both are truthy; else
    ``get_mscale(s, 1)``).  ``"deepseek"``: ``get_mscale(s, mscale) / get_mscale(s,
    mscale_all_dim)`` with the keys' defaults 1 and 0, ``attention_factor`` not read
    (DeepSeek-V2/V3, vLLM ``deepseek_yarn``).  ``truncate="honoured"``: the correction range
    is floored and ceiled unless ``truncate`` is false (HF, gpt-oss); ``"ignored"``: always.
    Both canonical is :func:`rope_frequencies`'s ``yarn``; both non-canonical is
    :func:`yarn_deepseek`.
    """
    params = dict(scaling)
    factor = (
        _yarn_factor(params) if attention_factor == "hf" else exact(params["factor"])
    )  # DeepSeek: required
    if attention_factor == "hf":
        betas = (params.get("beta_fast") or 32, params.get("beta_slow") or 1)
    else:
        betas = (params.get("beta_fast", 32), params.get("beta_slow", 1))
    honour = truncate == "honoured"
    out = _yarn_blend(
        dim,
        exact(base),
        factor,
        _original_max(params),
        betas,
        truncate=params.get("truncate", True) or not honour,
    )
    if attention_factor == "hf":
        return out, _yarn_attention_factor(params, factor)
    mscale, mscale_all_dim = params.get("mscale", 1), params.get("mscale_all_dim", 0)
    return out, _get_mscale(factor, mscale) / _get_mscale(factor, mscale_all_dim)


def yarn_deepseek(
    dim: int, *, base: float, scaling: Mapping[str, Any], seq_len: int | None = None
) -> tuple[list[mp.mpf], mp.mpf]:
    """DeepSeek's own YaRN: always truncated, ``mscale_all_dim`` defaulting to 0, no ``attention_factor``.

    DeepSeek-V2/V3's ``modeling_deepseek.py`` (``DeepseekV3YarnRotaryEmbedding``,
    Hugging Face hub ``deepseek-ai/DeepSeek-V3``) and vLLM's ``deepseek_yarn``
    (``vllm/model_executor/layers/rotary_embedding/deepseek_scaling_rope.py``,
    ``DeepseekScalingRotaryEmbedding(mscale=1, mscale_all_dim=0)``): the
    attention factor is ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)``
    with the keys' defaults 1 and 0, so ``mscale`` alone gives ``0.1 mscale ln s + 1``
    (HF ignores a lone ``mscale`` and gives ``0.1 ln s + 1``), and ``mscale_all_dim``
    alone ``1 / (0.1 mscale_all_dim ln s + 1)``.  The correction range is floored
    and ceiled whatever ``truncate`` says; ``factor`` is required.
    """
    return yarn_variant(dim, base=base, scaling=scaling, attention_factor="deepseek", truncate="ignored")


def longrope_phi3(
    dim: int, *, base: float, scaling: Mapping[str, Any], seq_len: int | None = None
) -> tuple[list[mp.mpf], mp.mpf]:
    """Phi-3's own LongRoPE: the attention factor from ``max / original``, never from ``factor``.

    Phi-3's ``modeling_phi3.py`` (``Phi3LongRoPEScaledRotaryEmbedding``, Hugging
    Face hub ``microsoft/Phi-3-mini-128k-instruct``), vLLM
    (``vllm/model_executor/layers/rotary_embedding/phi3_long_rope_scaled_rope.py``)
    and llama.cpp's converter: ``s = max_position_embeddings /
    original_max_position_embeddings``, attention factor ``sqrt(1 + ln s / ln L)``
    (1 for ``s <= 1``); the ``factor`` and ``attention_factor`` keys are not read.
    The factors switch as in HF (long iff ``seq_len > original``).
    """
    params = dict(scaling)
    original = _original_max(params)
    ratio = mp.mpf(int(params["max_position_embeddings"])) / original
    attention = mp.mpf(1) if ratio <= 1 else mp.sqrt(1 + mp.log(ratio) / mp.log(original))
    inv, _ = _longrope(dim, exact(base), params, seq_len)
    return inv, attention


def proportional_gemma4(
    dim: int, *, base: float, scaling: Mapping[str, Any], seq_len: int | None = None
) -> tuple[list[mp.mpf], mp.mpf]:
    """vLLM's Gemma 4 ``proportional``: ``b^(-2i/head_dim)`` for the rotated pairs, 0 beyond, no ``/ factor``.

    ``vllm/model_executor/layers/rotary_embedding/gemma4_rope.py``
    (``Gemma4RotaryEmbedding._compute_inv_freq``): ``get_rope`` builds it for
    ``rope_type="proportional"`` without reading ``factor``; HF divides by it.
    """
    params = {k: v for k, v in scaling.items() if k != "factor"}
    return _proportional(dim, exact(base), params), mp.mpf(1)


def xpos_scale(
    positions: Sequence[int], dim: int, *, scale_base: float, gamma: float, offset: int, layout: str
) -> tuple[list[list[mp.mpf]], list[list[mp.mpf]]]:
    """xPos (Sun et al. 2022): ``zeta_i^((m - c)/B)`` and its inverse, per position, expanded to ``dim``.

    ``zeta_i = (2i/d + gamma) / (1 + gamma)``, ``i < d/2``; ``c`` = ``offset``
    (0 in the paper, ``len(t) // 2`` in lucidrains' rotary-embedding-torch
    ``get_scale``, whose ``(arange(0, d, 2) + 0.4 d) / (1.4 d)`` is the same
    ``zeta`` for ``gamma = 0.4``).
    """
    g = exact(gamma)
    zetas = [(mp.mpf(2 * i) / dim + g) / (1 + g) for i in range(dim // 2)]
    q_rows, k_rows = [], []
    for m in positions:
        power = (exact(m) - exact(offset)) / exact(scale_base)
        q_rows.append(_expand([mp.power(z, power) for z in zetas], layout))
        k_rows.append(_expand([mp.power(z, -power) for z in zetas], layout))
    return q_rows, k_rows


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
