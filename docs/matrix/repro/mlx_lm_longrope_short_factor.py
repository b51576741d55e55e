"""mlx-lm's SuScaledRoPE (rope_type "longrope") uses long_factor at every length; short_factor is unused.

Run (any machine with mlx-lm; on Linux ``pip install "mlx[cpu]==0.32.4" "mlx-lm==0.32.2"``)::

    python docs/matrix/repro/mlx_lm_longrope_short_factor.py

Found by the posenc-ref conformance cases ``rope_from_base/half/longrope-seq-len-4096`` and
``rope_from_base/interleaved/longrope-seq-len-4096`` (adapter ``mlx_lm``).

LongRoPE (Ding et al. 2024, and Phi-3's ``Phi3LongRoPEScaledRotaryEmbedding``, HF's
``_compute_longrope_parameters``, vLLM's ``Phi3LongRoPEScaledRotaryEmbedding``) rescales
frequency ``i`` by ``short_factor[i]`` while the sequence is within
``original_max_position_embeddings`` and by ``long_factor[i]`` beyond it:

    theta_i = base**(-2i/d) / ext_i,   ext = long_factor if seq_len > original_max else short_factor

``SuScaledRoPE``'s docstring says the same ("short_factor: ... for sequences of length lesser
than original_max_position_embeddings"), but ``__init__`` builds ``long_factor * base**(2i/d)``
only and ``__call__`` never looks at the length.  A Phi-3 prompt of 4096 tokens (or fewer) is
therefore rotated with the long factors.

The script rotates x at positions 4093..4095 (a 4096-token sequence, within
original_max = 4096) with mlx-lm's layer and with the formula above in float64, once with the
short factors (what the length calls for) and once with the long ones: mlx-lm matches the long.
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


def paper_rope(x: np.ndarray, positions: np.ndarray, ext: list[float]) -> np.ndarray:
    """LongRoPE in float64, half-split pairs (i, i + d/2), attention factor on cos and sin."""
    inv_freq = 1.0 / (np.asarray(ext) * BASE ** (np.arange(0, DIM, 2) / DIM))
    ratio = MAX / ORIGINAL
    attention = math.sqrt(1 + math.log(ratio) / math.log(ORIGINAL))
    angle = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(angle) * attention, np.sin(angle) * attention
    x1, x2 = x[:, : DIM // 2], x[:, DIM // 2 :]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, size=(3, DIM)).astype(np.float32)
    offset = ORIGINAL - 3  # positions 4093, 4094, 4095: a 4096-token sequence
    positions = offset + np.arange(3)
    layer = initialize_rope(DIM, BASE, False, SCALING, MAX)
    got = np.asarray(layer(mx.array(x[None]), offset=offset)[0]).astype(np.float64)
    short = paper_rope(x.astype(np.float64), positions, SHORT)
    long = paper_rope(x.astype(np.float64), positions, LONG)
    print(f"mlx-lm SuScaledRoPE at positions {positions.tolist()} (seq_len {offset + 3} <= {ORIGINAL})")
    print(f"  max |mlx-lm - formula with short_factor| = {np.max(np.abs(got - short)):.3e}  (expected)")
    print(f"  max |mlx-lm - formula with long_factor|  = {np.max(np.abs(got - long)):.3e}")
    print("  row 0, expected (short):", np.round(short[0, :4], 6))
    print("  row 0, mlx-lm          :", np.round(got[0, :4], 6))
    if np.max(np.abs(got - short)) > 1e-3 and np.max(np.abs(got - long)) < 1e-3:
        print("BUG: SuScaledRoPE used long_factor for a sequence within original_max_position_embeddings")
    else:
        print("not reproduced")


if __name__ == "__main__":
    main()
