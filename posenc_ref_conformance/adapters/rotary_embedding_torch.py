"""Built-in adapter for lucidrains' ``rotary-embedding-torch`` (``RotaryEmbedding``).

Run::

    scripts/matrix/setup_rotary_embedding_torch.sh /work/venvs/rotary_embedding_torch
    posenc-ref check posenc_ref_conformance.adapters.rotary_embedding_torch

Coverage (canonical function -> rotary-embedding-torch):

* ``rope_frequencies``: the ``freqs`` parameter of ``RotaryEmbedding(dim,
  theta=base)`` (scaling ``default``) or ``RotaryEmbedding(dim, theta=base,
  theta_rescale_factor=factor)`` (scaling ``ntk``: the library multiplies the
  base by ``factor**(dim/(dim-2))``, bloc97's NTK-aware rule, HF's ``ntk``).
  Float32 only (the library builds them with ``.float()``).
* ``rope_cos_sin``: ``RotaryEmbedding(dim, custom_freqs=inv_freq)(positions)``, the
  interleaved angle table ``m theta_i`` (each frequency repeated for its pair),
  then its ``cos()`` and ``sin()``, as ``apply_rotary_emb`` takes them.
* ``rope``: ``RotaryEmbedding(dim, custom_freqs=inv_freq).rotate_queries_or_keys(x,
  offset=p0, scale=attention_factor)`` for positions ``p0 + arange(S)``; partial
  rotary is native (``apply_rotary_emb`` rotates the first ``2 len(inv_freq)``
  channels), and ``scale`` multiplies cos and sin, which is exactly the
  attention factor.

* ``rope_heads`` (``bhsd``, ``bshd``): ``rotate_queries_or_keys(x, seq_dim=-2 | -3,
  offset=p0, scale=attention_factor)``, one call per batch row (each row's
  positions ``p0 + arange(S)``).
* ``rope_from_base``: ``RotaryEmbedding(dim, theta=base)`` rotating ``x`` with its
  own frequencies; ``linear`` scaling is ``interpolate_factor`` (positions
  divided by ``s``, ``(arange(S) + offset) / s`` in the input's dtype), ``ntk``
  is ``theta_rescale_factor``.
* ``xpos_scale``: ``RotaryEmbedding(dim, use_xpos=True,
  xpos_scale_base=scale_base).get_scale(positions)``, ``zeta_i**((m - c)/B)`` with
  ``zeta_i = (2i + 0.4 d)/(1.4 d)`` and the centre ``c = len(positions) // 2``;
  keys get its reciprocal (``scale ** -1``, as ``rotate_queries_and_keys``).
  Only ``gamma = 0.4`` and ``offset = len(positions) // 2`` (per row) are its own.

Both layouts?  No: the library pairs channels ``(2i, 2i+1)`` only (``interleaved``).
Not expressible: ``apply_rotary_emb(freqs, t)`` takes the angles, not cos/sin
tables (a canonical ``apply_rope_angles`` call would check it).

Glue (format only): NumPy <-> torch; the module is moved to the run's dtype with
``.to(dtype)`` as a model would be (so its ``freqs`` and caches are float64 in a
float64 run, and ``custom_freqs`` are rounded to float32 in a float32 run); one
fresh module per call, so the angle cache (filled only at offset 0) never carries
values from one case into another.

Precision class: the phase is the product ``position * theta`` in the module's
dtype (float32 or float64), positions built in the input's dtype (so rounded to
float32 above 2**24 in float32 runs).  Frequencies built from ``theta`` and the
xPos ``zeta`` are float32 (``.float()``, the torch default) even in a float64
module: those functions are declared float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "RotaryEmbeddingTorchAdapter"]


class RotaryEmbeddingTorchAdapter(Adapter):
    """lucidrains ``rotary_embedding_torch.RotaryEmbedding``."""

    name = "rotary_embedding_torch"
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "rope", "rope_heads", "rope_from_base", "xpos_scale"),
        # freqs and zeta are built in float32 (torch default dtype); the angle table follows the input's
        dtypes={
            "default": ["float64", "float32"],
            "rope_frequencies": ["float32"],
            "rope_from_base": ["float32"],
            "xpos_scale": ["float32"],
        },
        phase="product",
        # AssertionError: interpolate_factor < 1; ZeroDivisionError: theta_rescale_factor ** (dim / (dim - 2))
        error_types={"rope_frequencies": ["AssertionError"], "rope_from_base": ["AssertionError"]},
        layouts=("interleaved",),
        head_layouts=("bhsd", "bshd"),  # seq_dim -2, or -3 (seq_before_head_dim)
        scaling_types=("default", "linear", "ntk"),  # linear: interpolate_factor, rope_from_base only
        notes={
            "rope_frequencies": "RotaryEmbedding(dim, theta, theta_rescale_factor).freqs; float32 only",
            "rope_cos_sin": "cos/sin of RotaryEmbedding(custom_freqs=inv_freq)(positions)",
            "rope": "rotate_queries_or_keys(x, offset, scale=attention_factor); contiguous positions",
            "rope_heads": "rotate_queries_or_keys(x[b], seq_dim, offset) per batch row; contiguous rows",
            "rope_from_base": "RotaryEmbedding(dim, theta, interpolate_factor | theta_rescale_factor)",
            "xpos_scale": "get_scale(positions): centre len(positions) // 2, gamma 0.4 only",
        },
    )

    def __init__(self) -> None:
        try:
            import torch
            from rotary_embedding_torch import RotaryEmbedding
        except ImportError as exc:
            from . import AdapterError

            msg = (
                "adapter rotary_embedding_torch needs rotary-embedding-torch "
                f"(scripts/matrix/setup_rotary_embedding_torch.sh): {exc}"
            )
            raise AdapterError(msg) from exc
        self.torch, self._cls = torch, RotaryEmbedding

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "rotary-embedding-torch": version("rotary-embedding-torch"),
            "torch": self.torch.__version__,
        }

    def _dtype(self, dtype: str) -> Any:
        return {"float64": self.torch.float64, "float32": self.torch.float32}[dtype]

    def _custom(self, inv_freq: Any, dtype: str) -> Any:
        """A module rotating with exactly ``inv_freq`` (as the run's dtype holds it)."""
        freqs = self.torch.from_numpy(np.asarray(inv_freq, dtype=np.float64)).to(self._dtype(dtype))
        return self._cls(2 * freqs.shape[0], custom_freqs=freqs).to(self._dtype(dtype))

    # --- canonical calls --------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        if dtype != "float32":
            msg = "RotaryEmbedding builds its frequencies in float32 (.float())"
            raise Unsupported(msg)
        kind = scaling_kind(scaling)
        if kind == "default":
            module = self._cls(dim, theta=base)
        elif kind == "ntk":
            module = self._cls(dim, theta=base, theta_rescale_factor=(scaling or {})["factor"])
        else:  # linear scaling (interpolate_factor) divides the positions, never the frequencies
            msg = f"rotary-embedding-torch has no {kind!r} frequency scaling (it scales positions)"
            raise Unsupported(msg)
        return module.freqs.detach(), 1.0

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        check_layout(layout, ("interleaved",), "rotary-embedding-torch")
        if attention_factor != 1.0:
            msg = "RotaryEmbedding's angle table has no attention factor (apply_rotary_emb's scale does)"
            raise Unsupported(msg)
        angles = self._custom(inv_freq, dtype)(self.torch.from_numpy(np.asarray(positions, dtype=np.int64)))
        return angles.cos(), angles.sin()

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        check_layout(layout, ("interleaved",), "rotary-embedding-torch")
        offset = contiguous_offset(positions, "rotate_queries_or_keys")
        data = self.torch.from_numpy(np.ascontiguousarray(x))
        module = self._custom(inv_freq, str(np.asarray(x).dtype))
        return module.rotate_queries_or_keys(data, offset=offset, scale=attention_factor)

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
        check_layout(layout, ("interleaved",), "rotary-embedding-torch")
        if head_layout not in ("bhsd", "bshd"):
            msg = f"rotate_queries_or_keys takes a seq_dim (bhsd -2, bshd -3); got {head_layout!r}"
            raise Unsupported(msg)
        data = np.ascontiguousarray(x)
        rows = []
        for batch, row_positions in enumerate(np.asarray(positions)):
            offset = contiguous_offset(row_positions, "rotate_queries_or_keys")
            module = self._custom(inv_freq, str(data.dtype))
            rows.append(
                module.rotate_queries_or_keys(
                    self.torch.from_numpy(data[batch : batch + 1]),
                    seq_dim=-2 if head_layout == "bhsd" else -3,
                    offset=offset,
                    scale=attention_factor,
                )
            )
        return self.torch.cat(rows)

    def xpos_scale(
        self,
        positions: Any,
        dim: int,
        *,
        scale_base: float,
        gamma: float,
        offset: int,
        layout: str,
        dtype: str,
    ) -> tuple[Any, Any]:
        """``(q_scale, k_scale)`` of ``RotaryEmbedding(dim, use_xpos=True).get_scale(positions)``."""
        check_layout(layout, ("interleaved",), "rotary-embedding-torch")
        rows = np.asarray(positions)
        rows = rows.reshape(-1, rows.shape[-1]) if rows.ndim else rows.reshape(1, 1)
        if gamma != 0.4:
            msg = "rotary-embedding-torch fixes xPos gamma at 0.4"
            raise Unsupported(msg)
        if offset != rows.shape[-1] // 2:
            msg = f"rotary-embedding-torch centres xPos at len(positions) // 2 = {rows.shape[-1] // 2}"
            raise Unsupported(msg)
        module = self._cls(dim, use_xpos=True, xpos_scale_base=scale_base).to(self._dtype(dtype))
        scales = [module.get_scale(self.torch.from_numpy(row).to(self._dtype(dtype))) for row in rows]
        scale = self.torch.stack(scales).reshape(*np.shape(positions), dim)
        return scale, scale**-1

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
        """``RotaryEmbedding(dim, theta=base, ...)`` rotating ``x`` with its own frequencies."""
        check_layout(layout, ("interleaved",), "rotary-embedding-torch")
        kind, params = scaling_kind(scaling), dict(scaling or {})
        options = {
            "default": {},
            "linear": {"interpolate_factor": params.get("factor")},
            "ntk": {"theta_rescale_factor": params.get("factor")},
        }
        if kind not in options:
            msg = f"rotary-embedding-torch has no {kind!r} scaling"
            raise Unsupported(msg)
        offset = contiguous_offset(positions, "rotate_queries_or_keys")
        data = self.torch.from_numpy(np.ascontiguousarray(x))
        module = self._cls(dim, theta=base, **options[kind]).to(data.dtype)
        return module.rotate_queries_or_keys(data, offset=offset)


ADAPTER = RotaryEmbeddingTorchAdapter

#: The variants of this built-in adapter (``posenc-ref check rotary_embedding_torch``).
ADAPTERS: dict[str, type[Adapter]] = {"default": RotaryEmbeddingTorchAdapter}
