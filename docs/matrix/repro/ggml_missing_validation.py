"""ggml 0.15.3: ``ggml_rope_ext`` computes with out-of-range RoPE parameters without a word.

Each input below is rejected by the reference (a ValueError naming the parameter); the op
rotates with it:

* ``freq_base=1``: every frequency is 1 (each pair turns one radian per token);
* ``freq_scale=2`` (llama.cpp's ``1/factor`` for a ``factor`` of 0.5): frequencies doubled;
* YaRN with ``beta_fast=1 < beta_slow=32``: ``ggml_rope_yarn_corr_dims`` swaps nothing, the
  ramp runs backwards, and pairs YaRN keeps are interpolated.

(Inputs the op cannot compute, an odd or oversized ``n_dims`` or a short ``freq_factors``,
abort the whole process with ``GGML_ASSERT``; those are not shown, since they end the run.)

Rotating unit pairs ``(1, 0)`` returns the op's own cos/sin; the frequencies are their angle at
position 1.  Standalone (ggml-python 0.0.45 = ggml 0.15.3, numpy); run:
``python ggml_missing_validation.py``.  Exits 1 while any input is accepted silently.
"""

import ctypes
import sys

import numpy as np
from ggml import ggml


def frequencies(dims, base, freq_scale=1.0, ext_factor=0.0, n_ctx_orig=0, beta_fast=0.0, beta_slow=0.0):
    """theta_i of ggml_rope_ext (NEOX): the angle of its rotation of unit pairs at position 1."""
    rows = np.zeros((1, 1, dims), dtype=np.float32)
    rows[..., : dims // 2] = 1.0
    ctx = ggml.ggml_init(ggml.ggml_init_params(mem_size=2**22, mem_buffer=None, no_alloc=False))
    a = ggml.ggml_new_tensor(ctx, ggml.GGML_TYPE_F32, 3, (ctypes.c_int64 * 3)(dims, 1, 1))
    b = ggml.ggml_new_tensor(ctx, ggml.GGML_TYPE_I32, 1, (ctypes.c_int64 * 1)(1))
    ctypes.memmove(ggml.ggml_get_data(a), rows.ctypes.data, rows.nbytes)
    position = np.array([1], dtype=np.int32)
    ctypes.memmove(ggml.ggml_get_data(b), position.ctypes.data, position.nbytes)
    out = ggml.ggml_rope_ext(
        ctx, a, b, None, dims, ggml.GGML_ROPE_TYPE_NEOX, n_ctx_orig,
        base, freq_scale, ext_factor, 1.0, beta_fast, beta_slow,
    )  # fmt: skip
    graph = ggml.ggml_new_graph(ctx)
    ggml.ggml_build_forward_expand(graph, out)
    ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
    data = ctypes.cast(ggml.ggml_get_data(out), ctypes.POINTER(ctypes.c_float))
    result = np.ctypeslib.as_array(data, shape=(dims,)).astype(np.float64)
    ggml.ggml_free(ctx)
    return np.round(np.arctan2(result[dims // 2 :], result[: dims // 2]), 6).tolist()


yarn = {"freq_scale": 0.25, "ext_factor": 1.0, "n_ctx_orig": 4096}
cases = {
    "freq_base=1 (frequencies)": lambda: frequencies(8, 1.0),
    "freq_scale=2, i.e. factor 0.5 (frequencies)": lambda: frequencies(8, 10000.0, freq_scale=2.0),
    "yarn beta_fast=1 < beta_slow=32 (every 8th frequency)": lambda: frequencies(
        64, 10000.0, beta_fast=1.0, beta_slow=32.0, **yarn
    )[::8],
    "yarn beta_fast=32 > beta_slow=1, for comparison (every 8th frequency)": lambda: frequencies(
        64, 10000.0, beta_fast=32.0, beta_slow=1.0, **yarn
    )[::8],
}

print(f"ggml {ggml.ggml_version().decode()}")
silent = 0
for label, make in cases.items():
    try:
        value = make()
    except Exception as exc:  # a raised error is what the reference does
        print(f"ok   {label}: raised {type(exc).__name__}: {exc}")
    else:
        silent += "comparison" not in label
        print(f"{'     ' if 'comparison' in label else 'BUG  '}{label}: returned {value}")
print(f"{silent} of {len(cases) - 1} out-of-range inputs returned a value")
sys.exit(1 if silent else 0)
