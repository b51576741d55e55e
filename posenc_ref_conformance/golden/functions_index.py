"""Names of the canonical functions (stdlib only, for the CLI without mpmath)."""

from __future__ import annotations

from ..adapters.base import CANONICAL_FUNCTIONS

__all__ = ["FUNCTION_NAMES"]

FUNCTION_NAMES = CANONICAL_FUNCTIONS
