"""onnxruntime 1.31.1: ``com.microsoft.RotaryEmbedding`` misreads a ``(max_pos, head_size / 2)`` cache.

The contrib operator's documentation allows ``cos_cache``/``sin_cache`` of shape
``(max_sequence_length, head_size / 2)`` *or* ``(max_sequence_length, rotary_embedding_dim / 2)``,
and its CPU kernel accepts both.  With partial rotation (``rotary_embedding_dim = R <
head_size``) and the first shape, the kernel still steps through the cache with the row
stride ``R / 2`` (``cache_offset = position_id * half_rotary_emb_dim``), so position ``p``
reads the values of row ``p * R / head_size`` (and neighbouring columns) instead of row ``p``:
every position but 0 is rotated by the wrong angles, without an error.  The ONNX standard
``RotaryEmbedding`` (opset 23, also in onnxruntime) rejects that cache shape instead.

Expected values come from the paper's formula (RoFormer, half layout: channel ``i`` pairs with
``i + R/2``, angle ``p * theta_i``, ``theta_i = 10000**(-2i/R)``; channels past ``R`` unchanged),
in float64.  Not reached by the conformance suite (its ``apply_rope`` tables are ``R`` wide,
passed as the ``R / 2`` cache); found while mapping the operator for the ``onnxruntime``
adapter.  Standalone (onnxruntime 1.31.1, onnx 1.23.2, numpy); run:
``python onnxruntime_cache_row_stride.py``.  Exits 1 while the misread is present.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

SEQ, HEAD, ROT = 4, 8, 4  # head_size 8, rotary_embedding_dim 4


def rotary(x, cos_cache, sin_cache, domain):
    """One RotaryEmbedding node (``domain`` "com.microsoft" opset 1, or "" opset 23) on the CPU EP."""
    order = ["x", "pos", "cos", "sin"] if domain else ["x", "cos", "sin", "pos"]
    kinds = {"pos": TensorProto.INT64}
    node = helper.make_node(
        "RotaryEmbedding", order, ["y"], domain=domain, rotary_embedding_dim=ROT, num_heads=1
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, kinds.get(n, TensorProto.FLOAT), None) for n in order],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    opsets = (
        [helper.make_opsetid("", 21), helper.make_opsetid(domain, 1)]
        if domain
        else [helper.make_opsetid("", 23)]
    )
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {"x": x, "pos": np.arange(SEQ, dtype=np.int64)[None], "cos": cos_cache, "sin": sin_cache}
    return session.run(None, {n: feed[n] for n in order})[0]


x = np.random.default_rng(0).standard_normal((1, SEQ, HEAD)).astype(np.float32)
positions = np.arange(SEQ, dtype=np.float64)[:, None]
theta = 10000.0 ** (-np.arange(0, ROT, 2) / ROT)  # the R/2 rotated pairs' frequencies
angle = positions * theta  # [SEQ, R/2]
expected = x.astype(np.float64)[0].copy()
lo, hi = expected[:, : ROT // 2].copy(), expected[:, ROT // 2 : ROT].copy()
expected[:, : ROT // 2] = lo * np.cos(angle) - hi * np.sin(angle)
expected[:, ROT // 2 : ROT] = hi * np.cos(angle) + lo * np.sin(angle)

# The documented (max_pos, head_size / 2) cache: row p holds cos/sin of the R/2 rotated pairs in
# its first R/2 columns (the rest of the row, unused by a rotation of R channels, is padding).
wide = np.zeros((SEQ, HEAD // 2))
cos_wide, sin_wide = wide.copy(), wide.copy()
cos_wide[:, : ROT // 2], sin_wide[:, : ROT // 2] = np.cos(angle), np.sin(angle)
narrow = (np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32))

print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}")
print(f"head_size {HEAD}, rotary_embedding_dim {ROT}, positions 0..{SEQ - 1}")
got = rotary(x, *narrow, "com.microsoft")[0]
print(
    "cache (max_pos, R/2):         max |error| per position", np.abs(got - expected).max(-1).round(7).tolist()
)
got = rotary(x, cos_wide.astype(np.float32), sin_wide.astype(np.float32), "com.microsoft")[0].astype(
    np.float64
)
errors = np.abs(got - expected).max(-1)
print("cache (max_pos, head_size/2): max |error| per position", errors.round(7).tolist())
for p in range(1, SEQ):
    want = expected[p, :ROT].round(4).tolist()
    print(f"  position {p}: got {got[p, :ROT].round(4).tolist()}, expected {want}")
try:
    rotary(x, cos_wide.astype(np.float32), sin_wide.astype(np.float32), "")
except Exception as exc:  # the standard operator's kernel refuses the shape
    reason = str(exc).split("Status Message: ")[-1]
    print(f"ONNX RotaryEmbedding-23, same cache: raised {type(exc).__name__}: {reason}")
misread = bool(np.max(errors) > 1e-5)
print(
    "BUG: the (max_pos, head_size/2) cache is read with row stride R/2"
    if misread
    else "ok: both caches agree"
)
sys.exit(1 if misread else 0)
