"""mlx-lm's initialize_rope(..., traditional=True, {"rope_type": "longrope", ...}) rotates half-split pairs.

Run (any machine with mlx-lm; on Linux ``pip install "mlx[cpu]==0.32.4" "mlx-lm==0.32.2"``)::

    python docs/matrix/repro/mlx_lm_longrope_traditional.py

Found by the posenc-ref conformance case ``rope_from_base/interleaved/longrope-seq-len-4097``
(adapter ``mlx_lm``; ``.../interleaved/longrope-seq-len-4096`` fails for this and for the
short factors, see ``mlx_lm_longrope_short_factor.py``).

``initialize_rope(dims, base, traditional, scaling_config, max_position_embeddings)`` honours
``traditional`` (pairs ``(2i, 2i + 1)``) for every scaling type except ``longrope``: it builds
``SuScaledRoPE``, which has no ``traditional`` parameter and calls ``mx.fast.rope`` with
``traditional=False`` (pairs ``(i, i + d/2)``).  The argument is dropped without an error, so a
model with interleaved q/k weights and a LongRoPE config gets the wrong rotation silently.

The script rotates x with ``traditional=True`` and compares with the rotation formula in float64
(LongRoPE frequencies ``base**(-2i/d) / long_factor_i``, attention factor
``sqrt(1 + ln(max/original) / ln(original))``, the long factors since 4097 > 4096) in the
interleaved layout asked for and in the half-split one: mlx-lm matches the half-split.
"""

from __future__ import annotations

import math

import mlx.core as mx
import numpy as np
from mlx_lm.models.rope_utils import initialize_rope

DIM, BASE, ORIGINAL, MAX = 16, 10000.0, 4096, 131072
SHORT = [1.0, 1.0625, 1.125, 1.1875, 1.25, 1.3125, 1.375, 1.4375]
LONG = [1.0, 2.5, 4.0, 5.5, 7.0, 8.5, 10.0, 11.5]
SCALING = {
    "rope_type": "longrope",
    "original_max_position_embeddings": ORIGINAL,
    "short_factor": SHORT,
    "long_factor": LONG,
}


def paper_rope(x: np.ndarray, positions: np.ndarray, *, interleaved: bool) -> np.ndarray:
    """LongRoPE (long factors) in float64; pairs (2i, 2i+1) if interleaved else (i, i + d/2)."""
    inv_freq = 1.0 / (np.asarray(LONG) * BASE ** (np.arange(0, DIM, 2) / DIM))
    attention = math.sqrt(1 + math.log(MAX / ORIGINAL) / math.log(ORIGINAL))
    angle = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(angle) * attention, np.sin(angle) * attention
    a, b = (x[:, 0::2], x[:, 1::2]) if interleaved else (x[:, : DIM // 2], x[:, DIM // 2 :])
    ra, rb = a * cos - b * sin, b * cos + a * sin
    if interleaved:
        return np.stack([ra, rb], axis=-1).reshape(x.shape)
    return np.concatenate([ra, rb], axis=-1)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, size=(3, DIM)).astype(np.float32)
    offset = ORIGINAL - 2  # positions 4094, 4095, 4096: seq_len 4097 > original, long factors
    positions = offset + np.arange(3)
    layer = initialize_rope(DIM, BASE, True, SCALING, MAX)  # traditional=True: interleaved pairs
    got = np.asarray(layer(mx.array(x[None]), offset=offset)[0]).astype(np.float64)
    interleaved = paper_rope(x.astype(np.float64), positions, interleaved=True)
    half = paper_rope(x.astype(np.float64), positions, interleaved=False)
    print(f"initialize_rope(traditional=True, longrope) -> {type(layer).__name__}")
    print(f"  max |mlx-lm - interleaved formula| = {np.max(np.abs(got - interleaved)):.3e}  (expected)")
    print(f"  max |mlx-lm - half-split formula|  = {np.max(np.abs(got - half)):.3e}")
    if np.max(np.abs(got - interleaved)) > 1e-3 and np.max(np.abs(got - half)) < 1e-3:
        print("BUG: traditional=True was ignored for longrope (half-split pairs rotated)")
    else:
        print("not reproduced")


if __name__ == "__main__":
    main()
