"""Property checks every correct implementation passes, seeded and reproducible.

Each invariant calls the adapter's canonical functions (NumPy in, anything
array-like out), so it tests the implementation without golden values: RoPE's
relative-shift invariance, norm preservation, identity at 0 and layout
equivalence; sinusoidal boundedness and shift-linearity; ALiBi's Toeplitz
structure, causal-form equivalence and blockwise construction; T5 bucket range,
monotonicity and sign partition; Shaw clipping; NoPE permutation equivariance.
Results are ``CaseResult`` rows with ids ``invariant/<scheme>/<name>[/<variant>]``.
The framework is :mod:`.core`; one module per family registers its checks.
"""

from __future__ import annotations

from . import alibi, nope, relative, rope, sinusoidal, t5  # noqa: F401 - registration
from .core import INVARIANTS, BeyondPrecision, Invariant, InvariantFailure, phase_tolerance, run_invariants

__all__ = [
    "INVARIANTS",
    "BeyondPrecision",
    "Invariant",
    "InvariantFailure",
    "phase_tolerance",
    "run_invariants",
]
