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

Both layouts?  No: the library pairs channels ``(2i, 2i+1)`` only (``interleaved``).

Not expressible in the suite's calls yet, offered here as the planned calls
``xpos_scale`` and ``rope_from_base`` (see ``PLANNED_CAPABILITIES``; the runner
does not call them, ``tests/test_adapter_rotary_embedding_torch.py`` does):

* xPos (``use_xpos=True``): ``get_scale(positions)`` is ``zeta_i**((m - c)/B)``
  with ``zeta_i = (2i + 0.4 d)/(1.4 d)``, ``B = xpos_scale_base`` and the centre
  ``c = len(positions) // 2``; keys get its reciprocal.
* Position interpolation (``interpolate_factor = s``): positions are divided by
  ``s`` (``(arange(S) + offset) / s`` in the input's dtype) instead of the
  frequencies, HF's ``linear`` scaling written on the other factor.

Glue (format only): NumPy <-> torch; the module is moved to the run's dtype with
``.to(dtype)`` as a model would be (so its ``freqs`` and caches are float64 in a
float64 run, and ``custom_freqs`` are rounded to float32 in a float32 run); one
fresh module per call, so the angle cache (filled only at offset 0) never carries
values from one case into another.

Precision class: the phase is the product ``position * theta`` in the module's
dtype (float32 or float64), positions built in the input's dtype (so rounded to
float32 above 2**24 in float32 runs, and to bf16/fp16 for such inputs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "PLANNED_CAPABILITIES", "RotaryEmbeddingTorchAdapter"]

#: What this adapter would declare with the capability keys planned for the suite.
PLANNED_CAPABILITIES: dict[str, Any] = {
    "phase": {"rope_cos_sin": "product", "rope": "product", "rope_from_base": "product"},
    "dtypes": {
        "rope_frequencies": ["float32"],
        "rope_cos_sin": ["float64", "float32"],
        "rope": ["float64", "float32"],
        "xpos_scale": ["float32"],  # zeta is built in float32, even in a .double() module
        "rope_from_base": ["float32"],
    },
    "positions": {"rope": "input dtype", "rope_cos_sin": "module dtype"},
    "frequencies": {"rope_frequencies": "float32", "rope_from_base": "float32"},
    "error_types": {"rope_frequencies": ["ZeroDivisionError (dim=2)", "AssertionError"]},
    "variants": {
        "layouts": {"interleaved": "rotate_half on (d r) pairs; the only layout"},
        "scaling_types": {
            "ntk": "theta_rescale_factor",
            "linear": "interpolate_factor, on positions (rope_from_base only)",
        },
        "xpos": {"gamma": 0.4, "centre": "len(positions) // 2", "scale_base": "xpos_scale_base"},
    },
    "apply_layouts": ["[..., seq, dim]", "[batch, seq, heads, dim] (seq_before_head_dim=True)"],
    "new_calls": {
        "xpos_scale": "xpos_scale(positions, dim, *, scale_base, gamma, offset, layout, dtype) "
        "-> (q_scale, k_scale), each [*positions.shape, dim]: zeta_i**(+-(m - offset)/scale_base), "
        "zeta_i = (2i/dim + gamma)/(1 + gamma); posenc_ref.xpos_scale's signature",
        "rope_from_base": "rope_from_base(x, positions, *, dim, base, scaling, layout) -> like x: "
        "the library builds its own frequencies; scaling {'rope_type': 'linear', 'factor': s} "
        "may divide positions instead (interpolate_factor)",
    },
}


class RotaryEmbeddingTorchAdapter(Adapter):
    """lucidrains ``rotary_embedding_torch.RotaryEmbedding``."""

    name = "rotary_embedding_torch"
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "rope"),
        # freqs are built in float32 (torch default dtype); the angle table follows the input's dtype
        dtypes={"default": ["float64", "float32"], "rope_frequencies": ["float32"]},
        phase="product",
        error_types={"rope_frequencies": ["AssertionError"]},
        layouts=("interleaved",),
        scaling_types=("default", "ntk"),
        notes={
            "rope_frequencies": "RotaryEmbedding(dim, theta, theta_rescale_factor).freqs; float32 only",
            "rope_cos_sin": "cos/sin of RotaryEmbedding(custom_freqs=inv_freq)(positions)",
            "rope": "rotate_queries_or_keys(x, offset, scale=attention_factor); contiguous positions",
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
        else:
            msg = f"rotary-embedding-torch has no {kind!r} frequency scaling"
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

    # --- planned calls (not in the suite's protocol yet) ----------------------------------------------

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
        flat = np.asarray(positions).reshape(-1)
        if gamma != 0.4:
            msg = "rotary-embedding-torch fixes xPos gamma at 0.4"
            raise Unsupported(msg)
        if offset != flat.size // 2:
            msg = "rotary-embedding-torch centres xPos at len(positions) // 2"
            raise Unsupported(msg)
        module = self._cls(dim, use_xpos=True, xpos_scale_base=scale_base).to(self._dtype(dtype))
        scale = module.get_scale(self.torch.from_numpy(flat).to(self._dtype(dtype)))
        shape = (*np.shape(positions), dim)
        return scale.reshape(shape), (scale**-1).reshape(shape)

    def rope_from_base(
        self, x: Any, positions: Any, *, dim: int, base: float, scaling: dict[str, Any] | None, layout: str
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
