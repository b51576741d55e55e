"""ggml: ggml_rope_ext's frequencies are an iterative float32 product; is it right at 1M positions?

Standalone (ggml-python 0.0.45 = ggml 0.15.3, numpy, mpmath); run: python ggml_iterative_theta.py

ggml-cpu/ops.cpp, ggml_rope_cache_init: theta = (float) p; for each pair: emit cos/sin(theta);
theta *= theta_scale, with theta_scale = powf(freq_base, -2/n_dims).  The phase of pair i is i
successive float32 roundings of p * theta_scale**i, so its relative error grows ~ i ulp, where
one rounding of p * theta_i (HF's float32 phase) stays ~1 ulp.  Rotating unit pairs (1, 0)
returns the kernel's own cos/sin exactly; compare with mpmath (40 digits).
"""

import ctypes

import mpmath
import numpy as np
from ggml import ggml

mpmath.mp.dps = 40


def ggml_cos_sin(positions, dims, base):
    """cos, sin [len(positions), dims/2] from ggml_rope_ext (NEOX) on unit pairs."""
    tokens = len(positions)
    rows = np.zeros((tokens, 1, dims), dtype=np.float32)
    rows[..., : dims // 2] = 1.0
    ctx = ggml.ggml_init(ggml.ggml_init_params(mem_size=2**24, mem_buffer=None, no_alloc=False))
    a = ggml.ggml_new_tensor(ctx, ggml.GGML_TYPE_F32, 3, (ctypes.c_int64 * 3)(dims, 1, tokens))
    b = ggml.ggml_new_tensor(ctx, ggml.GGML_TYPE_I32, 1, (ctypes.c_int64 * 1)(tokens))
    ctypes.memmove(ggml.ggml_get_data(a), rows.ctypes.data, rows.nbytes)
    pos = np.asarray(positions, dtype=np.int32)
    ctypes.memmove(ggml.ggml_get_data(b), pos.ctypes.data, pos.nbytes)
    out = ggml.ggml_rope_ext(
        ctx, a, b, None, dims, ggml.GGML_ROPE_TYPE_NEOX, 0, base, 1.0, 0.0, 1.0, 0.0, 0.0
    )
    graph = ggml.ggml_new_graph(ctx)
    ggml.ggml_build_forward_expand(graph, out)
    ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
    data = ctypes.cast(ggml.ggml_get_data(out), ctypes.POINTER(ctypes.c_float))
    result = np.ctypeslib.as_array(data, shape=(tokens, dims)).copy()
    ggml.ggml_free(ctx)
    return result[:, : dims // 2].astype(np.float64), result[:, dims // 2 :].astype(np.float64)


def ulp32(x):
    return float(np.spacing(np.float32(abs(x))))


for dims, base in ((128, 10000.0), (128, 500000.0)):
    exact = [mpmath.power(base, -mpmath.mpf(2 * i) / dims) for i in range(dims // 2)]
    cos, sin = ggml_cos_sin([1], dims, base)
    theta = np.arctan2(sin[0], cos[0])
    err = [abs(theta[i] - float(exact[i])) / ulp32(float(exact[i])) for i in range(dims // 2)]
    worst = int(np.argmax(err))
    print(
        f"d={dims} base={base:g}: frequency error up to {err[worst]:.1f} float32 ulp (pair {worst});"
        f" a single rounding is 0.5 ulp"
    )
    hf_theta = 1.0 / np.float32(base) ** (np.arange(0, dims, 2, dtype=np.float32) / np.float32(dims))
    for p in (1_000_003, 2**20, 2**24 + 1, 10_000_019):
        c, s = ggml_cos_sin([p], dims, base)
        phase_hf = np.float32(p) * hf_theta  # HF / vLLM: one float32 product of float32 values
        exact_cos = np.array([float(mpmath.cos(p * t)) for t in exact])
        exact_sin = np.array([float(mpmath.sin(p * t)) for t in exact])
        ggml_err = max(np.abs(c[0] - exact_cos).max(), np.abs(s[0] - exact_sin).max())
        hf_err = max(np.abs(np.cos(phase_hf) - exact_cos).max(), np.abs(np.sin(phase_hf) - exact_sin).max())
        print(
            f"  position {p:>10}: max |cos/sin - exact| ggml {ggml_err:.3g}, "
            f"float32 product (HF) {hf_err:.3g}"
        )
