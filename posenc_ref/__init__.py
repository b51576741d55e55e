"""posenc-ref: reference implementations of transformer positional encodings.

Every function is written against the Python array API standard and runs
unchanged on NumPy, CuPy, MLX, and (through array-api-compat) PyTorch, JAX and
Dask.  See README.md and the documentation for the conventions each option
matches.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Each family module adds its public names here, one import line per module.
# --- absolute ---
# --- RoPE ---
# --- relative / bias ---

__all__ = [
    "__version__",
]
