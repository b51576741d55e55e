r"""RoPE frequencies with every context-extension scaling that HF transformers ships.

:func:`rope_frequencies` returns the inverse frequencies ``theta_i`` of the
``dim // 2`` rotated pairs and the factor that multiplies cos and sin, like
HF's ``ROPE_INIT_FUNCTIONS`` (``modeling_rope_utils.py``), with HF's parameter
names, defaults and semantics.  The values are computed on the host in
60-digit decimal arithmetic, rounded once to the compute dtype, and also kept
as exact turns ``theta_i / 2pi`` so that :func:`posenc_ref.rope_cos_sin` can
evaluate ``cos(m theta_i)`` accurately at large positions ``m``.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from . import _compat
from ._angles import PI
from ._rope_freqs import RopeFrequencies
from ._rope_params import SCALING_TYPES, ScalingKeys
from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    check_compute_dtype,
    check_device,
    check_dim,
    check_int,
    check_namespace,
    check_real,
    type_error,
    value_error,
)

__all__ = ["SCALING_TYPES", "RopeFrequencies", "rope_frequencies"]  # RopeFrequencies lives in _rope_freqs

D = decimal.Decimal
_CONTEXT = decimal.Context(prec=60)
_TWO_PI = _CONTEXT.multiply(2, PI)  # module-level arithmetic would use the 28-digit default context


def _thetas(dim: int, log_base: D, *, count: int | None = None) -> list[D]:
    """``base**(-2i/dim)`` for ``i < count`` (default ``dim // 2``), from ``ln(base)``."""
    count = dim // 2 if count is None else count
    return [(-(D(2 * i) / dim) * log_base).exp() for i in range(count)]


def _default(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    return _thetas(dim, base.ln()), D(1)


def _linear(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    factor = D(keys.factor())
    return [t / factor for t in _thetas(dim, base.ln())], D(1)


def _check_dim_above_two(dim: int, rope_type: str) -> None:
    if dim <= 2:
        rule = f"> 2 for rope_type {rope_type!r} (the base exponent is dim/(dim-2))"
        raise value_error("dim", rule, dim)


def _ntk(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    _check_dim_above_two(dim, "ntk")
    factor = D(keys.factor())
    return _thetas(dim, base.ln() + D(dim) / (dim - 2) * factor.ln()), D(1)


def _dynamic(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    _check_dim_above_two(dim, "dynamic")
    factor = D(keys.factor())
    limit = keys.integer("max_position_embeddings", required=True)
    length = D(limit if seq_len is None else max(seq_len, limit))
    stretch = factor * length / limit - (factor - 1)
    return _thetas(dim, base.ln() + D(dim) / (dim - 2) * stretch.ln()), D(1)


def _yarn_mscale(scale: D, mscale: D | None = None) -> D:
    mscale = D(1) if mscale is None else mscale
    return D(1) if scale <= 1 else D("0.1") * mscale * scale.ln() + 1


_HF_FALSY = "HF reads 0 as absent; leave the key out for its default"


def _yarn_attention_factor(keys: ScalingKeys, factor: D) -> D:
    explicit = keys.real("attention_factor", exclusive_minimum=0.0)
    keys.real("mscale", exclusive_minimum=0.0, hint=_HF_FALSY)  # validated even when unused
    keys.real("mscale_all_dim", exclusive_minimum=0.0, hint=_HF_FALSY)
    if explicit is not None:
        return D(explicit)
    mscale, mscale_all_dim = keys.real("mscale"), keys.real("mscale_all_dim")
    if mscale is not None and mscale_all_dim is not None:  # both present (HF: both truthy)
        return _yarn_mscale(factor, D(mscale)) / _yarn_mscale(factor, D(mscale_all_dim))
    return _yarn_mscale(factor)


def _yarn_range(dim: int, base: D, keys: ScalingKeys) -> tuple[D, D]:
    """HF's ``find_correction_range``: pair indices where the ramp starts and ends."""
    beta_fast = keys.real("beta_fast", exclusive_minimum=0.0, hint=_HF_FALSY)
    beta_slow = keys.real("beta_slow", exclusive_minimum=0.0, hint=_HF_FALSY)
    beta_fast = 32.0 if beta_fast is None else beta_fast
    beta_slow = 1.0 if beta_slow is None else beta_slow
    if beta_fast <= beta_slow:
        rule = f"> scaling['beta_slow'] ({beta_slow!r})"
        raise value_error(keys.name("beta_fast"), rule, beta_fast)
    original = D(keys.original_max())

    def correction_dim(rotations: float) -> D:
        return dim * (original / (D(rotations) * _TWO_PI)).ln() / (2 * base.ln())

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if keys.flag("truncate", True):
        low = low.to_integral_value(rounding=decimal.ROUND_FLOOR)
        high = high.to_integral_value(rounding=decimal.ROUND_CEILING)
    low, high = max(low, D(0)), min(high, D(dim - 1))
    if low == high:
        high += D("0.001")  # HF's guard against a zero-width ramp
    return low, high


def _yarn(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    factor = D(keys.factor(derive=True))
    attention_factor = _yarn_attention_factor(keys, factor)
    low, high = _yarn_range(dim, base, keys)
    out = []
    for i, theta in enumerate(_thetas(dim, base.ln())):
        ramp = min(max((i - low) / (high - low), D(0)), D(1))
        out.append(theta / factor * ramp + theta * (1 - ramp))
    return out, attention_factor


def _llama3(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    factor = D(keys.factor())
    low_factor = D(keys.real("low_freq_factor", required=True, exclusive_minimum=0.0))
    high_factor = D(keys.real("high_freq_factor", required=True, exclusive_minimum=0.0))
    if high_factor < low_factor:
        rule = f">= {keys.name('low_freq_factor')} ({float(low_factor)!r})"
        raise value_error(keys.name("high_freq_factor"), rule, float(high_factor))
    original = D(keys.original_max())
    low_wavelength, high_wavelength = original / low_factor, original / high_factor
    out = []
    for theta in _thetas(dim, base.ln()):
        wavelength = _TWO_PI / theta
        if wavelength > low_wavelength:
            out.append(theta / factor)
        elif wavelength < high_wavelength:
            out.append(theta)
        else:  # medium band, both edges included (HF); smooth = 0 when the band is a point (vLLM)
            width = high_factor - low_factor
            smooth = (original / wavelength - low_factor) / width if width else D(0)
            out.append((1 - smooth) * theta / factor + smooth * theta)
    return out, D(1)


def _longrope(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    original = keys.original_max()
    long_factor = keys.factor_list("long_factor", dim // 2)
    short_factor = keys.factor_list("short_factor", dim // 2)
    keys.real("factor", minimum=1.0)  # validated even when an explicit attention_factor makes it unused
    explicit = keys.real("attention_factor", exclusive_minimum=0.0)
    if explicit is not None:
        attention_factor = D(explicit)
    else:
        factor = D(keys.factor(derive=True))
        if factor > 1 and original < 2:  # ln(original) = 0: HF's formula divides by zero
            rule = ">= 2 (LongRoPE's attention factor divides by its logarithm)"
            raise value_error(keys.name("original_max_position_embeddings"), rule, original)
        attention_factor = D(1) if factor <= 1 else (1 + factor.ln() / D(original).ln()).sqrt()
    extension = long_factor if seq_len is not None and seq_len > original else short_factor
    return [t / D(e) for t, e in zip(_thetas(dim, base.ln()), extension, strict=True)], attention_factor


def _proportional(dim: int, base: D, keys: ScalingKeys, seq_len: int | None) -> tuple[list[D], D]:
    factor = D(keys.factor(default=1.0))
    proportion = keys.real("partial_rotary_factor")
    proportion = 1.0 if proportion is None else proportion
    rotated = int(proportion * dim // 2)  # HF: int(partial_rotary_factor * head_dim // 2)
    thetas = _thetas(dim, base.ln(), count=rotated) + [D(0)] * (dim // 2 - rotated)
    return [t / factor for t in thetas], D(1)


_FORMULAS: dict[str, Callable[[int, D, ScalingKeys, int | None], tuple[list[D], D]]] = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
    "proportional": _proportional,
}


def _check_scaling(scaling: object) -> Mapping[str, Any]:
    if scaling is None:
        return {"rope_type": "default"}
    if not isinstance(scaling, Mapping):
        raise type_error("scaling", "None or a mapping of HF rope_parameters keys", scaling)
    return scaling


def exact_frequencies(
    dim: int,
    base: float,
    scaling: Mapping[str, Any] | None,
    seq_len: int | None,
    *,
    scaling_name: str = "scaling",
) -> tuple[list[D], D]:
    """Validate the arguments and return ``theta_i`` and the attention factor as 60-digit decimals.

    ``scaling_name`` is how messages name the scaling dict (``config['rope_scaling']``).
    """
    dim = check_dim(dim, even=True)
    base = check_real(base, "base", exclusive_minimum=1.0)
    if seq_len is not None:
        seq_len = check_int(seq_len, "seq_len", maximum=POSITION_LIMIT, reason=POSITION_REASON)
    scaling = _check_scaling(scaling)
    keys = ScalingKeys(scaling, base=base, name=scaling_name)
    with decimal.localcontext(_CONTEXT):
        return _FORMULAS[keys.rope_type](dim, D(base), keys, seq_len)


def rope_frequencies(
    dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
    compute_dtype: Any = None,
    xp: Any = None,
    device: Any = None,
) -> RopeFrequencies:
    r"""Inverse frequencies and cos/sin multiplier of (scaled) rotary position embeddings.

    Matches HF transformers' ``ROPE_INIT_FUNCTIONS`` (v5 ``rope_parameters``)
    type by type.  ``ntk`` is bloc97's static NTK-aware base, as in HF's
    transient ``"ntk"`` type and lucidrains' ``theta_rescale_factor`` (vLLM's
    ``"ntk"`` type is a different formula).  Values are computed in 60-digit
    decimal arithmetic and rounded once to the compute dtype (HF builds them
    in float32).

    Parameters
    ----------
    dim : int
        Number of rotated channels (even).  For ``proportional`` it is the full
        ``head_dim`` and ``scaling['partial_rotary_factor']`` picks the rotated
        share; for every other type pass ``int(head_dim * partial_rotary_factor)``.
    base : float, optional
        The RoPE base ``b`` (HF ``rope_theta``), > 1.  Default 10000.0.
    scaling : mapping, optional
        HF ``rope_parameters`` / ``rope_scaling`` keys: ``rope_type`` (or legacy
        ``type``), one of ``SCALING_TYPES``, and that type's keys (``factor``,
        ``original_max_position_embeddings``, ``beta_fast``, ``beta_slow``,
        ``mscale``, ``mscale_all_dim``, ``attention_factor``, ``truncate``,
        ``low_freq_factor``, ``high_freq_factor``, ``short_factor``,
        ``long_factor``, ``partial_rotary_factor``).  Types that need the
        model's ``max_position_embeddings`` (``dynamic``; ``yarn`` and
        ``longrope`` without ``factor``) read it from this dict.  A
        ``rope_theta`` key must equal ``base``.  ``None`` means ``default``.
    seq_len : int, optional
        Current sequence length (``max(position) + 1``).  ``dynamic`` uses
        ``max(seq_len, max_position_embeddings)`` (``None``: the limit);
        ``longrope`` uses ``long_factor`` iff ``seq_len > original_max``
        (``None``: short).  Ignored by the other types, as in HF.
    compute_dtype : dtype, optional
        ``xp.float32`` or ``xp.float64`` for ``inv_freq``; default float64
        where the backend/device has it.  Float32 here also makes
        :func:`posenc_ref.rope_cos_sin` use its float32 path.
    xp, device : optional
        Namespace (default NumPy) and device of the returned array.

    Returns
    -------
    RopeFrequencies
        ``inv_freq`` of shape ``(dim // 2,)`` in the compute dtype on
        ``device``, ``attention_factor`` (float) and exact ``turns``.

    Raises
    ------
    TypeError
        ``dim``/``seq_len`` not integers, ``scaling`` not a mapping, a key of
        the wrong type (a set or dict for a factor list, a nested dict for a
        number), ``xp`` not a namespace, ``compute_dtype`` not a dtype object.
    ValueError
        ``dim`` odd, not positive or above ``2**15`` (host frequencies would
        take minutes), ``base <= 1``, unknown ``rope_type``, unknown or missing
        keys, ``factor < 1``, ``beta_fast <= beta_slow``,
        ``high_freq_factor < low_freq_factor``, factor lists whose length is
        not ``dim // 2``, and a key that is present but 0 or negative where
        HF would read 0 as "absent" (``beta_fast``, ``beta_slow``, ``mscale``,
        ``mscale_all_dim``): a missing or ``None`` key takes the default, a
        present one is always checked.

    Notes
    -----
    With :math:`\theta_i = b^{-2i/d}`, :math:`i < d/2`, and factor :math:`s`:

    - ``default``: :math:`\theta_i`.  ``linear`` (position interpolation, Chen
      et al. 2023): :math:`\theta_i / s`.
    - ``ntk``: base :math:`b s^{d/(d-2)}`.  ``dynamic`` (emozilla 2023; HF):
      base :math:`b\,(sL/L_{max} - (s-1))^{d/(d-2)}`, :math:`L = \max(\text{seq\_len}, L_{max})`.
    - ``yarn`` (Peng et al. 2023, "NTK-by-parts" in HF's form):
      :math:`\theta'_i = r_i\,\theta_i/s + (1-r_i)\,\theta_i`,
      :math:`r_i = \mathrm{clip}((i - lo)/(hi - lo), 0, 1)`,
      :math:`lo, hi = d \ln(L_{orig}/(2\pi\beta)) / (2\ln b)` for
      ``beta_fast`` and ``beta_slow`` (floor/ceil when ``truncate``, then
      clamped to ``[0, d-1]``; ``hi += 0.001`` when equal).  Attention factor:
      ``attention_factor``, else :math:`m(s, \mu)/m(s, \mu_{all})` when
      ``mscale`` and ``mscale_all_dim`` are both given (DeepSeek; both > 0), else
      :math:`m(s, 1)`, with :math:`m(s, \mu) = 0.1\mu\ln s + 1` (1 if
      :math:`s \le 1`).  ``factor`` defaults to ``max/original``.
    - ``llama3`` (Meta's ``apply_scaling``): with wavelength
      :math:`\lambda_i = 2\pi/\theta_i`, :math:`\theta_i/s` if
      :math:`\lambda_i > L/f_{low}`, :math:`\theta_i` if
      :math:`\lambda_i < L/f_{high}`, else (edges included)
      :math:`(1-\sigma)\theta_i/s + \sigma\theta_i`,
      :math:`\sigma = (L/\lambda_i - f_{low})/(f_{high} - f_{low})`
      (0 when :math:`f_{low} = f_{high}`, as vLLM guards it).
    - ``longrope`` (Ding et al. 2024; Phi-3): :math:`\theta_i / e_i`, ``e`` =
      ``long_factor`` if ``seq_len > original_max`` else ``short_factor``;
      attention factor :math:`\sqrt{1 + \ln s / \ln L_{orig}}` (1 if
      :math:`s \le 1`), :math:`s` = ``factor`` or ``max/original``.
    - ``proportional`` (HF): :math:`b^{-2i/d_{head}} / s` for the first
      ``int(p d_head // 2)`` pairs, 0 for the rest.

    References
    ----------
    Su et al., RoFormer, arXiv:2104.09864; Chen et al., arXiv:2306.15595;
    Peng et al., YaRN, arXiv:2309.00071; Ding et al., LongRoPE, arXiv:2402.13753;
    HF ``transformers/modeling_rope_utils.py``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> f = rope_frequencies(64, base=150000.0, xp=xp, scaling={
    ...     "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
    ...     "original_max_position_embeddings": 4096, "truncate": False})
    >>> round(f.attention_factor, 5), f.inv_freq.shape
    (1.34657, (32,))
    """
    thetas, attention_factor = exact_frequencies(dim, base, scaling, seq_len)
    xp = check_namespace(xp)
    device = check_device(device, xp)
    dtype = check_compute_dtype(compute_dtype, "compute_dtype", xp, device)
    with decimal.localcontext(_CONTEXT):
        turns = tuple(Fraction(t / _TWO_PI) for t in thetas)
    inv_freq = _compat.asarray([float(t) for t in thetas], xp=xp, dtype=dtype, device=device)
    return RopeFrequencies(inv_freq, float(attention_factor), turns)
