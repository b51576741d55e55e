"""Built-in adapter ``mlx_lm``: mlx-lm's RoPE layers (``mlx_lm.models.rope_utils``), honestly mapped.

Run::

    scripts/matrix/setup_mlx_lm.sh /work/mvenvs/mlx_lm   # mlx-lm 0.32.2, mlx[cpu] 0.32.4
    posenc-ref check mlx_lm

MLX core (``mx.fast.rope``, ``nn.RoPE`` with given frequencies) is the ``mlx`` adapter;
this one covers what mlx-lm adds on top: the scaled RoPE variants a model gets from its
``config.json``.

* ``rope_from_base``: ``initialize_rope(dim, base, traditional, scaling_config,
  max_position_embeddings)``, the function every mlx-lm model calls, then the layer it
  returns called on ``x`` with ``offset``.  mlx-lm derives its own frequencies (float32)
  and attention factor; which layer computes what:

  - no scaling / ``default`` / ``linear``: ``nn.RoPE(dim, traditional, base, scale=1/factor)``;
  - ``dynamic``: ``DynamicNTKScalingRoPE`` (base recomputed on each call from
    ``max(offset + x.shape[-2], max_position_embeddings)``);
  - ``llama3``: ``Llama3RoPE``;
  - ``yarn``: ``YarnRoPE``: its ``mscale`` (``get_mscale(s, mscale) / get_mscale(s,
    mscale_all_dim)`` with defaults 1 and 0, no ``attention_factor`` key) multiplies the
    rotated channels of ``x``; the correction range is always floored/ceiled (no
    ``truncate`` key): DeepSeek's YaRN, declared as the variant axes
    ``yarn-attention-factor: deepseek`` and ``yarn-truncate: ignored``;
  - ``longrope``: ``SuScaledRoPE``: the attention factor from ``max_position_embeddings /
    original_max_position_embeddings`` (``factor`` not read: ``longrope: phi3-ratio``),
    applied to ``x``; the long factors at every length;
  - ``proportional``: ``ProportionalRoPE`` (rotated dims ``int(dim *
    partial_rotary_factor)``, the full ``dim`` as denominator, ``/ factor``).

Glue (format only, no arithmetic on values):

* ``layout`` -> ``traditional`` (``interleaved`` is ``True``); the layer does the rest,
  including for ``longrope``, where ``initialize_rope`` accepts ``traditional`` and
  ``SuScaledRoPE`` has none.
* ``positions`` -> the scalar ``offset`` (``positions: "consecutive"``; a non-integer
  array is skipped: there is no position array of mlx-lm's to reject it).
* ``max_position_embeddings`` is read from the scaling dict (where the canonical call
  keeps it); ``dynamic`` and ``longrope`` need it.
* ``seq_len``: mlx-lm takes none; its layers see ``offset + x.shape[-2]``.  Where the
  result depends on the length (``dynamic``, ``longrope``) a case runs only when its
  ``seq_len`` is exactly that (all golden cases are), else it is skipped.
* ``x [..., S, D]`` gets leading axes of 1 up to 3-D (``mx.fast.rope`` wants ``[B, *, S, D]``)
  and the result is viewed back; float32 only (MLX's CPU and Metal layers).

Precision class: the angle is the float32 product of ``offset + arange(S)`` (times
``scale``) and the float32 frequency inside ``mx.fast.rope`` (``"product"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["MlxLmAdapter"]

#: Scaling types whose layer reads the sequence length (mlx-lm: offset + x.shape[-2]).
_LENGTH_DEPENDENT = ("dynamic", "longrope")
#: Scaling types whose layer needs max_position_embeddings (initialize_rope's argument).
_NEEDS_MAX_POSITIONS = ("dynamic", "longrope")


def _offset(positions: Any) -> int:
    """The scalar offset mlx-lm's layers take, from a run of integer positions."""
    if not np.issubdtype(np.asarray(positions).dtype, np.integer):
        msg = "mlx-lm takes an integer offset; there is no position array of its own to reject these"
        raise Unsupported(msg)
    return contiguous_offset(positions, "mlx-lm's RoPE layers")


def _max_positions(kind: str, scaling: dict[str, Any]) -> int | None:
    """``max_position_embeddings`` for ``initialize_rope`` (from the scaling dict)."""
    value = scaling.get("max_position_embeddings")
    if value is None and kind in _NEEDS_MAX_POSITIONS:
        msg = f"initialize_rope needs max_position_embeddings for {kind!r}; the scaling dict names none"
        raise Unsupported(msg)
    return value


def _check_length(kind: str, seq_len: int | None, offset: int, length: int) -> None:
    """mlx-lm's layers see the length ``offset + x.shape[-2]``; the case's ``seq_len`` must be it."""
    if kind in _LENGTH_DEPENDENT and seq_len != offset + length:
        msg = (
            f"mlx-lm's {kind!r} layer takes no seq_len: it sees offset + x.shape[-2] = {offset + length}, "
            f"not {seq_len}"
        )
        raise Unsupported(msg)


class MlxLmAdapter(Adapter):
    """mlx-lm's ``initialize_rope`` and the layers it returns."""

    name = "mlx_lm"
    capabilities = Capabilities(
        functions=("rope_from_base",),
        dtypes=("float32",),  # MLX's layers compute in float32 (Metal has no float64)
        phase="product",  # mx.fast.rope: float32 (offset + arange(S)) * scale * inv_freq
        positions="consecutive",  # the layers take a scalar offset
        scaling_types=("default", "linear", "dynamic", "yarn", "llama3", "longrope", "proportional"),
        variants={
            # YarnRoPE: get_mscale(s, mscale) / get_mscale(s, mscale_all_dim), defaults 1 and 0, no
            # attention_factor key; floor/ceil of the correction range whatever truncate says
            "yarn-attention-factor": "deepseek",
            "yarn-truncate": "ignored",
            # SuScaledRoPE: s = max_position_embeddings / original, the factor key not read
            "longrope": "phi3-ratio",
        },
        notes={
            "rope_from_base": "initialize_rope(dim, base, traditional, scaling, max_position_embeddings)"
            "(x, offset): nn.RoPE / DynamicNTKScalingRoPE / Llama3RoPE / YarnRoPE / SuScaledRoPE / "
            "ProportionalRoPE derive their own float32 frequencies; contiguous positions only; "
            "seq_len must equal offset + S where it matters (dynamic, longrope)",
        },
    )

    def __init__(self) -> None:
        try:
            import mlx.core as mx
            from mlx_lm.models.rope_utils import initialize_rope
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter mlx_lm needs mlx-lm (scripts/matrix/setup_mlx_lm.sh): {exc}"
            raise AdapterError(msg) from exc
        self.mx = mx
        self._initialize_rope = initialize_rope

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "mlx-lm": version("mlx-lm"),
            "mlx": version("mlx"),
            "device": str(self.mx.default_device()),
        }

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
        check_layout(layout, ("half", "interleaved"), "mlx-lm")
        kind = scaling_kind(scaling)
        offset = _offset(positions)
        data = np.asarray(x)
        _check_length(kind, seq_len, offset, data.shape[-2] if data.ndim >= 2 else 1)
        config = dict(scaling) if scaling else None
        layer = self._initialize_rope(
            dim,
            base,
            layout == "interleaved",
            config,
            _max_positions(kind, config or {}),
        )
        array = self.mx.array(data)
        if array.ndim < 3:  # mx.fast.rope wants [B, *, S, D]
            array = array.reshape((1,) * (3 - array.ndim) + tuple(array.shape))
        return layer(array, offset=offset).reshape(data.shape)


#: The variants of this built-in adapter (``posenc-ref check mlx_lm``).
ADAPTERS: dict[str, type[Adapter]] = {"default": MlxLmAdapter}
