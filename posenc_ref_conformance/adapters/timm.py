"""Built-in adapter for timm's positional code (``timm.layers.pos_embed_sincos``).

Run::

    scripts/matrix/setup_timm.sh /work/mvenvs/timm   # timm 1.0.31 (--no-deps) beside the CPU torch 2.13.0
    posenc-ref check timm        # also timm:mixed

timm builds its encodings over a *grid* (``feat_shape``, plus a scalar ``grid_offset``),
not over a position array; its 1-D form (``feat_shape=[n]``) is a plain sequence.  The
adapter asks timm for the table over ``min(positions) .. max(positions)``
(``feat_shape=[span]``, ``grid_offset=min``) and selects the case's rows with timm's own
``apply_keep_indices_nlc`` (what EVA does with the rope rows of the tokens that patch
dropout keeps), so any integer positions whose span fits a table of 2**24 elements are
served; wider spans (the ``reach-sweep`` cases) are skipped.

Coverage (canonical function -> timm):

* ``rope_frequencies`` (scaling ``default``): ``freq_bands(dim, temperature=base, step=2)``,
  ``1 / base**(arange(0, dim, 2) / dim)`` in float32 (the form RotaryEmbeddingMRope uses;
  the axial modules' ``freq_bands(dim // 4, step=1)`` of ``dim = 2 d`` gives the same
  values); attention factor 1 (timm has none).
* ``rope_cos_sin``: ``build_rotary_pos_embed([span], bands=inv_freq, in_pixels=False,
  grid_offset=min, rotate_half=layout == "half", dtype=dtype)``, which returns
  ``(sin, cos)`` ``[span, 2 len(inv_freq)]`` already in the canonical per-channel layout
  (``rotate_half=False``: ``[f0, f0, f1, f1, ..]``; ``True``: ``[f0, f1, .., f0, f1, ..]``),
  rows picked by ``apply_keep_indices_nlc``; returned as ``(cos, sin)``.
* ``apply_rope``: ``apply_rot_embed(x, sin, cos, half=layout == "half")``.  timm's
  ``rot`` is the interleaved pair rotation (``[x0, x1, ..] -> [-x1, x0, -x3, x2, ..]``,
  pairs ``2i, 2i+1``), ``rope_rotate_half`` the half one (pairs ``i, i + d/2``).
* ``rope``: ``apply_rope(x, *rope_cos_sin(...))`` (the protocol's default).
* ``rope_heads`` (``bhsd`` only, timm's attention layout ``[B, H, N, D]``): the table of
  ``build_rotary_pos_embed`` as timm's concatenated ``[sin | cos]``, per-row rows by
  ``apply_keep_indices_nlc(x, table, positions - min)`` then ``unsqueeze(1)`` (EVA's own
  steps), applied by ``apply_rot_embed_cat(x, rows, half=...)``.
* ``rope_from_base``: ``RotaryEmbeddingCat(2 dim, temperature=base, in_pixels=False,
  grid_offset=min, rotate_half=...).get_embed([span])`` (timm's axial module on a 1-D grid:
  ``dim // 4`` bands ``base**(-j / (dim / 4))`` per axis, so ``2 d`` gives the ``d``-channel
  RoPE of base ``base``), rows by ``apply_keep_indices_nlc``, applied by
  ``apply_rot_embed_cat``.  ``linear`` scaling with an integer factor ``s`` is timm's
  ``ref_feat_shape`` (EVA's fine-tune resize: positions ``t / feat * ref``): the grid is
  padded to ``feat = s * ceil(span / s)`` and ``ref = feat / s``.
* ``sinusoidal`` (``convention="marian"`` only, option ``base``):
  ``build_fourier_pos_embed([span], num_bands=dim // 2, temperature=base, in_pixels=False,
  grid_offset=min)``, whose ``(sin, cos)`` are concatenated ``[sin | cos]`` with the
  frequencies ``base**(-2k/dim)``: HF Marian's table for even ``dim``.  For positions
  ``0 .. n-1`` it equals ``build_sincos2d_pos_embed([n], dim=2 dim)`` (a test checks it).

Variant ``timm:mixed`` (RoPE-Mixed's code path, ``RotaryEmbeddingMixed``): ``rope_cos_sin``
is ``get_mixed_freqs(freqs=stack([inv_freq, 0]), t_x=positions, t_y=0)``, the angles
``t_x fx + t_y fy`` of a token on the x axis, which take coordinate vectors, so any
positions (no grid, no span limit); float32 only (it computes with ``.float()``),
interleaved only (it expands each frequency to its pair).  ``apply_rope`` and
``rope_heads`` (``bhsd``, ``t_x = positions [B, S]``, ``unsqueeze(1)``) go through
``apply_rot_embed_cat``, as its consumers do.

Grid resize (``timm.layers.pos_embed``, loaded as ``pos_embed_sincos`` is):

* ``patch_grid_resize``: ``resample_abs_pos_embed(posemb [1, P + n m, D], new_size,
  old_size=grid, num_prefix_tokens=P, interpolation=mode, antialias, align_corners)``
  (``linear`` is F.interpolate's ``bilinear``; ``align_corners=None`` for ``nearest``).
  timm resizes in float32 (``posemb.float()``) and casts back: float32 only.  Its early
  return (token count and grid unchanged) is ``skip_same_grid``; without it a same-size
  resize without ``scale_factor`` is the table itself, so either flag is served.
* ``grid_resize`` (2-D, ``align_corners=False``): ``resample_abs_pos_embed_nhwc(posemb
  [1, n, m, D], new_size, interpolation, antialias)``.  Neither takes a ``scale_factor``.

Vision (2-D grids):

* ``sincos_2d`` (``rt_detr``, ``omdet_turbo``): ``build_sincos2d_pos_embed([H, W], dim,
  temperature, interleave_sin_cos=True)``, whose rows are h-major ``[sin h | cos h | sin w |
  cos w]`` (its default, ``interleave_sin_cos=False``, is ``[sin h | sin w | cos h | cos w]``,
  no canonical convention); ``reverse_coord=True`` stacks W, H: w-major rows ``[w | h]``,
  OmDet-Turbo's.  The grid is ``arange(max + 1)`` per axis (timm has no offset), rows picked
  by ``apply_keep_indices_nlc``, so non-negative positions only.  ``vit_mae`` (``[w | h]``
  over h-major rows) and the cls row are not computed by timm: ``Unsupported``.  Bands
  (``freq_bands(D/4, step=1)``: ``T**(-k/(D/4))``) and grid are float32, cast at the end:
  float32 only.  ``dim % 4`` is checked by an ``assert`` (``AssertionError``).
* ``rope_2d_cos_sin``: ``sam2`` -> ``build_rotary_pos_embed([H, W], dim=D,
  temperature=base, in_pixels=False, grid_indexing="xy", rotate_half=False)``: bands
  ``base**(-4k/D)`` on both axes, channels ``[x | y]`` each on one interleaved pair;
  ``llama4_vision`` the same with ``grid_offset`` 1 (Llama 4's ``idx + 1``; its cls
  ``(-1, -1)`` lands on angle 0).  The grid spans ``min .. max`` of both axes (one scalar
  ``grid_offset``), rows ``(y - min) W + (x - min)`` by ``apply_keep_indices_nlc``; integer
  positions (or floats holding them).  ``dinov3``: not mapped, ``RotaryEmbeddingDinoV3``'s
  public ``get_embed`` builds its own patch-centre grid from a shape and its coordinate step
  is private (``docs/matrix/repro/timm_dinov3_rope_base.py`` shows its unchecked
  ``temperature`` through the public API).  All float32 (bands, periods, grid and product),
  float32 only.  Not computed by timm: ``pixtral`` (timm's bands
  are the same on both axes), ``gemma4_vision`` (one ``[y | x]`` block, not a half per
  axis), ``kimi_k25`` (x, y slots side by side); RoPE-Mixed's frequencies are randomly
  rotated per head (``init_random_2d_freqs(rotate=True)``), no fixed layout.

Not mapped (no canonical call yet): the N-D grids of the 1-D functions above (axial RoPE
over ``(h, w)`` with per-position inputs), ``pixel_freq_bands`` (Perceiver's linear bands
in ``[1, max_freq/2] * pi``) and pixel / centered grids of ``build_rotary_pos_embed``,
RoPE-Mixed's learnt 2-D frequencies and ``RotaryEmbeddingMRope``.

Glue (format only): NumPy <-> torch; ``inv_freq`` given to timm as ``bands`` in the run's
dtype; ``positions - min`` as ``keep_indices``; reshapes of leading axes; the
``[sin | cos]`` concatenation that ``apply_rot_embed_cat`` splits again.  What timm takes no
argument for raises ``Unsupported``: an attention factor other than 1, partial rotary
(timm rotates the whole last axis), a layout name other than half / interleaved, float
positions (timm takes a grid shape and an offset; the array is the adapter's format).

Precision class (``"product"``): timm builds the grid as ``float32(arange(n)) +
grid_offset`` in float32 whatever the output dtype, then multiplies by the bands (float32
from ``freq_bands``; the case's ``inv_freq`` in the run dtype for ``rope_cos_sin``, so the
product is float64 in a float64 run).  ``freq_bands`` / ``RotaryEmbeddingCat`` /
``build_fourier_pos_embed`` build their bands in float32 even for a float64 output, so
those functions are declared float32 only.

Import: ``import timm`` (and ``timm.layers``) needs torchvision, which does not import
beside the CPU torch 2.13.0 of the matrix; ``timm/layers/pos_embed_sincos.py`` itself
imports only torch (and timm's ``_fx``, ``grid``, ``trace_utils``).  Without torchvision
the adapter loads that file, unmodified, as ``timm.layers.pos_embed_sincos`` without
running the package ``__init__`` files; ``describe()`` says which import was used.  The
functions are the ones ``timm.layers`` re-exports.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import pathlib
import sys
import types
from typing import Any

import numpy as np

from ._glue import check_layout, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTERS", "TimmAdapter", "TimmMixedAdapter", "load_pos_embed_sincos", "load_timm_layer"]

#: The most elements (rows x channels) of one table the adapter asks timm to build.
_MAX_TABLE = 2**24
_MODULE = "timm.layers.pos_embed_sincos"


def load_pos_embed_sincos() -> tuple[types.ModuleType, str]:
    """timm's ``pos_embed_sincos`` module and how it was imported.

    The normal ``import timm.layers`` when it works; otherwise (torchvision missing) the
    module file itself, under its own name, without the package ``__init__`` files.
    """
    return load_timm_layer("pos_embed_sincos")


def load_timm_layer(name: str) -> tuple[types.ModuleType, str]:
    """``timm.layers.<name>`` (``pos_embed_sincos``, ``pos_embed``) and how it was imported (see above)."""
    module_name = f"timm.layers.{name}"
    try:
        return importlib.import_module(module_name), "timm.layers"
    except ImportError as exc:
        if "torchvision" not in str(exc):
            raise
    for loaded in [n for n in sys.modules if n == "timm" or n.startswith("timm.")]:
        del sys.modules[loaded]  # what the failed package import left half-done
    spec = importlib.util.find_spec("timm")
    if spec is None or not spec.submodule_search_locations:
        msg = "timm is not installed (scripts/matrix/setup_timm.sh)"
        raise ImportError(msg)
    root = pathlib.Path(next(iter(spec.submodule_search_locations)))
    for package_name, folder in (("timm", root), ("timm.layers", root / "layers")):
        package = types.ModuleType(package_name)  # an empty package: its __init__ is what needs torchvision
        package.__path__ = [str(folder)]
        package.__spec__ = importlib.machinery.ModuleSpec(package_name, None, is_package=True)
        package.__spec__.submodule_search_locations = [str(folder)]
        sys.modules[package_name] = package
    try:
        module = importlib.import_module(module_name)
    finally:
        del sys.modules["timm.layers"], sys.modules["timm"]
    return module, f"{name}.py alone (without torchvision: no package __init__)"


def _half(layout: str) -> bool:
    """timm's ``half`` / ``rotate_half`` flag for a canonical layout."""
    return check_layout(layout, ("half", "interleaved"), "timm") == "half"


def _no_attention_factor(attention_factor: float) -> None:
    if attention_factor != 1.0:
        msg = "timm's rotary embeddings have no attention factor"
        raise Unsupported(msg)


def _grid(positions: Any, channels: int) -> tuple[int, int, np.ndarray]:
    """``(offset, span, index)``: timm's 1-D grid ``offset + arange(span)`` holding ``positions``.

    ``index`` is ``positions - offset``, the rows to keep (``keep_indices``).
    """
    pos = np.asarray(positions)
    if not np.issubdtype(pos.dtype, np.integer):
        msg = "timm takes a grid shape and a grid_offset; the positions array is the adapter's format"
        raise Unsupported(msg)
    low = int(pos.min()) if pos.size else 0
    span = int(pos.max()) - low + 1 if pos.size else 1
    if span * max(channels, 1) > _MAX_TABLE:
        msg = f"timm builds a table over the grid; positions spanning {span} rows are too far apart"
        raise Unsupported(msg)
    return low, span, (pos - low).astype(np.int64)


def _whole_width(x: Any, channels: int) -> None:
    width = np.shape(x)[-1]
    if channels < width:
        msg = f"timm rotates the whole last axis (no partial rotary): {channels} of {width} channels"
        raise Unsupported(msg)


class TimmAdapter(Adapter):
    """timm ``build_rotary_pos_embed``, ``RotaryEmbeddingCat``, ``apply_rot_embed*``, sin-cos tables."""

    name = "timm"
    capabilities = Capabilities(
        functions=(
            "rope_frequencies",
            "rope_cos_sin",
            "apply_rope",
            "rope",
            "rope_heads",
            "rope_from_base",
            "sinusoidal",
            "grid_resize",
            "patch_grid_resize",
            "sincos_2d",
            "rope_2d_cos_sin",
        ),
        # bands built by timm are float32 whatever the output dtype; given bands keep the run's dtype;
        # resample_abs_pos_embed(_nhwc) resize in float32 (posemb.float()) and cast back
        dtypes={
            "default": ["float64", "float32"],
            "rope_frequencies": ["float32"],
            "rope_from_base": ["float32"],
            "sinusoidal": ["float32"],
            "grid_resize": ["float32"],
            "patch_grid_resize": ["float32"],
            # build_sincos2d_pos_embed: float32 bands and grid, cast to the output dtype at the end;
            # build_rotary_pos_embed / RotaryEmbeddingDinoV3: float32 bands (periods), grid and product
            "sincos_2d": ["float32"],
            "rope_2d_cos_sin": ["float32"],
        },
        phase="product",  # float32 grid (exact below 2**24) times the bands, in the bands' dtype
        head_layouts=("bhsd",),  # timm's attention: q, k [B, H, N, D], rope rows [B, 1, N, 2 D]
        scaling_types=("default", "linear"),  # linear: ref_feat_shape (rope_from_base only)
        sinusoidal_conventions=("marian",),
        # a rotary dim wider than x: torch's broadcasting in apply_rot_embed_cat rejects it
        # resample_abs_pos_embed(_nhwc) check nothing: torch's reshape / interpolate raise RuntimeError
        # on a bad size or prefix count, and a one-side grid indexes past its end (IndexError)
        error_types={
            "rope_from_base": ["RuntimeError"],
            "grid_resize": ["RuntimeError"],
            "patch_grid_resize": ["RuntimeError", "IndexError"],
            # build_sincos2d_pos_embed: assert dim % 4 == 0
            "sincos_2d": ["AssertionError"],
        },
        notes={
            "rope_frequencies": "freq_bands(dim, temperature=base, step=2), float32; default scaling only",
            "rope_cos_sin": "build_rotary_pos_embed([span], bands=inv_freq, in_pixels=False, "
            "grid_offset=min, rotate_half), rows by apply_keep_indices_nlc; span * width <= 2**24",
            "apply_rope": "apply_rot_embed(x, sin, cos, half); whole last axis only (no partial rotary)",
            "rope": "rope_cos_sin then apply_rope; no attention factor, no partial rotary",
            "rope_heads": "apply_keep_indices_nlc(x, [sin | cos] table, keep).unsqueeze(1) then "
            "apply_rot_embed_cat (EVA's steps); bhsd only",
            "rope_from_base": "RotaryEmbeddingCat(2 dim, temperature=base, in_pixels=False, grid_offset, "
            "rotate_half[, ref_feat_shape for an integer linear factor]).get_embed([span]), float32",
            "sinusoidal": "build_fourier_pos_embed([span], num_bands=dim/2, temperature=base, "
            "in_pixels=False, grid_offset) as [sin | cos]: the marian table, even dim, float32",
            "grid_resize": "resample_abs_pos_embed_nhwc(table [1, n, m, D], new_size, interpolation, "
            "antialias): 2-D, align_corners=False, size= only, float32",
            "patch_grid_resize": "resample_abs_pos_embed(table [1, P + n m, D], new_size, old_size, "
            "num_prefix_tokens, interpolation, antialias, align_corners), float32",
            "sincos_2d": "build_sincos2d_pos_embed([H, W], dim, temperature, interleave_sin_cos=True"
            "[, reverse_coord=True for omdet_turbo]), rows by apply_keep_indices_nlc; rt_detr and "
            "omdet_turbo, no cls row, non-negative positions, float32",
            "rope_2d_cos_sin": "sam2 / llama4_vision: build_rotary_pos_embed([H, W], dim, temperature, "
            "in_pixels=False, grid_indexing='xy', grid_offset (+1 for llama4_vision)); float32",
        },
    )

    def __init__(self) -> None:
        try:
            import torch

            self.lib, self.imported = load_pos_embed_sincos()
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter timm needs timm (scripts/matrix/setup_timm.sh): {exc}"
            raise AdapterError(msg) from exc
        self.torch = torch

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "timm": version("timm"),
            "torch": self.torch.__version__,
            "import": self.imported,
        }

    # --- helpers ----------------------------------------------------------------------------------

    def _tensor(self, array: Any) -> Any:
        """A torch copy of ``array`` (the suite's inputs are read-only; ``rope`` passes on tensors)."""
        if isinstance(array, self.torch.Tensor):
            return array.clone()
        return self.torch.from_numpy(np.array(array))

    def _keep(self, table: Any, index: np.ndarray) -> Any:
        """``table[index]`` by ``apply_keep_indices_nlc`` (a batch of one row for a 1-D ``index``)."""
        keep = self._tensor(index.reshape(-1, index.shape[-1] if index.ndim else 1))
        batch = keep.new_empty((keep.shape[0], 0))  # only its leading size is read: the batch size
        rows = self.lib.apply_keep_indices_nlc(batch, table, keep)
        return rows.reshape(*index.shape, table.shape[-1])

    def _rotary_tables(self, positions: Any, inv_freq: Any, half: bool, dtype: str) -> tuple[Any, Any]:
        """``(sin, cos)`` rows of ``build_rotary_pos_embed`` at ``positions``, ``[*positions.shape, R]``."""
        bands = self._tensor(np.asarray(inv_freq, dtype=dtype).reshape(-1))
        low, span, index = _grid(positions, 2 * bands.numel())
        sin, cos = self.lib.build_rotary_pos_embed(
            [span],
            bands=bands,
            in_pixels=False,
            grid_offset=float(low),
            rotate_half=half,
            dtype=getattr(self.torch, dtype),
        )
        return self._keep(sin, index), self._keep(cos, index)

    # --- frequencies ------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        kind = scaling_kind(scaling)
        if kind != "default":
            msg = f"timm's freq_bands has no {kind!r} scaling"
            raise Unsupported(msg)
        return self.lib.freq_bands(dim, temperature=float(base), step=2), 1.0

    # --- tables and rotation ----------------------------------------------------------------------

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        half = _half(layout)
        _no_attention_factor(attention_factor)
        sin, cos = self._rotary_tables(positions, inv_freq, half, dtype)
        return cos, sin

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        half = _half(layout)
        _whole_width(x, np.shape(cos)[-1])
        return self.lib.apply_rot_embed(self._tensor(x), self._tensor(sin), self._tensor(cos), half=half)

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
        half = _half(layout)
        if head_layout != "bhsd":
            msg = f"timm's attention takes q, k as [B, H, N, D] (bhsd); got {head_layout!r}"
            raise Unsupported(msg)
        _no_attention_factor(attention_factor)
        torch = self.torch
        data = np.asarray(x)
        bands = self._tensor(np.asarray(inv_freq, dtype=data.dtype).reshape(-1))
        _whole_width(data, 2 * bands.numel())
        low, span, index = _grid(positions, 4 * bands.numel())
        sin, cos = self.lib.build_rotary_pos_embed(
            [span], bands=bands, in_pixels=False, grid_offset=float(low), rotate_half=half, dtype=bands.dtype
        )
        tensor = self._tensor(data)
        table = torch.cat([sin, cos], dim=-1)  # RotaryEmbeddingCat's [sin | cos] form
        rows = self.lib.apply_keep_indices_nlc(tensor, table, self._tensor(index)).unsqueeze(1)
        return self.lib.apply_rot_embed_cat(tensor, rows, half=half)

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
        half = _half(layout)
        ref = self._linear_factor(scaling)
        if dim % 2:
            msg = f"timm's 1-D table of RotaryEmbeddingCat(2 d) has d channels for even d only; got {dim}"
            raise Unsupported(msg)
        _whole_width(x, dim)
        low, span, index = _grid(positions, 2 * dim)
        feat = span if ref is None else ref * -(-span // ref)  # a grid that the factor divides
        module = self.lib.RotaryEmbeddingCat(
            2 * dim,
            temperature=float(base),
            in_pixels=False,
            grid_offset=float(low),
            rotate_half=half,
            ref_feat_shape=None if ref is None else [feat // ref],
        )
        table = module.get_embed([feat])
        return self.lib.apply_rot_embed_cat(self._tensor(x), self._keep(table, index), half=half)

    @staticmethod
    def _linear_factor(scaling: dict[str, Any] | None) -> int | None:
        """The integer factor of a ``linear`` scaling (timm's ref_feat_shape ratio), None for default."""
        kind = scaling_kind(scaling)
        if kind == "default":
            return None
        factor = (scaling or {}).get("factor")
        if kind != "linear" or not isinstance(factor, (int, float)):
            msg = f"timm's RotaryEmbeddingCat has no {kind!r} scaling (ref_feat_shape is linear)"
            raise Unsupported(msg)
        if factor < 1 or not float(factor).is_integer():
            msg = f"timm's ref_feat_shape is a grid size: the linear factor must be an integer; got {factor}"
            raise Unsupported(msg)
        return int(factor)

    # --- sinusoidal -------------------------------------------------------------------------------

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        if convention != "marian":
            msg = f"timm's 1-D sin-cos table is [sin | cos] of base**(-2k/dim) (marian); not {convention!r}"
            raise Unsupported(msg)
        unknown = sorted(set(options) - {"base"})
        if unknown:
            msg = f"build_fourier_pos_embed has no options {unknown}"
            raise Unsupported(msg)
        if dim <= 0 or dim % 2:
            msg = f"build_fourier_pos_embed's table has 2 num_bands columns; dim {dim} is not one"
            raise Unsupported(msg)
        low, span, index = _grid(positions, dim)
        sin, cos = self.lib.build_fourier_pos_embed(
            [span],
            num_bands=dim // 2,
            temperature=float(options.get("base", 10000.0)),
            in_pixels=False,
            grid_offset=float(low),
            dtype=getattr(self.torch, dtype),
        )
        table = self.torch.cat([sin, cos], dim=-1).reshape(span, dim)  # [span, 1, nb] each -> [sin | cos]
        return self._keep(table, index)

    # --- grid resize ------------------------------------------------------------------------------

    def _pos_embed(self) -> types.ModuleType:
        if not hasattr(self, "_pos_embed_module"):
            self._pos_embed_module = load_timm_layer("pos_embed")[0]
        return self._pos_embed_module

    @staticmethod
    def _interpolation(mode: str, align_corners: bool, scale_factor: Any) -> tuple[str, bool | None]:
        """timm's ``interpolation`` (F.interpolate's mode name) and ``align_corners`` for the call."""
        if scale_factor is not None:
            msg = "timm's resample functions take new_size only (no scale_factor)"
            raise Unsupported(msg)
        return ("bilinear" if mode == "linear" else mode), (None if mode == "nearest" else align_corners)

    def grid_resize(
        self,
        table: Any,
        size: Any,
        *,
        mode: str,
        align_corners: bool,
        scale_factor: Any,
        antialias: bool,
    ) -> Any:
        interpolation, _ = self._interpolation(mode, align_corners, scale_factor)
        table = np.asarray(table)
        if len(size) != 2 or table.ndim != 3 or align_corners:
            msg = "timm's resample_abs_pos_embed_nhwc takes one [n, m, D] grid, align_corners=False"
            raise Unsupported(msg)
        out = self._pos_embed().resample_abs_pos_embed_nhwc(
            self._tensor(table)[None], list(size), interpolation=interpolation, antialias=antialias
        )
        return out[0]

    def patch_grid_resize(
        self,
        table: Any,
        grid: Any,
        new_grid: Any,
        *,
        prefix_tokens: int,
        mode: str,
        align_corners: bool,
        scale_factor: Any,
        antialias: bool,
        skip_same_grid: bool,
    ) -> Any:
        interpolation, align = self._interpolation(mode, align_corners, scale_factor)
        table = np.asarray(table)
        if table.ndim not in (2, 3) or (table.ndim == 3 and table.shape[0] != 1):
            msg = "timm's pos_embed is [1, P + N, D]"
            raise Unsupported(msg)
        # timm returns early only for an unchanged grid (what skip_same_grid does): without the
        # early return a same-size call without scale_factor is the table itself as well
        out = self._pos_embed().resample_abs_pos_embed(
            self._tensor(table).reshape(1, *table.shape[-2:]),
            list(new_grid),
            old_size=list(grid),
            num_prefix_tokens=prefix_tokens,
            interpolation=interpolation,
            antialias=antialias,
            align_corners=align,
        )
        return out.reshape(*table.shape[:-2], *out.shape[-2:])

    # --- vision: 2-D sin-cos tables and 2-D RoPE ---------------------------------------------------

    def _grid_rows(self, table: Any, index: np.ndarray) -> Any:
        """Rows ``index`` of a ``[N, C]`` grid table, by ``apply_keep_indices_nlc`` (EVA's row pick)."""
        return self._keep(table, index.reshape(-1)).reshape(*index.shape, table.shape[-1])

    def sincos_2d(
        self,
        h_positions: Any,
        w_positions: Any,
        dim: int,
        *,
        temperature: float,
        convention: str,
        cls_token: bool,
        dtype: str,
    ) -> Any:
        if convention not in ("rt_detr", "omdet_turbo"):
            msg = (
                f"build_sincos2d_pos_embed has no {convention!r} layout: its rows follow the grid "
                "axes ([h | w] h-major, or with reverse_coord [w | h] w-major), never [w | h] h-major"
            )
            raise Unsupported(msg)
        if cls_token:
            msg = "build_sincos2d_pos_embed has no cls row"
            raise Unsupported(msg)
        h, w = np.asarray(h_positions), np.asarray(w_positions)
        if not (np.issubdtype(h.dtype, np.integer) and np.issubdtype(w.dtype, np.integer)):
            msg = "timm takes a grid shape; the positions arrays are the adapter's format"
            raise Unsupported(msg)
        if h.ndim != 1 or w.ndim != 1 or (h.size and h.min() < 0) or (w.size and w.min() < 0):
            msg = "build_sincos2d_pos_embed builds the grid arange(H) x arange(W) (no offset)"
            raise Unsupported(msg)
        rows, cols = int(h.max()) + 1 if h.size else 1, int(w.max()) + 1 if w.size else 1
        if rows * cols * max(int(dim), 1) > _MAX_TABLE:
            msg = f"build_sincos2d_pos_embed builds the whole {rows} x {cols} grid: too large"
            raise Unsupported(msg)
        reverse = convention == "omdet_turbo"  # stack W, H: w-major rows, [w | h]
        table = self.lib.build_sincos2d_pos_embed(
            [rows, cols],
            dim=dim,
            temperature=float(temperature),
            reverse_coord=reverse,
            interleave_sin_cos=True,  # per axis [sin | cos] (its default is [sin h | sin w | cos h | cos w])
            dtype=getattr(self.torch, dtype),
        )
        if reverse:  # the grid's row j rows + i is (h_i, w_j)
            index = w[:, None] * rows + h[None, :]
        else:
            index = h[:, None] * cols + w[None, :]
        return self._grid_rows(table, index.reshape(-1).astype(np.int64))

    def rope_2d_cos_sin(
        self, positions: Any, head_dim: int, *, base: float, convention: str, dtype: str
    ) -> tuple[Any, Any]:
        if convention == "dinov3":
            return self._dinov3(positions, head_dim, base, dtype)
        if convention not in ("sam2", "llama4_vision"):
            msg = {
                "pixtral": "timm's axial bands are the same on both axes (Pixtral: even and odd slots)",
                "gemma4_vision": "timm lays its axes out as one [y | x] block (Gemma 4: a half per axis)",
                "kimi_k25": "timm keeps each axis in its own block (Kimi-K2.5: x, y slots side by side)",
            }.get(convention, f"timm has no {convention!r} 2-D RoPE")
            raise Unsupported(msg)
        pos = np.asarray(positions)
        if pos.ndim < 2 or pos.shape[0] != 2:
            msg = "timm builds its 2-D RoPE over a grid shape; positions must be [2, ..., L]"
            raise Unsupported(msg)
        if not np.issubdtype(pos.dtype, np.integer):
            if not np.all(np.isfinite(pos)) or not np.all(pos == np.round(pos)):
                msg = "build_rotary_pos_embed takes an index grid: integer positions only"
                raise Unsupported(msg)
            pos = pos.astype(np.int64)  # floats holding patch indices: the same indices
        low = int(pos.min()) if pos.size else 0
        rows, cols = int(pos[0].max()) - low + 1, int(pos[1].max()) - low + 1
        if rows * cols * 2 * max(int(head_dim), 1) > _MAX_TABLE:
            msg = f"timm builds the whole {rows} x {cols} grid: positions too far apart"
            raise Unsupported(msg)
        # grid_indexing='xy': channels [x | y] over the (H, W) grid, each band on one interleaved pair;
        # Llama 4's idx + 1 is timm's grid_offset
        sin, cos = self.lib.build_rotary_pos_embed(
            [rows, cols],
            dim=head_dim,
            temperature=float(base),
            in_pixels=False,
            grid_offset=float(low + (convention == "llama4_vision")),
            grid_indexing="xy",
            rotate_half=False,
            dtype=getattr(self.torch, dtype),
        )
        index = (pos[0] - low) * cols + (pos[1] - low)  # row i W + j of the grid holds (y, x)
        return self._grid_rows(cos, index), self._grid_rows(sin, index)

    def _dinov3(self, positions: Any, head_dim: int, base: float, dtype: str) -> tuple[Any, Any]:
        """``RotaryEmbeddingDinoV3`` builds its own patch-centre grid from a shape (``get_embed``);
        its public API takes no coordinates, and its coordinate step is private."""
        msg = (
            "RotaryEmbeddingDinoV3 takes a grid shape, not coordinates (its coordinate step, "
            "_get_pos_embed_from_coords, is private)"
        )
        raise Unsupported(msg)


class TimmMixedAdapter(TimmAdapter):
    """timm's RoPE-Mixed path: ``get_mixed_freqs`` on coordinate vectors, ``apply_rot_embed_cat``."""

    name = "timm:mixed"
    capabilities = Capabilities(
        functions=("rope_cos_sin", "apply_rope", "rope", "rope_heads"),
        dtypes=("float32",),  # get_mixed_freqs computes in float32 (.float()) whatever its inputs
        phase="product",  # float32(t_x) * float32(freqs), then sin / cos in float32
        layouts=("interleaved",),  # get_mixed_freqs expands each frequency to its pair (2i, 2i+1)
        head_layouts=("bhsd",),
        notes={
            "rope_cos_sin": "get_mixed_freqs(stack([inv_freq, 0]), t_x=positions, t_y=0): "
            "RotaryEmbeddingMixed's angles t_x fx + t_y fy on the x axis; any positions",
            "apply_rope": "apply_rot_embed_cat(x, [sin | cos]); interleaved, whole last axis only",
            "rope": "rope_cos_sin then apply_rope; no attention factor, no partial rotary",
            "rope_heads": "get_mixed_freqs on t_x [B, S], unsqueeze(1), apply_rot_embed_cat (bhsd)",
        },
    )

    def _mixed(self, positions: Any, inv_freq: Any) -> Any:
        """``get_mixed_freqs`` at x coordinates ``positions`` (y = 0, y frequencies 0): ``[..., 4 F]``."""
        pos = np.asarray(positions)
        if not np.issubdtype(pos.dtype, np.integer):
            msg = "timm's coordinates are real-valued: it has nothing that rejects a float position"
            raise Unsupported(msg)
        torch = self.torch
        fx = self._tensor(np.asarray(inv_freq, dtype=np.float32).reshape(-1))
        freqs = torch.stack([fx, torch.zeros_like(fx)])  # (2, F): frequencies of the x and y axes
        t_x = self._tensor(pos)  # get_mixed_freqs casts the coordinates with .float()
        return self.lib.get_mixed_freqs(freqs, t_x, torch.zeros_like(t_x), dtype=torch.float32)

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        check_layout(layout, ("interleaved",), "timm's get_mixed_freqs")
        _no_attention_factor(attention_factor)
        sin, cos = self._mixed(positions, inv_freq).chunk(2, dim=-1)  # its [sin | cos]
        return cos, sin

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        check_layout(layout, ("interleaved",), "timm's RoPE-Mixed")
        _whole_width(x, np.shape(cos)[-1])
        emb = self.torch.cat([self._tensor(sin), self._tensor(cos)], dim=-1)  # the form it consumes
        return self.lib.apply_rot_embed_cat(self._tensor(x), emb)

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
        check_layout(layout, ("interleaved",), "timm's get_mixed_freqs")
        if head_layout != "bhsd":
            msg = f"timm's attention takes q, k as [B, H, N, D] (bhsd); got {head_layout!r}"
            raise Unsupported(msg)
        _no_attention_factor(attention_factor)
        _whole_width(x, 2 * np.size(inv_freq))
        rows = self._mixed(positions, inv_freq).unsqueeze(1)  # [B, S, 2 D] -> [B, 1, S, 2 D]
        return self.lib.apply_rot_embed_cat(self._tensor(x), rows)


#: The variants of this built-in adapter (``posenc-ref check timm``, ``timm:mixed``).
ADAPTERS: dict[str, type[Adapter]] = {"default": TimmAdapter, "mixed": TimmMixedAdapter}
