"""Built-in adapter ``megatron_core``: NVIDIA megatron-core's own RoPE modules, unfused, on CPU.

Run::

    scripts/matrix/setup_megatron_core.sh /work/mvenvs/megatron_core   # megatron-core 0.16.1
    posenc-ref check megatron_core

No transformer-engine, apex or flash-attn is installed, so megatron-core runs its unfused
PyTorch RoPE (``TransformerConfig(apply_rope_fusion=False)``).  Modules of
``megatron.core.models.common.embeddings``, canonical call -> megatron-core:

* ``rope_frequencies``: the public ``inv_freq`` attribute of
  ``RotaryEmbedding(kv_channels=dim, rotary_percent=1.0, rotary_base=base,
  use_cpu_initialization=True)``; ``llama3`` adds ``rope_scaling=True,
  rope_scaling_factor=factor`` (megatron fixes ``low_freq_factor`` 1, ``high_freq_factor`` 4
  and ``original_max_position_embeddings`` 8192: other values are skipped).  ``linear``
  (``seq_len_interpolation_factor``) scales the positions, not ``inv_freq``: its frequency
  is read off the angle table ``get_freqs_non_repeated(2)`` at position 1.  Attention factor 1.
  ``yarn`` (CUDA only, see below): ``YarnRotaryEmbedding(...).forward(2)`` -> ``(emb,
  mscale)``: the angles at position 1 and ``mscale``.
* ``rope_cos_sin``: ``RotaryEmbedding.get_cos_sin(max_seq_len, offset)`` (one cos/sin per
  pair, the tables megatron's flash-decode path uses), one call per row of positions, each
  row a run ``offset + arange(n)``; the adapter repeats each pair value over its two channels
  (``half``: ``[v, v]``, ``interleaved``: ``v.repeat(2)``).  No attention factor (megatron
  applies ``mscale`` inside ``apply_rotary_pos_emb``).
* ``apply_rope``: ``rope_utils.apply_rotary_pos_emb_with_cos_sin(t, cos, sin,
  rotary_interleaved)`` with one cos/sin value per pair (what ``get_cos_sin`` returns).
* ``rope``, ``rope_from_base``, ``rope_heads``: the angle table ``emb`` of the module
  (``[max_seq_len, 1, 1, rot_dim]`` for the positions ``offset + arange(max_seq_len)``)
  handed to ``rope_utils.apply_rotary_pos_emb(t, emb, config, mscale=..., cp_group=...)``;
  ``mscale`` is the case's attention factor (``rope``, ``rope_heads``) or YaRN's own
  (``rope_from_base``).  Partial rotary is megatron's ``kv_channels = x.shape[-1]``,
  ``rotary_percent = dim / kv_channels``.  ``rope_heads`` takes ``bhsd``/``bshd`` one batch
  row at a time (each row's own offset) as megatron's ``[s, b, h, d]``, and ``thd`` as
  megatron's packed format: ``cu_seqlens`` from the runs of positions, each sequence
  restarting at 0 (or one run from any offset).
* ``mrope_angles`` (``chunked`` sections, CUDA only): ``MultimodalRotaryEmbedding.forward(
  position_ids [3, b, L], mrope_section)`` -> ``emb [L, b, 1, 2F]``, whose first ``F`` channels
  are the angles.

What runs on CPU: ``RotaryEmbedding.forward``/``get_emb`` move ``inv_freq`` to
``torch.cuda.current_device()`` on every call from CPU, and ``YarnRotaryEmbedding.__init__`` and
``MultimodalRotaryEmbedding.__init__`` go through CUDA unconditionally.  On a machine without
CUDA the adapter therefore builds ``emb`` from ``get_freqs_non_repeated(max_seq_len, offset)``
(the angle product ``get_emb`` wraps) laid out as ``get_emb`` does (``cat((f, f))`` for half,
each angle twice for interleaved), and skips YaRN and M-RoPE with the reason.  Where
``torch.cuda.is_available()``, it calls ``forward`` itself and runs YaRN and M-RoPE (not run
in this project's CI, which has no GPU).

``apply_rotary_pos_emb`` reads its context-parallel group from ``parallel_state`` unless one is
passed: the adapter makes a one-process ``gloo`` group (``torch.distributed`` with a
``HashStore``, no network) and passes it, as a model with context parallelism 1 does.

megatron-core's YaRN is DeepSeek's attention-factor formula (``mscale`` defaults to 1,
``mscale_all_dim`` to 0, the factor ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)``,
no ``attention_factor`` argument: such cases are skipped) and honours truncation
(``correction_range_round_to_int`` is HF's ``truncate``); declared as variant axes.  The factor
multiplies cos and sin (``apply_rotary_pos_emb(..., mscale)`` and its ``cos_cached``).

Precision: megatron builds ``inv_freq`` in float32 (``dtype=torch.float32`` is fixed) and the
positions as ``float32 arange(max_seq_len) + offset`` (``"product"``; only float32 runs);
``apply_rope`` rotates in the dtype of ``x``.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, require_default_base, scaling_kind
from ._kernel import pair_table, pair_values
from .base import LAYOUTS, Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "ADAPTERS", "MegatronCoreAdapter"]

_LIBRARY = "megatron-core"
_OFFSET = "megatron-core's RotaryEmbedding.forward(max_seq_len, offset)"
#: What RotaryEmbedding._apply_scaling fixes (its constructor passes only rope_scaling_factor).
_LLAMA3_FIXED = {"low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
#: HF yarn keys -> YarnRotaryEmbedding's arguments.
_YARN_ARGS = {
    "factor": "scaling_factor",
    "original_max_position_embeddings": "original_max_position_embeddings",
    "beta_fast": "beta_fast",
    "beta_slow": "beta_slow",
    "mscale": "mscale",
    "mscale_all_dim": "mscale_all_dim",
    "truncate": "correction_range_round_to_int",
}
#: Why a module cannot run without CUDA (megatron-core puts its frequencies on torch.cuda.current_device()).
_CUDA_ONLY = {
    "yarn": "YarnRotaryEmbedding needs CUDA: its __init__ builds the cos/sin cache through get_emb, which "
    "moves the frequencies to torch.cuda.current_device()",
    "mrope": "MultimodalRotaryEmbedding needs CUDA: its __init__ creates inv_freq on "
    "torch.cuda.current_device()",
}

_NOTES = {
    "rope_frequencies": "RotaryEmbedding(dim, rotary_base=base).inv_freq (llama3: rope_scaling_factor, "
    "fixed 1/4/8192); linear: angles at position 1; yarn (CUDA): forward(2) angles and mscale",
    "rope_cos_sin": "RotaryEmbedding.get_cos_sin(n, offset) per row; pair values repeated per layout; "
    "default inv_freq only (rebuilt from the base)",
    "apply_rope": "apply_rotary_pos_emb_with_cos_sin(t [s, b, 1, d], cos/sin per pair, rotary_interleaved)",
    "rope": "apply_rotary_pos_emb(t [s, b, 1, d], emb, config, mscale=attention_factor); emb from "
    "get_freqs_non_repeated(n, offset) on CPU, forward(n, offset) on CUDA",
    "rope_heads": "bhsd/bshd per batch row as [s, 1, h, d]; thd via cu_seqlens (each packed sequence "
    "from 0, or one run)",
    "rope_from_base": "RotaryEmbedding(kv_channels=width, rotary_percent=dim/width, ...) or "
    "YarnRotaryEmbedding (CUDA only) -> emb (and mscale) -> apply_rotary_pos_emb",
    "mrope_angles": "MultimodalRotaryEmbedding.forward(position_ids [3, b, L], mrope_section) (CUDA only)",
}


def _factor(scaling: dict[str, Any], kind: str) -> float:
    factor = scaling.get("factor")
    if factor is None:
        msg = f"{_LIBRARY} takes the {kind} factor as an argument; this scaling has none to pass"
        raise Unsupported(msg)
    return float(factor)


def _llama3_factor(scaling: dict[str, Any]) -> float:
    """``rope_scaling_factor`` for an HF llama3 dict whose other parameters are megatron's fixed ones."""
    for key, fixed in _LLAMA3_FIXED.items():
        if scaling.get(key) != fixed:
            msg = (
                f"{_LIBRARY}'s RotaryEmbedding(rope_scaling=True) fixes {key}={fixed} "
                f"(only rope_scaling_factor is an argument); got {scaling.get(key)!r}"
            )
            raise Unsupported(msg)
    return _factor(scaling, "llama3")


def _yarn_args(scaling: dict[str, Any]) -> dict[str, Any]:
    """YarnRotaryEmbedding's keyword arguments for an HF yarn dict (names only; absent keys keep megatron's
    defaults: mscale 1, mscale_all_dim 0, beta_fast 32, beta_slow 1, rounding on)."""
    params = {k: v for k, v in scaling.items() if k not in ("rope_type", "type") and v is not None}
    if "attention_factor" in params:
        msg = f"{_LIBRARY}'s YarnRotaryEmbedding has no attention_factor argument"
        raise Unsupported(msg)
    if "factor" not in params:
        msg = f"{_LIBRARY}'s YarnRotaryEmbedding takes scaling_factor; it derives none from the lengths"
        raise Unsupported(msg)
    if "original_max_position_embeddings" not in params:
        msg = f"{_LIBRARY}'s YarnRotaryEmbedding takes original_max_position_embeddings; none given"
        raise Unsupported(msg)
    unknown = sorted(set(params) - set(_YARN_ARGS) - {"max_position_embeddings"})  # the latter is unread
    if unknown:
        msg = f"{_LIBRARY}'s YarnRotaryEmbedding has no argument for {unknown}"
        raise Unsupported(msg)
    return {_YARN_ARGS[k]: v for k, v in params.items() if k in _YARN_ARGS}


def _runs(positions: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each maximal run ``p, p + 1, ...`` of 1-D ``positions``."""
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    bounds = [0, *breaks.tolist(), positions.size]
    return [(int(positions[a]), b - a) for a, b in itertools.pairwise(bounds) if b > a]


class MegatronCoreAdapter(Adapter):
    """megatron-core's RotaryEmbedding, YarnRotaryEmbedding, MultimodalRotaryEmbedding and rope_utils."""

    name = "megatron_core"
    capabilities = Capabilities(
        functions=(
            "rope_frequencies",
            "rope_cos_sin",
            "apply_rope",
            "rope",
            "rope_heads",
            "rope_from_base",
            "mrope_angles",
        ),
        # inv_freq is built in float32 whatever the model dtype; apply_rope rotates in x's dtype
        dtypes={"default": ["float32"], "apply_rope": ["float64", "float32"]},
        phase="product",  # (float32 arange(n) + offset) * float32 inv_freq
        scaling_types=("default", "linear", "llama3", "yarn"),
        head_layouts=("bhsd", "bshd", "thd"),
        # torch's shape errors, raised by megatron's split of the channels into M-RoPE sections
        error_types={"mrope_angles": ["RuntimeError"]},
        variants={"yarn-attention-factor": "deepseek", "yarn-truncate": "honoured"},
        # forward(max_seq_len, offset); rope_heads' thd runs and M-RoPE's position_ids are arrays
        positions={"default": "consecutive", "rope_heads": "any", "mrope_angles": "any"},
        notes=_NOTES,
    )

    def __init__(self) -> None:
        import torch
        import torch.distributed as dist

        with warnings.catch_warnings():  # "Transformer Engine and Apex are not installed": as intended
            warnings.simplefilter("ignore")
            from megatron.core.models.common.embeddings import rope_utils
            from megatron.core.models.common.embeddings.rotary_pos_embedding import (
                MultimodalRotaryEmbedding,
                RotaryEmbedding,
            )
            from megatron.core.models.common.embeddings.yarn_rotary_pos_embedding import YarnRotaryEmbedding
            from megatron.core.transformer.transformer_config import TransformerConfig

        self.torch = torch
        self.cuda = torch.cuda.is_available()
        self._rope_utils = rope_utils
        self._classes = {
            "rope": RotaryEmbedding,
            "yarn": YarnRotaryEmbedding,
            "mrope": MultimodalRotaryEmbedding,
        }
        if not dist.is_initialized():  # a one-process group: context parallelism 1, no network
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        self.cp_group = dist.group.WORLD
        with warnings.catch_warnings():  # a deprecation notice about cuda_graph_scope defaults
            warnings.simplefilter("ignore")
            self._configs = self._make_configs(TransformerConfig)
        self._modules: dict[tuple[Any, ...], Any] = {}

    @staticmethod
    def _make_configs(config_class: Any) -> dict[str, Any]:
        """The TransformerConfig apply_rotary_pos_emb reads (rotary_interleaved, apply_rope_fusion, MLA)."""
        return {
            layout: config_class(
                num_layers=1,
                hidden_size=8,
                num_attention_heads=1,
                rotary_interleaved=layout == "interleaved",
                apply_rope_fusion=False,
            )
            for layout in LAYOUTS
        }

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "megatron-core": version("megatron-core"),
            "torch": self.torch.__version__,
            "path": "forward (CUDA)" if self.cuda else "get_freqs_non_repeated / get_cos_sin (CPU)",
        }

    # --- modules ----------------------------------------------------------------------------------

    def _rotary(
        self, dim: int, base: float, layout: str, width: int | None = None, scaling: Any = None
    ) -> Any:
        """A RotaryEmbedding rotating ``dim`` of ``width`` channels (megatron's rotary_percent)."""
        kind = scaling_kind(scaling)
        kwargs: dict[str, Any] = {}
        if kind == "linear":
            kwargs["seq_len_interpolation_factor"] = _factor(scaling, "linear")
        elif kind == "llama3":
            kwargs.update(rope_scaling=True, rope_scaling_factor=_llama3_factor(scaling))
        elif kind != "default":
            msg = f"{_LIBRARY}'s RotaryEmbedding has no {kind!r} scaling"
            raise Unsupported(msg)
        kv_channels = width or dim
        percent = dim / kv_channels
        if int(kv_channels * percent) != dim:  # megatron: dim = int(kv_channels * rotary_percent)
            msg = f"rotary_percent {dim}/{kv_channels} does not give back {dim} channels in float64"
            raise Unsupported(msg)
        key = ("rope", kv_channels, percent, layout, base, *sorted(kwargs.items()))
        if key not in self._modules:
            self._modules[key] = self._classes["rope"](
                kv_channels=kv_channels,
                rotary_percent=percent,
                rotary_interleaved=layout == "interleaved",
                rotary_base=base,
                use_cpu_initialization=True,
                cp_group=self.cp_group,
                **kwargs,
            )
        return self._modules[key]

    def _yarn(self, dim: int, base: float, scaling: dict[str, Any], layout: str) -> Any:
        args = _yarn_args(scaling)
        if layout != "half":  # get_emb asserts it
            msg = f"{_LIBRARY}'s YarnRotaryEmbedding does not support interleaved rotary embeddings"
            raise Unsupported(msg)
        if not self.cuda:
            raise Unsupported(_CUDA_ONLY["yarn"])
        key = ("yarn", dim, base, *sorted(args.items()))
        if key not in self._modules:
            self._modules[key] = self._classes["yarn"](
                kv_channels=dim, rotary_base=base, cp_group=self.cp_group, **args
            )
        return self._modules[key]

    def _angles(self, module: Any, length: int, offset: int, layout: str) -> tuple[Any, float]:
        """megatron's angle table ``emb [length, 1, 1, rot_dim]`` at ``offset + arange(length)``; mscale."""
        if self.cuda:
            out = module(length, offset)  # forward: emb, or (emb, mscale) for YaRN
            return out if isinstance(out, tuple) else (out, 1.0)
        # forward/get_emb move inv_freq to CUDA; get_emb is this product laid out per rotary_interleaved
        freqs = module.get_freqs_non_repeated(length, offset)
        if layout == "half":
            emb = self.torch.cat((freqs, freqs), dim=-1)
        else:
            emb = freqs.repeat_interleave(2, dim=-1)
        return emb[:, None, None, :], 1.0

    def _apply(self, t: Any, emb: Any, layout: str, mscale: float, cu_seqlens: Any = None) -> Any:
        """``rope_utils.apply_rotary_pos_emb`` (unfused) on ``t [s, b, h, d]`` (or ``[t, h, d]`` packed)."""
        with self.torch.no_grad():
            out = self._rope_utils.apply_rotary_pos_emb(
                t.to(emb.device),
                emb,
                self._configs[layout],
                cu_seqlens=cu_seqlens,
                mscale=mscale,
                cp_group=self.cp_group,
            )
        return out.cpu()

    def _rotate_rows(self, x: Any, emb: Any, layout: str, mscale: float) -> Any:
        """``x [..., S, D]`` as megatron's ``[s, b, 1, d]`` (leading axes in ``b``), rotated, viewed back."""
        data = np.asarray(x)
        seq, width = data.shape[-2], data.shape[-1]
        moved = np.moveaxis(data, -2, 0)
        t = self.torch.from_numpy(np.ascontiguousarray(moved).reshape(seq, -1, 1, width))
        out = self._apply(t, emb, layout, mscale).numpy().reshape(moved.shape)
        return np.moveaxis(out, 0, -2)

    # --- frequencies ------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        kind = scaling_kind(scaling)
        if kind == "yarn":
            emb, mscale = self._angles(self._yarn(dim, base, scaling or {}, "half"), 2, 0, "half")
            return emb[1, 0, 0, : dim // 2].cpu(), float(mscale)
        module = self._rotary(dim, base, "half", scaling=scaling)
        if kind == "linear":  # seq_len_interpolation_factor scales positions: the angle at position 1
            return module.get_freqs_non_repeated(2, 0)[1].cpu(), 1.0
        return module.inv_freq.cpu(), 1.0

    # --- tables and rotation ----------------------------------------------------------------------

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        layout = check_layout(layout, LAYOUTS, _LIBRARY)
        if attention_factor != 1.0:
            msg = f"{_LIBRARY}'s get_cos_sin has no attention factor (apply_rotary_pos_emb takes mscale)"
            raise Unsupported(msg)
        base = require_default_base(inv_freq, _LIBRARY)
        dim = 2 * np.size(inv_freq)
        module = self._rotary(dim, base, layout)
        pos = np.asarray(positions)
        rows = pos.reshape(-1, pos.shape[-1] if pos.ndim else 1)
        cos, sin = [], []
        for row in rows:
            c, s = module.get_cos_sin(row.size, contiguous_offset(row, _OFFSET))
            cos.append(c.cpu().numpy())
            sin.append(s.cpu().numpy())
        shape = (*pos.shape, dim // 2)
        return (
            pair_table(np.stack(cos).reshape(shape), layout),
            pair_table(np.stack(sin).reshape(shape), layout),
        )

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        layout = check_layout(layout, LAYOUTS, _LIBRARY)
        data = np.asarray(x)
        if np.ndim(cos) != 2:
            msg = f"{_LIBRARY}'s apply_rotary_pos_emb_with_cos_sin takes cos/sin [seq_len, rot_dim / 2]"
            raise Unsupported(msg)
        c = self.torch.from_numpy(np.ascontiguousarray(pair_values(np.asarray(cos), layout, "cos")))
        s = self.torch.from_numpy(np.ascontiguousarray(pair_values(np.asarray(sin), layout, "sin")))
        seq, width = data.shape[-2], data.shape[-1]
        moved = np.moveaxis(data, -2, 0)
        t = self.torch.from_numpy(np.ascontiguousarray(moved).reshape(seq, -1, 1, width))
        with self.torch.no_grad():
            out = self._rope_utils.apply_rotary_pos_emb_with_cos_sin(
                t, c, s, rotary_interleaved=layout == "interleaved"
            )
        return np.moveaxis(out.numpy().reshape(moved.shape), 0, -2)

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        layout = check_layout(layout, LAYOUTS, _LIBRARY)
        base = require_default_base(inv_freq, _LIBRARY)
        data = np.asarray(x)
        if np.shape(positions) != (data.shape[-2],):
            msg = f"{_LIBRARY}'s emb is one table [seq, 1, 1, d] for every row of x"
            raise Unsupported(msg)
        module = self._rotary(2 * np.size(inv_freq), base, layout, width=data.shape[-1])
        emb, _ = self._angles(module, data.shape[-2], contiguous_offset(positions, _OFFSET), layout)
        return self._rotate_rows(data, emb, layout, float(attention_factor))

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
        layout = check_layout(layout, LAYOUTS, _LIBRARY)
        base = require_default_base(inv_freq, _LIBRARY)
        data = np.asarray(x)
        module = self._rotary(2 * np.size(inv_freq), base, layout, width=data.shape[-1])
        if head_layout == "thd":
            return self._packed(module, data, np.asarray(positions).reshape(-1), layout, attention_factor)
        if head_layout not in ("bhsd", "bshd"):
            msg = f"{_LIBRARY} has no head layout {head_layout!r}"
            raise Unsupported(msg)
        seq_axis = 2 if head_layout == "bhsd" else 1
        pos = np.broadcast_to(np.asarray(positions), (data.shape[0], data.shape[seq_axis]))
        out = np.empty_like(data)
        for b in range(data.shape[0]):  # megatron's emb is shared by a batch: one row at a time
            emb, _ = self._angles(module, pos.shape[1], contiguous_offset(pos[b], _OFFSET), layout)
            seq_first = np.moveaxis(data[b], seq_axis - 1, 0)  # [s, h, d]
            t = self.torch.from_numpy(np.ascontiguousarray(seq_first)[:, None])
            rotated = self._apply(t, emb, layout, float(attention_factor)).numpy()[:, 0]
            out[b] = np.moveaxis(rotated, 0, seq_axis - 1)
        return out

    def _packed(self, module: Any, data: np.ndarray, pos: np.ndarray, layout: str, factor: float) -> Any:
        """``x [t, h, d]`` as megatron's packed sequences (``cu_seqlens``), rotated."""
        runs = _runs(pos)
        if len(runs) == 1:  # one sequence: emb of exactly its positions (megatron's exact mapping)
            emb, _ = self._angles(module, pos.size, runs[0][0], layout)
        elif all(start == 0 for start, _ in runs):  # each packed sequence from position 0
            emb, _ = self._angles(module, max(n for _, n in runs), 0, layout)
        else:
            msg = f"{_LIBRARY}'s packed (thd) RoPE starts every sequence at position 0; got runs {runs}"
            raise Unsupported(msg)
        cu_seqlens = self.torch.tensor([0, *np.cumsum([n for _, n in runs]).tolist()], dtype=self.torch.int32)
        t = self.torch.from_numpy(np.ascontiguousarray(data))
        return self._apply(t, emb, layout, float(factor), cu_seqlens=cu_seqlens.to(emb.device))

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
        layout = check_layout(layout, LAYOUTS, _LIBRARY)
        data = np.asarray(x)
        if np.shape(positions) != (data.shape[-2],):
            msg = f"{_LIBRARY}'s emb is one table [seq, 1, 1, d] for every row of x"
            raise Unsupported(msg)
        if scaling_kind(scaling) == "yarn":  # YaRN's kv_channels is its rotary dim (rotary_percent unread)
            module = self._yarn(dim, base, scaling or {}, layout)
        else:
            module = self._rotary(dim, base, layout, width=data.shape[-1], scaling=scaling)
        emb, mscale = self._angles(module, data.shape[-2], contiguous_offset(positions, _OFFSET), layout)
        return self._rotate_rows(data, emb, layout, float(mscale))

    # --- M-RoPE -----------------------------------------------------------------------------------

    def mrope_angles(
        self, position_ids: Any, inv_freq: Any, *, mrope_section: Any, section_order: str, dtype: str
    ) -> Any:
        if section_order != "chunked":
            msg = f"{_LIBRARY}'s MultimodalRotaryEmbedding has chunked sections (Qwen2-VL) only"
            raise Unsupported(msg)
        ids = np.asarray(position_ids)
        if ids.ndim < 2 or ids.shape[0] != 3:
            msg = f"{_LIBRARY}'s MultimodalRotaryEmbedding takes position_ids [3, batch, seq]"
            raise Unsupported(msg)
        base = require_default_base(inv_freq, _LIBRARY)
        if not self.cuda:
            raise Unsupported(_CUDA_ONLY["mrope"])
        pairs = np.size(inv_freq)
        key = ("mrope", pairs, base)
        if key not in self._modules:
            self._modules[key] = self._classes["mrope"](
                kv_channels=2 * pairs, rotary_percent=1.0, rotary_base=base, cp_group=self.cp_group
            )
        seq = ids.shape[-1]
        batched = self.torch.from_numpy(np.ascontiguousarray(ids).reshape(3, -1, seq))
        with self.torch.no_grad():
            emb = self._modules[key](batched, [int(s) for s in mrope_section])  # [seq, b, 1, 2F]
        angles = emb[:, :, 0, :pairs].transpose(0, 1).cpu()  # [b, seq, F]
        return angles.reshape(*ids.shape[1:-1], seq, pairs)


ADAPTER = MegatronCoreAdapter

#: The variants of this built-in adapter (``posenc-ref check megatron_core``).
ADAPTERS: dict[str, type[Adapter]] = {"default": MegatronCoreAdapter}
