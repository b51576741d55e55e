"""onnxruntime 1.31.1: ``com.microsoft.RotaryEmbedding`` (CPU) computes with attributes it cannot honour.

Each input below is rejected by the reference (a ValueError naming the parameter); the CPU
kernel returns a tensor:

* ``rotary_embedding_dim`` odd (3, with a cache of ``3 // 2 = 1`` column): RoPE rotates
  pairs, so an odd rotated width has no meaning.  The kernel rotates ``R // 2`` pairs, copies
  the channels from ``R`` on, and never writes channel ``R - 1``: the output holds whatever
  the fresh buffer held there (0 here, not the input value).  The ONNX standard
  ``RotaryEmbedding``-23 kernel does the same.
* ``interleaved`` other than 0 or 1 (2, -1): read as ``== 1``, so every other value
  silently selects the half layout.
* ``scale`` (documented "Custom scale will be used if specified"): read into the kernel and
  never used; ``scale=2`` returns exactly the ``scale=1`` result.

Expected values come from the paper's formula (RoFormer; identity rotation here: cos 1,
sin 0, so every channel must come back unchanged).  Positions outside the cache, for
comparison, raise ``INVALID_ARGUMENT`` (checked since the kernel's bounds fix).  Not
reached by the conformance suite (its ``apply_rope`` cases have even widths and name the
layout as ``half``/``interleaved``, which the adapter maps to 0/1); found while mapping the
operator for the ``onnxruntime`` adapter.  Standalone (onnxruntime 1.31.1, onnx 1.23.2,
numpy); run: ``python onnxruntime_missing_validation.py``.  Exits 1 while any input is
accepted silently.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

SEQ, HEAD = 2, 8


def rotary(x, position_ids, cos_cache, sin_cache, **attributes):
    """One com.microsoft RotaryEmbedding node with ``attributes`` on the CPU EP."""
    order = ["x", "pos", "cos", "sin"]
    kinds = {"pos": TensorProto.INT64}
    node = helper.make_node("RotaryEmbedding", order, ["y"], domain="com.microsoft", **attributes)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, kinds.get(n, TensorProto.FLOAT), None) for n in order],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x, "pos": position_ids, "cos": cos_cache, "sin": sin_cache})[0]


x = np.arange(1, SEQ * HEAD + 1, dtype=np.float32).reshape(1, SEQ, HEAD)
positions = np.arange(SEQ, dtype=np.int64)[None]
rng = np.random.default_rng(0)
angle = rng.uniform(0, 3, (SEQ, HEAD // 2))
cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
half = rotary(x, positions, cos, sin)  # the half layout with the same cache, for comparison
interleaved = rotary(x, positions, cos, sin, interleaved=1)


def odd_width():
    """An identity rotation (cos 1, sin 0) of R = 3 channels: the output must equal x."""
    y = rotary(x, positions, np.ones((SEQ, 1), np.float32), np.zeros((SEQ, 1), np.float32),
               rotary_embedding_dim=3, num_heads=1)  # fmt: skip
    wrong = sorted(set(np.argwhere(y != x)[:, -1].tolist()))
    return f"channels {wrong} differ from x: {y[0, 0, :4].tolist()} vs {x[0, 0, :4].tolist()}"


def layout(value):
    y = rotary(x, positions, cos, sin, interleaved=value)
    named = (
        "the half layout"
        if np.array_equal(y, half)
        else "interleaved"
        if np.array_equal(y, interleaved)
        else "?"
    )
    return f"the result of {named}"


def scale():
    y = rotary(x, positions, cos, sin, scale=2.0)
    return "exactly the scale=1 result" if np.array_equal(y, half) else f"max change {np.abs(y - half).max()}"


def beyond_cache():
    return rotary(x, np.array([[0, SEQ]], np.int64), cos, sin)


cases = {
    "rotary_embedding_dim=3 (odd)": odd_width,
    "interleaved=2": lambda: layout(2),
    "interleaved=-1": lambda: layout(-1),
    "scale=2.0": scale,
    "position beyond the cache, for comparison": beyond_cache,
}

print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}")
silent = 0
for label, make in cases.items():
    try:
        value = make()
    except Exception as exc:  # a raised error is what the reference does
        print(f"ok   {label}: raised {type(exc).__name__}: {str(exc).split('Status Message: ')[-1]}")
    else:
        silent += "comparison" not in label
        print(f"{'     ' if 'comparison' in label else 'BUG  '}{label}: returned {value}")
print(f"{silent} of {len(cases) - 1} invalid attribute values returned a value")
sys.exit(1 if silent else 0)
