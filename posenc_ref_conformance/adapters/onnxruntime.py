"""Built-in adapter ``onnxruntime``: the ``com.microsoft`` ``RotaryEmbedding`` contrib operator on ONNX
Runtime's CPU execution provider.

Run::

    scripts/matrix/setup_onnxruntime.sh /work/mvenvs/onnxruntime   # onnxruntime 1.31.1, onnx 1.23.2
    posenc-ref check onnxruntime          # com.microsoft RotaryEmbedding (contrib kernel)
    posenc-ref check onnxruntime:onnx     # the ONNX standard RotaryEmbedding-23 (its own kernel)

Each call builds a one-node graph with ``onnx.helper`` (``make_node("RotaryEmbedding",
domain="com.microsoft")``, opsets ``""`` 21 and ``com.microsoft`` 1, IR version 10) and runs it
with ``onnxruntime.InferenceSession(model.SerializeToString(),
providers=["CPUExecutionProvider"])``; one session is kept per configuration (dtype, rank,
attributes), its input shapes left dynamic, as a served model keeps its session.

Coverage (canonical function -> the operator):

* ``apply_rope``: ``RotaryEmbedding(input, position_ids, cos_cache, sin_cache)`` with
  ``interleaved`` 0 (``half``) or 1 (``interleaved``), ``rotary_embedding_dim = R`` (the
  case's rotated width; the op copies the channels past it unchanged) and ``num_heads``.
  The case's table is the cache (``max_pos = S``) and ``position_ids`` is ``[B, S]`` with
  every row ``0 .. S-1``, so the op's gather returns the case's rows in order.

The variant ``onnxruntime:onnx`` maps ``apply_rope`` the same way onto the ONNX standard
``RotaryEmbedding`` (default domain, opset 23: inputs ``X, cos_cache, sin_cache,
position_ids``), which onnxruntime runs with a separate CPU kernel (``core/providers/cpu/llm``).

Not mapped, and why:

* ``rope``, ``rope_heads``, ``rope_cos_sin``, ``rope_from_base``: the operator takes its
  ``cos_cache``/``sin_cache`` as inputs and computes no trigonometry (its ``scale``
  attribute is read but unused on CPU, and a sequence longer than the cache is "not
  currently supported"); building the cache from ``inv_freq`` would be the adapter
  computing RoPE, so these are not implemented (their cases are skipped).
* ``float64``: the operator's type constraint is ``float``, ``float16``, ``bfloat16``, and the
  CPU provider registers ``float`` and ``float16`` only (a ``double`` graph is an
  ``INVALID_GRAPH``); the suite's run dtypes are ``float64``/``float32``, so ``float32`` is
  declared (the ``float16`` kernel is out of the suite's reach).

Convention differences bridged by glue (format only, no arithmetic on values):

* The canonical ``cos``/``sin`` are per channel (``[S, R]``: ``cat(c, c)`` in ``half``,
  each pair's value twice in ``interleaved``); the op's cache has one column per pair
  (``[S, R/2]``).  The adapter passes the first half (``half``) or the even columns
  (``interleaved``) and raises :class:`Unsupported` when the dropped columns are not equal
  to the kept ones (a table the op cannot hold).
* ``x[..., S, D]`` of rank 4 is the op's ``[batch, num_heads, seq, head_size]`` as it is
  (more leading axes are flattened into ``batch``); rank 2 or 3 is the op's ``[batch, seq,
  hidden]`` with ``num_heads = 1`` (``hidden = D``).  The output is viewed back.
* ``layout``: the op selects it with the integer ``interleaved``, not a name, so a layout
  name other than ``half``/``interleaved`` is :class:`Unsupported` (nothing of the op's
  could reject a string).

Not reachable from the canonical calls, found while mapping (reproductions under
``docs/matrix/repro/``): an odd ``rotary_embedding_dim`` is accepted and leaves output
channel ``R - 1`` unwritten, ``interleaved`` values other than 0/1 silently select the half
layout and ``scale`` is ignored (``onnxruntime_missing_validation.py``); a ``(max_pos,
head_size / 2)`` cache, a shape the operator's documentation allows, is read with the row
stride ``R / 2`` when ``R < head_size`` (``onnxruntime_cache_row_stride.py``).  Positions
outside the cache raise ``INVALID_ARGUMENT`` (1.31.1 checks them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._glue import check_layout
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTERS", "OnnxRuntimeAdapter", "OnnxStandardRotaryAdapter"]

_LIBRARY = "onnxruntime's RotaryEmbedding"
_DEFAULT_OPSET = 21  # the default domain's opset of the graph (RotaryEmbedding lives in com.microsoft 1)
_IR_VERSION = 10  # onnx 1.16's IR: onnx 1.23 writes IR 14 by default, which onnxruntime 1.31 refuses


class OnnxRuntimeAdapter(Adapter):
    """``com.microsoft.RotaryEmbedding`` on ONNX Runtime's ``CPUExecutionProvider``."""

    name = "onnxruntime"
    #: The operator: its domain, the graph's opset imports, and its inputs in the operator's order.
    domain = "com.microsoft"
    opsets: tuple[tuple[str, int], ...] = (("", _DEFAULT_OPSET), ("com.microsoft", 1))
    input_order: tuple[str, ...] = ("input", "position_ids", "cos_cache", "sin_cache")
    operator = "com.microsoft.RotaryEmbedding (com.microsoft opset 1)"
    capabilities = Capabilities(
        functions=("apply_rope",),
        dtypes=("float32",),  # CPU kernels: float and float16; no double (float16 is not a run dtype)
        layouts=("half", "interleaved"),  # interleaved = 0 / 1
        notes={
            "apply_rope": "com.microsoft RotaryEmbedding (CPU EP): the case's cos/sin as the cache "
            "(one column per pair: the first half / the even columns), position_ids [B, S] = 0..S-1, "
            "rotary_embedding_dim = R, num_heads = H (4-D x) or 1 (x as [N, S, D])",
        },
    )

    def __init__(self) -> None:
        try:
            import onnx
            import onnxruntime
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter onnxruntime needs onnxruntime and onnx (setup_onnxruntime.sh): {exc}"
            raise AdapterError(msg) from exc
        self.onnx, self.ort = onnx, onnxruntime
        self._sessions: dict[tuple[Any, ...], Any] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "onnxruntime": self.ort.__version__,
            "onnx": self.onnx.__version__,
            "provider": "CPUExecutionProvider",
            "operator": self.operator,
        }

    def _session(self, dtype: np.dtype, rank: int, attributes: dict[str, int]) -> Any:
        """The session of a one-node RotaryEmbedding graph with these attributes (shapes dynamic)."""
        key = (dtype.str, rank, *sorted(attributes.items()))
        session = self._sessions.get(key)
        if session is None:
            session = self._make_session(dtype, attributes)
            self._sessions[key] = session
        return session

    def _make_session(self, dtype: np.dtype, attributes: dict[str, int]) -> Any:
        helper, tensor_proto = self.onnx.helper, self.onnx.TensorProto
        elem = helper.np_dtype_to_tensor_dtype(dtype)
        node = helper.make_node(
            "RotaryEmbedding", list(self.input_order), ["output"], domain=self.domain, **attributes
        )
        kinds = {"position_ids": tensor_proto.INT64}
        inputs = [helper.make_tensor_value_info(n, kinds.get(n, elem), None) for n in self.input_order]
        graph = helper.make_graph(
            [node], "rotary_embedding", inputs, [helper.make_tensor_value_info("output", elem, None)]
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid(domain, version) for domain, version in self.opsets],
            ir_version=_IR_VERSION,
        )
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = 1  # a few rows per call: threads only add scheduling noise
        options.log_severity_level = 4  # the op's errors come back as exceptions; keep stderr for the report
        return self.ort.InferenceSession(
            model.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        layout = check_layout(layout, ("half", "interleaved"), _LIBRARY)
        data = np.asarray(x)
        if data.dtype != np.float32:
            msg = f"{_LIBRARY} on the CPU provider has float and float16 kernels only; got {data.dtype}"
            raise Unsupported(msg)
        if data.ndim < 2:
            msg = f"{_LIBRARY} takes x as [batch, seq, hidden] or [batch, heads, seq, head]; got {data.shape}"
            raise Unsupported(msg)
        cos_cache = _pair_columns(np.asarray(cos, dtype=data.dtype), layout, "cos")
        sin_cache = _pair_columns(np.asarray(sin, dtype=data.dtype), layout, "sin")
        shaped, num_heads = _op_input(data)
        batch, seq = shaped.shape[0], shaped.shape[-2]
        attributes = {
            "interleaved": int(layout == "interleaved"),
            "rotary_embedding_dim": 2 * cos_cache.shape[-1],
            "num_heads": num_heads,
        }
        # Table row s is the row of position s: position_ids [B, S] = 0 .. S-1 gathers the rows in order.
        position_ids = np.ascontiguousarray(np.broadcast_to(np.arange(seq, dtype=np.int64), (batch, seq)))
        session = self._session(data.dtype, shaped.ndim, attributes)
        feed = {"input": shaped, "position_ids": position_ids, "cos_cache": cos_cache, "sin_cache": sin_cache}
        (out,) = session.run(["output"], {name: feed[name] for name in self.input_order})
        return out.reshape(data.shape)


def _pair_columns(table: np.ndarray, layout: str, what: str) -> np.ndarray:
    """The op's one-column-per-pair cache from a canonical per-channel table ``[S, R]`` (a selection).

    ``half`` pairs channel ``i`` with ``i + R/2``, so both halves hold the same values;
    ``interleaved`` pairs ``2i`` with ``2i + 1``.  A table whose paired columns differ is
    not a rotation the op can express.
    """
    if table.ndim != 2 or table.shape[-1] % 2:
        msg = f"{_LIBRARY} takes a cache [max_pos, R/2] (one value per pair); {what} has shape {table.shape}"
        raise Unsupported(msg)
    half = table.shape[-1] // 2
    kept, other = (table[:, :half], table[:, half:]) if layout == "half" else (table[:, 0::2], table[:, 1::2])
    if not np.array_equal(kept, other):
        msg = f"{_LIBRARY} holds one {what} per pair; this table's paired channels differ"
        raise Unsupported(msg)
    return np.ascontiguousarray(kept)


def _op_input(data: np.ndarray) -> tuple[np.ndarray, int]:
    """``x [..., S, D]`` as the op's input and its ``num_heads``: 4-D as it is, fewer axes as 3-D."""
    seq, dim = data.shape[-2:]
    if data.ndim >= 4:  # [..., H, S, D] -> [batch, num_heads, seq, head_size]
        heads = data.shape[-3]
        return np.ascontiguousarray(data).reshape(-1, heads, seq, dim), heads
    return np.ascontiguousarray(data).reshape(-1, seq, dim), 1  # [batch, seq, hidden = 1 head]


class OnnxStandardRotaryAdapter(OnnxRuntimeAdapter):
    """The ONNX standard ``RotaryEmbedding`` (default domain, opset 23): its own CPU kernel.

    Same attributes and caches as the contrib operator, inputs ``X, cos_cache, sin_cache,
    position_ids`` (the last optional); onnxruntime runs it with a separate kernel
    (``core/providers/cpu/llm``), which validates the cache width where the contrib one does not.
    """

    name = "onnxruntime:onnx"
    domain = ""
    opsets = (("", 23),)
    input_order = ("input", "cos_cache", "sin_cache", "position_ids")
    operator = "RotaryEmbedding (ONNX default domain, opset 23)"
    capabilities = dataclasses.replace(
        OnnxRuntimeAdapter.capabilities,
        notes={
            "apply_rope": "ONNX RotaryEmbedding-23 (CPU EP): the case's cos/sin as the cache "
            "(one column per pair: the first half / the even columns), position_ids [B, S] = 0..S-1, "
            "rotary_embedding_dim = R, num_heads = H (4-D x) or 1 (x as [N, S, D])",
        },
    )


#: The variants of this built-in adapter (``posenc-ref check onnxruntime``, ``onnxruntime:onnx``).
ADAPTERS: dict[str, type[Adapter]] = {"default": OnnxRuntimeAdapter, "onnx": OnnxStandardRotaryAdapter}
