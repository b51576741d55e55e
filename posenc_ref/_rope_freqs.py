"""The :class:`RopeFrequencies` type: validated inverse frequencies, their exact turns, and the multiplier.

Built by :func:`posenc_ref.rope_frequencies` (from a scaling formula) or by
:meth:`RopeFrequencies.from_inv_freq` (from frequencies of your own); every
instance is validated on construction, so :func:`posenc_ref.rope_cos_sin`
never meets NaN, negative or mismatched tables.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from . import _compat
from ._angles import PI
from ._validate import (
    MAX_CHANNELS,
    check_compute_dtype,
    check_device,
    check_finite_values,
    check_float_array,
    check_namespace,
    check_real,
    check_sequence,
    namespace,
    text,
    type_error,
    value_error,
)

__all__ = ["RopeFrequencies"]

_TWO_PI_EXACT = 2 * Fraction(PI)  # turns of inv_freq values taken as exact binary numbers


@dataclass(frozen=True, eq=False)
class RopeFrequencies:
    """Inverse frequencies of the rotated pairs and the cos/sin multiplier.

    Build one with :func:`posenc_ref.rope_frequencies` or, from an
    ``inv_freq`` of your own, with :meth:`from_inv_freq`.  Every instance is
    validated on construction.

    Attributes
    ----------
    inv_freq : array, shape ``(n,)``, real floating, ``1 <= n <= 2**14``
        ``theta_i`` (float64 where the backend has it), finite and ``>= 0``
        (0: a pair that is not rotated, as ``proportional`` scaling makes).
        Values are checked where they can be read (not on Dask or under
        ``jax.jit``).
    attention_factor : float
        Multiplies cos and sin (YaRN's ``mscale``, LongRoPE's scale); finite
        and > 0; 1.0 for most types.
    turns : tuple of Fraction, optional
        ``theta_i / 2pi`` as exact rationals, one per entry of ``inv_freq``
        and agreeing with it to the rounding of its dtype; used by
        :func:`posenc_ref.rope_cos_sin` for exact phase reduction.  ``None``:
        the values of ``inv_freq`` are taken as exact on the device instead
        (phases accurate to about ``|m| = 2**50`` in float64, ``2**21`` in
        float32).

    Examples
    --------
    Default RoPE of ``dim=4``: ``theta_i = 10000**(-2i/4)``, i.e. 1 and 0.01,
    with exact turns; built directly from an array, it has no turns.

    >>> import numpy as np
    >>> from posenc_ref import rope_frequencies
    >>> f = rope_frequencies(4)
    >>> f.inv_freq.tolist(), f.attention_factor, len(f.turns)
    ([1.0, 0.01], 1.0, 2)
    >>> g = RopeFrequencies(np.asarray([1.0, 0.01]), attention_factor=2.0)
    >>> g.attention_factor, g.turns is None
    (2.0, True)
    """

    inv_freq: Any
    attention_factor: float = 1.0
    turns: tuple[Fraction, ...] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        xp = namespace(inv_freq=self.inv_freq)
        check_float_array(self.inv_freq, "inv_freq", xp, ndim=1)
        count = self.inv_freq.shape[0]
        if count is None or not 1 <= count <= MAX_CHANNELS // 2:
            rule = f"of length 1 to {MAX_CHANNELS // 2} (dim // 2)"
            raise value_error("inv_freq", rule, text(f"shape {tuple(self.inv_freq.shape)}"))
        check_finite_values(self.inv_freq, "inv_freq", xp, minimum=0.0)
        factor = check_real(self.attention_factor, "attention_factor", exclusive_minimum=0.0)
        object.__setattr__(self, "attention_factor", factor)
        if self.turns is not None:
            object.__setattr__(self, "turns", _check_turns(self.turns, self.inv_freq, xp))

    @classmethod
    def from_inv_freq(
        cls,
        inv_freq: Any,
        /,
        attention_factor: float = 1.0,
        *,
        compute_dtype: Any = None,
        xp: Any = None,
        device: Any = None,
    ) -> RopeFrequencies:
        r"""Validated frequencies from an ``inv_freq`` of your own, with exact turns for the phases.

        Parameters
        ----------
        inv_freq : array or sequence of real numbers, length ``dim // 2``
            The angular frequencies :math:`\theta_i`, finite and ``>= 0``.
            Their values are taken as exact: the float64 values of Python
            numbers, or the values of the array in its own dtype.
        attention_factor : float, optional
            Multiplies cos and sin; finite and > 0.  Default 1.0.
        compute_dtype : dtype, optional
            ``xp.float32`` or ``xp.float64`` for the stored ``inv_freq``
            (default: an array keeps its dtype; numbers become float64 where
            available).
        xp, device : optional
            Namespace and device for numbers (default NumPy); an array stays
            where it is, and ``xp`` must then be ``None`` or its namespace.

        Returns
        -------
        RopeFrequencies
            With ``turns`` :math:`= \theta_i / 2\pi` computed exactly from the
            values (when they can be read: not for Dask arrays or under
            ``jax.jit``, where the device reduction is used).

        Raises
        ------
        TypeError
            ``inv_freq`` neither a float array nor a sequence of reals;
            ``xp`` not the array's namespace; a dtype of the wrong kind.
        ValueError
            Empty or too long, NaN, infinite or negative values, a 2-D array,
            ``attention_factor <= 0``.

        Notes
        -----
        .. math:: t_i = \theta_i / 2\pi

        with :math:`\pi` to 80 digits, so :func:`posenc_ref.rope_cos_sin`
        reduces :math:`m t_i` modulo one turn exactly at any position (the
        conformance suite's adapter builds its frequencies this way).

        Examples
        --------
        >>> import array_api_strict as xp
        >>> f = RopeFrequencies.from_inv_freq([1.0, 0.01], xp=xp)
        >>> f.inv_freq.dtype, len(f.turns)
        (array_api_strict.float64, 2)
        """
        if _compat.namespace_of(inv_freq) is not None:
            array_xp = namespace(inv_freq=inv_freq)
            if xp is not None and check_namespace(xp) is not array_xp:
                raise type_error("xp", f"None or the namespace of inv_freq ({array_xp.__name__})", xp)
            if device is not None:
                raise value_error("device", "None when inv_freq is an array (it stays on its device)", device)
            check_float_array(inv_freq, "inv_freq", array_xp, ndim=1)
            check_finite_values(inv_freq, "inv_freq", array_xp, minimum=0.0)  # before its turns
            if compute_dtype is not None:
                dtype = check_compute_dtype(
                    compute_dtype, "compute_dtype", array_xp, _compat.device(inv_freq)
                )
                inv_freq = _compat.astype(inv_freq, dtype, xp=array_xp)
            values = _host_values(inv_freq)
            array = inv_freq
        else:
            rule = f"an array or a sequence of 1 to {MAX_CHANNELS // 2} real numbers"
            entries = check_sequence(inv_freq, "inv_freq", rule=rule, minimum=1, maximum=MAX_CHANNELS // 2)
            values = [check_real(v, f"inv_freq[{i}]", minimum=0.0) for i, v in enumerate(entries)]
            xp = check_namespace(xp)
            device = check_device(device, xp)
            dtype = check_compute_dtype(compute_dtype, "compute_dtype", xp, device)
            array = _compat.asarray(values, xp=xp, dtype=dtype, device=device)
        turns = None if values is None else tuple(Fraction(v) / _TWO_PI_EXACT for v in values)
        return cls(array, attention_factor, turns)


def _host_values(x: Any) -> list[float] | None:
    """The values of a small 1-D array as Python floats; ``None`` where they are not known."""
    if not _compat.values_known(x):
        return None
    return [float(v) for v in _compat.to_numpy(x).tolist()]


def _check_turns(turns: object, inv_freq: Any, xp: Any) -> tuple[Fraction, ...]:
    """``turns`` as Fractions: one finite, non-negative rational per entry of ``inv_freq``, each
    within a few ulp of the dtype of ``inv_freq`` of ``inv_freq / 2pi`` (where values are known)."""
    rule = (
        f"None or a sequence of {inv_freq.shape[0]} exact rationals (Fraction or Decimal), one per inv_freq"
    )
    entries = check_sequence(turns, "turns", rule=rule)
    if len(entries) != inv_freq.shape[0]:
        raise value_error("turns", rule, text(f"{len(entries)} entries"))
    out = []
    for i, t in enumerate(entries):
        if isinstance(t, bool) or not isinstance(t, (Fraction, decimal.Decimal, int)):
            raise type_error(f"turns[{i}]", "a Fraction or Decimal", t)
        if isinstance(t, decimal.Decimal) and not t.is_finite():
            raise value_error(f"turns[{i}]", "finite", t)
        t = Fraction(t)
        if t < 0:
            raise value_error(f"turns[{i}]", ">= 0", t)
        out.append(t)
    values = _host_values(inv_freq)
    if values is not None:
        info = xp.finfo(inv_freq.dtype)
        eps, tiny = float(info.eps), float(info.smallest_normal)
        for i, (t, v) in enumerate(zip(out, values, strict=True)):
            w = float(t * _TWO_PI_EXACT)
            if abs(w - v) > 2 * eps * max(abs(v), abs(w)) + tiny:
                rule = f"inv_freq[{i}] / 2pi = {v / (2 * math.pi)!r} to the rounding of {inv_freq.dtype}"
                raise value_error(f"turns[{i}]", rule, text(f"{float(t)!r}"))
    return tuple(out)
