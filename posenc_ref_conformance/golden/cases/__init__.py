"""The golden cases: inputs, rationale flags and expected errors, one module per family.

Ids are stable (``function/group/name``); adding a case never renames another.
Free float inputs (x, tables, slopes, q/k/v) are dyadic rationals or float32
values, exactly representable in float32 *and* float64, so a float32 run sees
the same inputs as a float64 run; ALiBi slopes are the exact slopes rounded to
float64 (so a float64 library computing its own slopes gets the same ones), and
their float32 tolerances include the cast.  Inputs derived from formulas (``inv_freq``)
come from the oracle, rounded once to float64.  Importing this package runs the
family modules, in this order, which declares the canonical functions
(:data:`..functions.FUNCTIONS`) and fills :data:`CASES`.
"""

from __future__ import annotations

from . import absolute, rope, rope_tables, rope_base, rope_positions, rope_2d  # noqa: F401 - registration, in canonical order  # isort: skip
from . import t5, alibi, shaw, bias, kernel_bias  # noqa: F401 - registration, in canonical order  # isort: skip
from . import window_bias  # noqa: F401 - registration, after kernel_bias  # isort: skip
from . import deberta  # noqa: F401 - registration, after window_bias  # isort: skip
from . import grid_resize  # noqa: F401 - registration, after the bias families  # isort: skip
from . import vision_sine  # noqa: F401 - registration, after the canonical families  # isort: skip
from . import vision_features  # noqa: F401 - registration: SAM Fourier features, NaViT, 2-D tables  # isort: skip
from . import transformer_xl  # noqa: F401 - registration: Transformer-XL distances, table, shift, score  # isort: skip
from . import t5_variants  # noqa: F401 - registration: LayoutLM, UDOP, WavLM, ProphetNet, CPM-Ant  # isort: skip
from . import reach  # noqa: F401 - the reach sweeps, after every family module declared its functions  # isort: skip
from ..functions import FUNCTIONS
from ._common import CASES, B, Case, F, I

__all__ = ["CASES", "FUNCTIONS", "B", "Case", "F", "I"]
