"""Property checks every correct implementation passes, seeded and reproducible.

Each invariant calls the adapter's canonical functions (NumPy in, anything
array-like out), so it tests the implementation without golden values: RoPE's
relative-shift invariance, norm preservation, identity at 0 and layout
equivalence; sinusoidal boundedness and shift-linearity; ALiBi's Toeplitz
structure, causal-form equivalence, blockwise construction, own slopes and padding;
T5 bucket range, monotonicity and sign partition, and the bias as the bucket's table
row (LayoutLM's bias as a sum of T5 biases, UDOP's shift invariance and prefix rows, WavLM's gate
times the bias, ProphetNet's streams as causal buckets, CPM-Ant's segment rows);
Shaw clipping; NoPE permutation equivariance; Sandwich and KERPLE Toeplitz
structure; token positions under padding; the Swin/BEiT window index (Toeplitz-block-Toeplitz,
centre row, table rows, cls rows), Swin-V2 coordinate symmetry and SAM decomposed terms (shift, separable);
the Transformer-XL shift reading each query's own distance, and the roles of its u and v biases.
structure; token positions under padding; grid resizing (same size is the identity,
constants stay, bilinear with aligned corners is exact on planes).
structure; token positions under padding; DETR's sine under padding and per axis, the coordinate
sinusoid's y-first blocks, the 2-D sincos table's per-axis structure.
structure; token positions under padding; 2-D RoPE's shift structure per axis; DeBERTa's log bucket
(odd, exact to mid, monotone) and its c2p/p2c rows (equal, Toeplitz, in range).
Results are ``CaseResult`` rows with ids ``invariant/<scheme>/<name>[/<variant>]``.
The framework is :mod:`.core`; one module per family registers its checks.
"""

from __future__ import annotations

from . import (  # noqa: F401 - registration
    alibi,
    deberta,
    grid_resize,
    kernel_bias,
    learned,
    nope,
    relative,
    rope,
    rope_2d,
    sinusoidal,
    t5,
    transformer_xl,
    vision_features,
    vision_sine,
    window_bias,
)
from .core import INVARIANTS, BeyondPrecision, Invariant, InvariantFailure, phase_tolerance, run_invariants

__all__ = [
    "INVARIANTS",
    "BeyondPrecision",
    "Invariant",
    "InvariantFailure",
    "phase_tolerance",
    "run_invariants",
]
