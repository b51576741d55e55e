"""Built-in adapter ``ggml``: ggml's ``ggml_rope_ext`` CPU kernel (llama.cpp's RoPE) through ggml-python.

One op does all the work::

    ggml_rope_ext(ctx, a, b, c, n_dims, mode, n_ctx_orig,
                  freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow)

``a`` is ``[tokens, heads, head_dim]`` float32 (ggml's ``ne = (head_dim, heads,
tokens)``), ``b`` the int32 position of each token, ``c`` optional per-pair
frequency divisors (``freq_factors``), ``mode`` ``GGML_ROPE_TYPE_NEOX`` (half)
or ``GGML_ROPE_TYPE_NORMAL`` (interleaved); channels past ``n_dims`` pass
through.  The kernel (``ggml-cpu/ops.cpp``) computes, per token at position p,
in float32::

    theta_scale = powf(freq_base, -2 / n_dims)
    theta_0 = (float) p ; theta_{i+1} = theta_i * theta_scale         # an iterative product
    theta_extrap = theta_i / c[i] ; theta_interp = freq_scale * theta_extrap
    theta = theta_interp                                   if ext_factor == 0
          = theta_interp (1 - ramp_i) + theta_extrap ramp_i, mscale *= 1 + 0.1 logf(1 / freq_scale)
                                                           otherwise (YaRN; ramp from beta_fast/slow)
    cos = cosf(theta) * attn_factor * mscale ; sin = sinf(theta) * attn_factor * mscale

Canonical call -> ggml:

* ``rope(x, positions, inv_freq, attention_factor, layout)``: ``freq_base`` = b
  when ``inv_freq = b**(-2i/d)`` (no ``c``); otherwise b is fitted from the first
  two frequencies and ``c[i] = b**(-2i/d) / inv_freq[i]`` (float64, stored
  float32; ``inf`` where ``inv_freq`` is 0), as llama.cpp's ``rope_freqs``
  tensor does for Llama 3.1.  ``attn_factor`` = the attention factor,
  ``ext_factor`` 0, ``freq_scale`` 1.  Positions must fit int32.
* ``rope_cos_sin``: the same call on unit pairs ``(1, 0)``, which returns the
  kernel's cos/sin exactly (:func:`._kernel.unit_pairs`).
* ``rope_frequencies(dim, base, scaling, seq_len)``: the scaling type mapped onto
  the op's own parameters, then theta = atan2 of its sin/cos at position 1 and
  the attention factor = its cos at position 0.  ``linear``: ``freq_scale =
  1/factor``.  ``yarn``: ``freq_scale = 1/factor``, ``ext_factor = 1``,
  ``n_ctx_orig = original_max_position_embeddings``, ``beta_fast/slow`` (HF's
  ``or`` defaults 32/1), and ``attn_factor`` as llama.cpp's context sets it
  (``llama-context.cpp``): 1 (the kernel's own ``1 + 0.1 ln factor``) unless the
  config sets ``attention_factor`` or both ``mscale`` and ``mscale_all_dim``, then
  HF's value over ``1 + 0.1 ln factor``.  ``longrope``: ``c`` = the
  ``long_factor`` when ``seq_len > original_max_position_embeddings`` (llama.cpp
  chooses from its context size ``n_ctx``, here ``seq_len``), else
  ``short_factor``; ``attn_factor`` = ``sqrt(1 + ln(s) / ln(original))`` with
  ``s = max_position_embeddings / original`` (llama.cpp's converter writes this).

* ``rope_from_base(x, positions, dim, base, scaling, seq_len)``: the op with
  ``freq_base = base``, ``n_dims = dim`` and the scaling mapped as for
  ``rope_frequencies``, rotating ``x``.
* ``rope_heads`` (``thd``: ggml's own ``[n_embd, n_head, n_token]`` tensor, one
  int32 position per token): the ``rope`` call on those rows.

Variant: ``longrope: phi3-ratio`` (llama.cpp's converter writes the attention
factor from ``max / original``; ``factor`` and ``attention_factor`` unread).

Not expressible: ``apply_rope`` (the op takes positions, never cos/sin
tables); YaRN ``truncate=false`` (``ggml_rope_yarn_corr_dims`` always floors and
ceils) and a null ``factor`` (the converter writes ``1/factor``); ``ntk``,
``dynamic``, ``llama3`` and ``proportional`` scaling (llama.cpp has no such op
parameters: NTK by hand through ``freq_base``, Llama 3.1's divisors precomputed
by its converter, which the ``rope`` path covers through ``c``); float64 (the
kernel is float32/float16 only); positions beyond int32; inputs ggml aborts the
process on (``GGML_ASSERT``: odd or oversized ``n_dims``, short ``freq_factors``),
which the adapter refuses before the call.  Phases are float32 (``"product"``),
``theta_i`` an iterative product (up to ~i/2 ulp for pair i).  Nothing is left
for the suite to express.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from ._kernel import default_base, pair_table, read_pairs, to_tokens, unit_pairs
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "GgmlAdapter", "frequency_divisors"]

_INT32 = np.iinfo(np.int32)


def frequency_divisors(inv_freq: np.ndarray) -> tuple[float, np.ndarray | None]:
    """``(freq_base, c)`` with ``b**(-2i/d) / c[i] == inv_freq[i]``; ``c`` None for default frequencies.

    b is the base of default frequencies, else fitted from the first two
    (``(inv_freq[0] / inv_freq[1]) ** (d / 2)``, 10000 when that is undefined);
    ``c`` is computed in float64 and rounded once to float32, ``inf`` where
    ``inv_freq`` is 0 (so the pair stays unrotated).
    """
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    base = default_base(inv_freq)
    if base is not None:
        return base, None
    dims = 2 * inv_freq.size
    base = 10000.0
    if inv_freq.size >= 2 and inv_freq[0] > 0 and inv_freq[1] > 0 and inv_freq[0] > inv_freq[1]:
        base = float((inv_freq[0] / inv_freq[1]) ** (dims / 2))
    own = base ** (-np.arange(0, dims, 2) / dims)
    with np.errstate(divide="ignore"):
        divisors = np.where(inv_freq > 0, own / np.where(inv_freq > 0, inv_freq, 1.0), np.inf)
    return base, divisors.astype(np.float32)


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


class GgmlAdapter(Adapter):
    """ggml's CPU ``ggml_rope_ext`` (ggml-python's ctypes bindings)."""

    name = "ggml"
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "rope", "rope_heads", "rope_from_base"),
        dtypes=("float32",),
        phase="product",  # int32 positions to float, theta_i by successive float32 products
        scaling_types=("default", "linear", "yarn", "longrope"),
        head_layouts=("thd",),  # a [n_embd, n_head, n_token] tensor, one int32 position per token
        variants={"longrope": "phi3-ratio"},  # llama.cpp's converter: attn_factor from max / original
        notes={
            "rope_from_base": "ggml_rope_ext(freq_base=base, n_dims=dim, scaling as llama.cpp sets it)",
            "rope_heads": "ggml_rope_ext on [tokens, heads, head_dim] rows (thd)",
            "rope": "ggml_rope_ext from int32 positions; non-default inv_freq through freq_factors "
            "(divisors of base**(-2i/d))",
            "rope_cos_sin": "ggml_rope_ext on unit pairs",
            "rope_frequencies": "scaling mapped onto freq_scale / ext_factor / beta_* / n_ctx_orig / "
            "freq_factors as llama.cpp sets them; read off the kernel at positions 0 and 1",
        },
    )

    def __init__(self) -> None:
        from ggml import ggml

        self.ggml = ggml

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "ggml-python": version("ggml-python"),
            "ggml": self.ggml.ggml_version().decode(),
        }

    # --- the op --------------------------------------------------------------------------------------

    def _rope_ext(
        self,
        rows: np.ndarray,
        positions: np.ndarray,
        *,
        n_dims: int,
        layout: str,
        freq_base: float,
        divisors: np.ndarray | None = None,
        n_ctx_orig: int = 0,
        freq_scale: float = 1.0,
        ext_factor: float = 0.0,
        attn_factor: float = 1.0,
        beta_fast: float = 0.0,
        beta_slow: float = 0.0,
    ) -> np.ndarray:
        """``rows [T, H, D]`` rotated by ggml_rope_ext at ``positions [T]``; refuses what ggml aborts on."""
        g = self.ggml
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        tokens, heads, dim = rows.shape
        if positions.size and (positions.min() < _INT32.min or positions.max() > _INT32.max):
            msg = "ggml_rope_ext takes int32 positions; this case needs values beyond int32"
            raise Unsupported(msg)
        if n_dims % 2 or not 0 < n_dims <= dim or positions.size != tokens:
            msg = (
                f"ggml_rope_ext aborts the process (GGML_ASSERT) unless n_dims is even and <= head_dim "
                f"({n_dims}, {dim}) with one position per token"
            )
            raise Unsupported(msg)
        if layout not in ("half", "interleaved"):
            msg = f"ggml_rope_ext takes a mode (NEOX or NORMAL); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        mode = g.GGML_ROPE_TYPE_NEOX if layout == "half" else g.GGML_ROPE_TYPE_NORMAL
        size = 4 * rows.nbytes + 4 * positions.size + 2**22 + 64 * (dim + 64)
        ctx = g.ggml_init(g.ggml_init_params(mem_size=size, mem_buffer=None, no_alloc=False))
        try:
            a = self._tensor(ctx, rows, g.GGML_TYPE_F32, (dim, heads, tokens))
            b = self._tensor(ctx, positions.astype(np.int32), g.GGML_TYPE_I32, (tokens,))
            c = None
            if divisors is not None:
                c = self._tensor(ctx, np.asarray(divisors, dtype=np.float32), g.GGML_TYPE_F32, (n_dims // 2,))
            out = g.ggml_rope_ext(
                ctx, a, b, c, n_dims, mode, n_ctx_orig,
                freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow,
            )  # fmt: skip
            graph = g.ggml_new_graph(ctx)
            g.ggml_build_forward_expand(graph, out)
            g.ggml_graph_compute_with_ctx(ctx, graph, 1)
            data = ctypes.cast(g.ggml_get_data(out), ctypes.POINTER(ctypes.c_float))
            return np.ctypeslib.as_array(data, shape=(tokens, heads, dim)).copy()
        finally:
            g.ggml_free(ctx)

    def _tensor(self, ctx: Any, values: np.ndarray, kind: int, ne: tuple[int, ...]) -> Any:
        g = self.ggml
        tensor = g.ggml_new_tensor(ctx, kind, len(ne), (ctypes.c_int64 * len(ne))(*ne))
        ctypes.memmove(g.ggml_get_data(tensor), np.ascontiguousarray(values).ctypes.data, values.nbytes)
        return tensor

    def _cos_sin_pairs(
        self, positions: np.ndarray, dim: int, layout: str, **params: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        flat = np.asarray(positions, dtype=np.int64).reshape(-1)
        out = self._rope_ext(
            unit_pairs(flat.size, dim, dim, layout), flat, n_dims=dim, layout=layout, **params
        )
        return read_pairs(out, dim, layout)

    # --- canonical calls -----------------------------------------------------------------------------

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        x = np.asarray(x, dtype=np.float32)
        rows, pos, back = to_tokens(x, positions)
        base, divisors = frequency_divisors(np.asarray(inv_freq))
        out = self._rope_ext(
            rows,
            pos,
            n_dims=2 * np.asarray(inv_freq).size,
            layout=layout,
            freq_base=base,
            divisors=divisors,
            attn_factor=float(attention_factor),
        )
        return back(out)

    def rope_heads(
        self,
        x: Any,
        positions: Any,
        inv_freq: Any,
        *,
        attention_factor: float,
        layout: str,
        head_layout: str,
    ) -> Any:
        if head_layout != "thd":
            msg = f"ggml_rope_ext rotates a [n_embd, n_head, n_token] tensor (thd); got {head_layout!r}"
            raise Unsupported(msg)
        base, divisors = frequency_divisors(np.asarray(inv_freq))
        return self._rope_ext(
            np.asarray(x, dtype=np.float32),
            np.asarray(positions),
            n_dims=2 * np.asarray(inv_freq).size,
            layout=layout,
            freq_base=base,
            divisors=divisors,
            attn_factor=float(attention_factor),
        )

    def rope_from_base(
        self,
        x: Any,
        positions: Any,
        *,
        dim: int,
        base: float,
        scaling: dict[str, Any] | None,
        seq_len: int | None,
        layout: str,
    ) -> Any:
        x = np.asarray(x, dtype=np.float32)
        rows, pos, back = to_tokens(x, positions)
        params = _scaling_params(dim, scaling or {}, seq_len)
        return back(self._rope_ext(rows, pos, n_dims=dim, layout=layout, freq_base=float(base), **params))

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        base, divisors = frequency_divisors(np.asarray(inv_freq))
        dim = 2 * np.asarray(inv_freq).size
        cos, sin = self._cos_sin_pairs(
            positions, dim, layout, freq_base=base, divisors=divisors, attn_factor=float(attention_factor)
        )
        shape = (*np.shape(positions), dim)
        return pair_table(cos, layout).reshape(shape), pair_table(sin, layout).reshape(shape)

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        if dim % 2 or dim <= 0:
            msg = f"ggml_rope_ext aborts the process (GGML_ASSERT) on an odd n_dims; got {dim}"
            raise Unsupported(msg)
        params = _scaling_params(dim, scaling or {}, seq_len)
        cos, sin = self._cos_sin_pairs(np.array([0, 1]), dim, "half", freq_base=float(base), **params)
        theta = np.arctan2(sin[1].astype(np.float64), cos[1].astype(np.float64))
        return theta.astype(np.float32), np.float32(cos[0, 0])


def _scaling_params(dim: int, scaling: dict[str, Any], seq_len: int | None) -> dict[str, Any]:
    """ggml_rope_ext's parameters for an HF scaling dict, as llama.cpp sets them."""
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return {}
    if kind in ("linear", "yarn") and scaling.get("factor") is None:
        msg = "ggml takes freq_scale = 1/factor (llama.cpp's converter writes it); the config gives no factor"
        raise Unsupported(msg)
    if kind == "linear":
        return {"freq_scale": 1.0 / float(scaling["factor"])}
    if kind == "yarn":
        if scaling.get("truncate", True) is False:
            msg = "ggml_rope_yarn_corr_dims always floors/ceils the correction range: no truncate=false"
            raise Unsupported(msg)
        factor = float(scaling["factor"])
        attn = 1.0
        if scaling.get("attention_factor") is not None:
            attn = float(scaling["attention_factor"]) / _yarn_mscale(factor)
        elif scaling.get("mscale") and scaling.get("mscale_all_dim"):
            ratio = _yarn_mscale(factor, scaling["mscale"]) / _yarn_mscale(factor, scaling["mscale_all_dim"])
            attn = ratio / _yarn_mscale(factor)
        return {
            "freq_scale": 1.0 / factor,
            "ext_factor": 1.0,
            "n_ctx_orig": int(scaling["original_max_position_embeddings"]),
            "beta_fast": float(scaling.get("beta_fast") or 32.0),
            "beta_slow": float(scaling.get("beta_slow") or 1.0),
            "attn_factor": attn,
        }
    if kind == "longrope":
        original = int(scaling["original_max_position_embeddings"])
        factors = (
            scaling["long_factor"] if seq_len is not None and seq_len > original else scaling["short_factor"]
        )
        if len(factors) != dim // 2:
            msg = f"ggml aborts (GGML_ASSERT) unless freq_factors has {dim // 2} entries; got {len(factors)}"
            raise Unsupported(msg)
        scale = float(scaling.get("max_position_embeddings", original)) / original
        attn = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0
        return {"divisors": np.asarray(factors, dtype=np.float32), "attn_factor": attn}
    msg = f"ggml_rope_ext has no {kind!r} scaling"
    raise Unsupported(msg)


ADAPTER = GgmlAdapter

#: The variants of this built-in adapter (``posenc-ref check ggml``).
ADAPTERS: dict[str, type[Adapter]] = {"default": GgmlAdapter}
