"""keras-hub RotaryEmbedding(rope_type="dynamic") is not dynamic NTK: it is linear scaling by s**(d/(d-2)).

Standalone (keras 3.15.1 + keras-hub 0.32.0, torch backend; no posenc-ref).  Run:
KERAS_BACKEND=torch python keras_hub_dynamic_rope.py

Dynamic NTK (emozilla; HF "dynamic") rescales the *base*: at length L > L0,
    b' = b * (s L / L0 - (s - 1)) ** (d / (d - 2)),   theta_i = b' ** (-2i/d),
so theta_0 = 1 stays, low frequencies shrink most, and nothing changes while L <= L0.  Static NTK
(bloc97; HF "ntk") is the same with b' = b * s ** (d / (d - 2)).  keras-hub's _get_inverse_freq instead
returns  b ** (-2i/d) / s ** (d / (d - 2))  for every i: all frequencies, theta_0 included, divided by
one constant, whatever the sequence length.  This script rotates a unit vector at position 1 and reads
the angle of the first pair: 1 rad for HF dynamic/NTK at any length, s**(-d/(d-2)) rad for keras-hub.
"""

import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import math

import keras
import keras_hub
import numpy as np

dim, factor = 16, 2.0
x = np.zeros((1, 1, dim), dtype="float32")
x[..., 0] = 1.0  # pair (0, d/2) in the half-split layout keras-hub uses
layer = keras_hub.layers.RotaryEmbedding(max_wavelength=10000, rope_type="dynamic", scaling_factor=factor)
out = keras.ops.convert_to_numpy(layer(x, positions=np.array([1])))
angle = math.atan2(out[0, 0, dim // 2], out[0, 0, 0])
print(f"angle of pair 0 at position 1: {angle:.6f} rad")
print(f"dynamic/static NTK (HF):       {1.0:.6f} rad")
print(f"linear by s**(d/(d-2)):        {factor ** (-dim / (dim - 2)):.6f} rad")
assert abs(angle - factor ** (-dim / (dim - 2))) < 1e-6, "fixed: keras-hub dynamic keeps theta_0"
print("BUG: rope_type='dynamic' divides every frequency by s**(d/(d-2)) and ignores the length")
