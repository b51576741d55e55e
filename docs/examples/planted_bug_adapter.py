"""A float32 RoPE with one bug planted: what the report says of a wrong implementation.

Run:  posenc-ref check docs/examples/planted_bug_adapter.py --only rope

The code computes RoPE the plain float32 way (positions cast to float32, the angle a
float32 product, ``rotate_half``), and declares it (``"phase": "product"``).  Its
``apply_rope`` rotates by -theta: it subtracts where it should add, as a port that
conjugates the rotation does.  Every invariant the suite has passes for such code (a
rotation by -theta is still a rotation); only the values show it, and the diagnosis
names it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CAPABILITIES = {"phase": "product", "dtypes": ["float32"], "layouts": ["half"]}


def rope_cos_sin(
    positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
) -> tuple[Any, Any]:
    angle = np.asarray(positions).astype(np.float32)[..., None] * np.asarray(
        inv_freq, dtype=np.float32
    )
    emb = np.concatenate([angle, angle], axis=-1)
    f = np.float32(attention_factor)
    return np.cos(emb) * f, np.sin(emb) * f


def apply_rope(x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
    x = np.asarray(x)
    width = np.shape(cos)[-1]
    part, rest = x[..., :width], x[..., width:]
    half = width // 2
    rotated = np.concatenate([-part[..., half:], part[..., :half]], axis=-1)
    out = (
        part * cos - rotated * sin
    )  # the bug: + rotated * sin is the rotation by +theta
    return np.concatenate([out, rest], axis=-1).astype(x.dtype)
