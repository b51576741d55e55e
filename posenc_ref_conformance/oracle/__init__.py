"""The oracle: every scheme of posenc_ref again, in pure Python + mpmath.

Written from the papers' formulas and the reference implementations' exact
expressions (see each module), importing nothing from ``posenc_ref``.  Results
are :class:`mpmath.mpf` values at the current precision (:func:`working_precision`);
:func:`round_float64` rounds them once for the golden files.
"""

from __future__ import annotations

from . import (
    alibi,
    attention,
    deberta,
    fourier_features,
    grid_resize,
    kernel_bias,
    learned,
    learned_2d,
    mrope,
    navit,
    relative,
    rope,
    rope_2d,
    sinusoidal,
    t5,
    transformer_xl,
    vision_sine,
    window_bias,
)
from ._numeric import (
    CHECK_DIGITS,
    DEFAULT_DIGITS,
    IllConditioned,
    exact,
    round_float32,
    round_float64,
    working_precision,
)

__all__ = [
    "CHECK_DIGITS",
    "DEFAULT_DIGITS",
    "IllConditioned",
    "alibi",
    "attention",
    "deberta",
    "exact",
    "fourier_features",
    "grid_resize",
    "kernel_bias",
    "learned",
    "learned_2d",
    "mrope",
    "navit",
    "relative",
    "rope",
    "rope_2d",
    "round_float32",
    "round_float64",
    "sinusoidal",
    "t5",
    "transformer_xl",
    "vision_sine",
    "window_bias",
    "working_precision",
]
