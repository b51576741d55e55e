"""Built-in adapter: posenc_ref itself, on any of its backends.

``posenc_ref`` (NumPy), ``posenc_ref:array_api_strict``, ``posenc_ref:mlx``,
``posenc_ref:torch``, ``posenc_ref:jax.numpy`` (float64 enabled),
``posenc_ref:jax.numpy:x32`` (float32 only), ``posenc_ref:dask.array`` and
``posenc_ref:cupy``: the ids of :data:`posenc_ref.backends.BACKENDS`, whose
aliases work too (``posenc_ref:jax``, ``posenc_ref:dask``).  Inputs are moved
to the backend with ``xp.asarray``; outputs stay there (the runner reads them
back).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Adapter, Capabilities, Unsupported

__all__ = ["PosencRefAdapter"]


class PosencRefAdapter(Adapter):
    """posenc_ref on one array backend."""

    def __init__(self, backend: str = "numpy", *, xp: Any = None) -> None:
        import posenc_ref
        from posenc_ref import _compat, backends

        self.pr = posenc_ref
        self.backend = backend = backends.resolve(backend).id  # an alias ("jax") names its backend
        self.xp = xp if xp is not None else backends.namespace(backend)
        self.name = "posenc_ref" if backend == "numpy" else f"posenc_ref:{backend}"
        self._f64 = _compat.has_float64(self.xp)
        self._int = _compat.index_dtype(self.xp)
        dtypes = ("float64", "float32") if self._f64 else ("float32",)
        # Dask arrays are lazy: posenc_ref skips checks that would read their values.
        self.capabilities = Capabilities(
            dtypes=dtypes, phase="exact", data_dependent_errors=backend != "dask.array"
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "posenc_ref": self.pr.__version__, "backend": self.backend}

    # --- conversions ---------------------------------------------------------------------------------

    def _dtype(self, name: str) -> Any:
        return {"float64": self.xp.float64, "float32": self.xp.float32}[name]

    def _ints(self, a: Any) -> Any:
        a = np.asarray(a)
        if not np.issubdtype(a.dtype, np.integer):
            return self._floats(a)  # invalid-input cases pass float positions on purpose
        info = np.iinfo(np.int32)
        if (
            self._int == getattr(self.xp, "int32", None)
            and a.size
            and (a.min() < info.min or a.max() > info.max)
        ):
            msg = f"{self.name} holds positions as int32; this case needs values up to {int(np.abs(a).max())}"
            raise Unsupported(msg)
        return self.xp.asarray(a, dtype=self._int)

    def _floats(self, a: Any) -> Any:
        a = np.asarray(a)
        if a.dtype == np.float64 and not self._f64:
            msg = f"{self.name} has no float64"
            raise Unsupported(msg)
        if a.dtype not in (np.float64, np.float32):
            return self.xp.asarray(a)
        return self.xp.asarray(a, dtype=self._dtype(str(a.dtype)))  # MLX would make float64 data float32

    def _mask(self, a: Any) -> Any:
        """A padding mask as given: boolean or integer (a float mask is an invalid-input case's)."""
        a = np.asarray(a)
        return self._bools(a) if a.dtype == np.bool_ else self._ints(a)

    def _bools(self, a: Any) -> Any:
        bool_dtype = getattr(self.xp, "bool", None) or getattr(self.xp, "bool_", None)  # MLX spells it bool_
        return self.xp.asarray(np.asarray(a, dtype=np.bool_), dtype=bool_dtype)

    # --- absolute --------------------------------------------------------------------------------------

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        return self.pr.sinusoidal(
            self._ints(positions), dim, convention=convention, dtype=self._dtype(dtype), **options
        )

    def learned(self, table: Any, positions: Any, *, offset: str, padding_idx: int | None) -> Any:
        return self.pr.learned(
            self._floats(table), self._ints(positions), offset=offset, padding_idx=padding_idx
        )

    def interpolate_table(self, table: Any, new_length: int) -> Any:
        return self.pr.interpolate_table(self._floats(table), new_length)

    def token_positions(self, mask: Any, *, cache_length: int) -> Any:
        return self.pr.token_positions(self._mask(mask), cache_length=cache_length)

    # --- RoPE ------------------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: Any, seq_len: int | None, dtype: str
    ) -> Any:
        freqs = self.pr.rope_frequencies(
            dim, base=base, scaling=scaling, seq_len=seq_len, compute_dtype=self._dtype(dtype), xp=self.xp
        )
        return freqs.inv_freq, freqs.attention_factor

    def _freqs(self, inv_freq: Any, attention_factor: float) -> Any:
        # the values are taken as exact float64 numbers; the library derives the exact turns itself
        dtype = self.xp.float64 if self._f64 else self.xp.float32
        values = np.asarray(inv_freq, dtype=np.float64).tolist()
        return self.pr.RopeFrequencies.from_inv_freq(
            values, float(attention_factor), compute_dtype=dtype, xp=self.xp
        )

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> Any:
        freqs = self._freqs(inv_freq, attention_factor)
        return self.pr.rope_cos_sin(self._ints(positions), freqs, layout=layout, dtype=self._dtype(dtype))

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        return self.pr.apply_rope(self._floats(x), self._floats(cos), self._floats(sin), layout=layout)

    def _rotate(self, x: Any, positions: Any, freqs: Any, layout: str, head_axis: int | None = None) -> Any:
        """``apply_rope(x, *rope_cos_sin(positions, freqs))``, the tables given a head axis if asked."""
        x = self._floats(x)
        cos, sin = self.pr.rope_cos_sin(self._ints(positions), freqs, layout=layout, dtype=x.dtype)
        if head_axis is not None:
            cos, sin = self.xp.expand_dims(cos, axis=head_axis), self.xp.expand_dims(sin, axis=head_axis)
        return self.pr.apply_rope(x, cos, sin, layout=layout)

    def rope_heads(
        self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, head_layout: str
    ) -> Any:
        """Glue: cos/sin of ``positions`` get a head axis where ``head_layout`` puts the heads."""
        axes = {"bhsd": 1, "bshd": 2, "thd": 1}  # [B, 1, S, R], [B, S, 1, R], [T, 1, R]
        if head_layout not in axes:
            msg = f"head_layout must be one of {sorted(axes)}; got {head_layout!r}"
            raise ValueError(msg)
        return self._rotate(x, positions, self._freqs(inv_freq, attention_factor), layout, axes[head_layout])

    def rope_from_base(
        self,
        x: Any,
        positions: Any,
        *,
        dim: int,
        base: float,
        scaling: Any,
        seq_len: int | None,
        layout: str,
    ) -> Any:
        width = np.shape(x)[-1]
        if isinstance(dim, int) and dim > width:  # the canonical call's own contract (dim of x's channels)
            msg = f"dim must be <= x.shape[-1] = {width}; got {dim}"
            raise ValueError(msg)
        freqs = self.pr.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, xp=self.xp)
        return self._rotate(x, positions, freqs, layout)

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
    ) -> Any:
        return self.pr.xpos_scale(
            self._ints(positions),
            dim,
            scale_base=scale_base,
            gamma=gamma,
            offset=offset,
            layout=layout,
            dtype=self._dtype(dtype),
        )

    def mrope_position_ids(self, segments: Any, *, time_interval: float) -> Any:
        blocks = [tuple(s) if isinstance(s, list) else s for s in segments]  # JSON lists -> (t, h, w)
        return self.pr.mrope_position_ids(blocks, time_interval=time_interval, xp=self.xp)

    def vision_position_ids(self, grid_t: int, grid_h: int, grid_w: int, *, merge_size: int) -> Any:
        return self.pr.vision_position_ids(grid_t, grid_h, grid_w, merge_size=merge_size, xp=self.xp)

    def mrope_angles(
        self, position_ids: Any, inv_freq: Any, *, mrope_section: Any, section_order: str, dtype: str
    ) -> Any:
        freqs = self._freqs(inv_freq, 1.0).inv_freq  # float64 where the backend has it
        angles = self.pr.mrope_angles(
            self._ints(position_ids), freqs, mrope_section, section_order=section_order
        )
        return self.xp.astype(angles, self._dtype(dtype))

    def rope_2d_cos_sin(
        self, positions: Any, head_dim: int, *, base: float, convention: str, dtype: str
    ) -> tuple[Any, Any]:
        grid = np.asarray(positions)
        if convention != "dinov3" and grid.size and np.array_equal(grid, np.round(grid)):
            grid = self._ints(grid.astype(np.int64))  # patch indices: the integer path
        else:
            grid = self._floats(grid)
        return self.pr.rope_2d_cos_sin(
            grid, head_dim, base=base, convention=convention, dtype=self._dtype(dtype)
        )

    # --- relative / bias -------------------------------------------------------------------------------

    def t5_bucket(self, relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
        return self.pr.t5_bucket(
            self._ints(relative),
            bidirectional=bidirectional,
            num_buckets=num_buckets,
            max_distance=max_distance,
        )

    def deberta_bucket(
        self, relative: Any, *, position_buckets: int, max_relative_positions: int, arithmetic: str
    ) -> Any:
        return self.pr.deberta_bucket(
            self._ints(relative),
            position_buckets=position_buckets,
            max_relative_positions=max_relative_positions,
            arithmetic=arithmetic,
        )

    def deberta_relative_index(
        self,
        q_positions: Any,
        k_positions: Any,
        *,
        position_buckets: int,
        max_relative_positions: int,
        term: str,
        arithmetic: str,
    ) -> Any:
        return self.pr.deberta_relative_index(
            self._ints(q_positions),
            self._ints(k_positions),
            position_buckets=position_buckets,
            max_relative_positions=max_relative_positions,
            term=term,
            arithmetic=arithmetic,
        )

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        return self.pr.alibi_slopes(num_heads, max_bias=max_bias, xp=self.xp, dtype=self._dtype(dtype))

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        return self.pr.alibi_bias(
            self._ints(q_positions), self._ints(k_positions), self._floats(slopes), form=form
        )

    def alibi_bias_from_heads(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
    ) -> Any:
        slopes = self.pr.alibi_slopes(num_heads, max_bias=max_bias, xp=self.xp, dtype=self._dtype(dtype))
        return self.pr.alibi_bias(self._ints(q_positions), self._ints(k_positions), slopes, form=form)

    def alibi_bias_from_mask(self, mask: Any, *, num_heads: int, max_bias: float, dtype: str) -> Any:
        # BLOOM's key index (cumsum(mask) - 1) * mask is token_positions (-1 at padding) with padding at 0.
        positions = self.pr.token_positions(self._mask(mask))
        keys = self.xp.where(positions < 0, self.xp.zeros_like(positions), positions)
        slopes = self.pr.alibi_slopes(num_heads, max_bias=max_bias, xp=self.xp, dtype=self._dtype(dtype))
        return self.pr.alibi_bias(keys[..., :1], keys, slopes, form="causal")  # [..., H, 1, L]

    def t5_bias(
        self, q_positions: Any, k_positions: Any, table: Any, *, bidirectional: bool, max_distance: int
    ) -> Any:
        return self.pr.t5_bias(
            self._ints(q_positions),
            self._ints(k_positions),
            self._floats(table),
            bidirectional=bidirectional,
            max_distance=max_distance,
        )

    def t5_layout_bias(
        self,
        positions: Any,
        bbox: Any,
        table: Any,
        x_table: Any,
        y_table: Any,
        *,
        max_rel_pos: int,
        max_rel_2d_pos: int,
        head_dim: int | None,
    ) -> Any:
        return self.pr.t5_layout_bias(
            self._ints(positions),
            self._ints(bbox),
            *(self._floats(t) for t in (table, x_table, y_table)),
            max_rel_pos=max_rel_pos,
            max_rel_2d_pos=max_rel_2d_pos,
            head_dim=head_dim,
        )

    def t5_udop_bias(
        self,
        bbox: Any,
        table: Any,
        x_table: Any,
        y_table: Any,
        *,
        max_distance: int,
        max_distance_2d: int,
        scaling_factor: float,
        prefix_buckets: bool,
    ) -> Any:
        return self.pr.t5_udop_bias(
            *(self._floats(t) for t in (bbox, table, x_table, y_table)),
            max_distance=max_distance,
            max_distance_2d=max_distance_2d,
            scaling_factor=scaling_factor,
            prefix_buckets=prefix_buckets,
        )

    def t5_gated_bias(
        self, hidden: Any, table: Any, gate_weight: Any, gate_bias: Any, gate_const: Any, *, max_distance: int
    ) -> Any:
        arrays = (hidden, table, gate_weight, gate_bias, gate_const)
        return self.pr.t5_gated_bias(*(self._floats(a) for a in arrays), max_distance=max_distance)

    def t5_stream_buckets(self, positions: Any, *, num_buckets: int, max_distance: int) -> tuple[Any, Any]:
        return self.pr.t5_stream_buckets(
            self._ints(positions), num_buckets=num_buckets, max_distance=max_distance
        )

    def t5_segment_bias(
        self,
        q_positions: Any,
        k_positions: Any,
        q_segments: Any,
        k_segments: Any,
        table: Any,
        *,
        num_segments: int,
        max_distance: int,
    ) -> Any:
        ints = (self._ints(a) for a in (q_positions, k_positions, q_segments, k_segments))
        return self.pr.t5_segment_bias(
            *ints, self._floats(table), num_segments=num_segments, max_distance=max_distance
        )

    def relative_positions(self, q_positions: Any, k_positions: Any) -> Any:
        return self.pr.relative_positions(self._ints(q_positions), self._ints(k_positions))

    def shaw_index(self, relative: Any, *, max_distance: Any, convention: str) -> Any:
        limit = tuple(max_distance) if isinstance(max_distance, list) else max_distance
        return self.pr.shaw_index(self._ints(relative), limit, convention=convention)

    def shaw_table_rows(self, max_distance: Any, *, convention: str) -> Any:
        limit = tuple(max_distance) if isinstance(max_distance, list) else max_distance
        return self.pr.shaw_table_rows(limit, convention=convention)

    def shaw_logits(self, q: Any, index: Any, table: Any, *, k: Any) -> Any:
        key = None if k is None else self._floats(k)
        return self.pr.shaw_logits(self._floats(q), self._ints(index), self._floats(table), k=key)

    def shaw_values(self, weights: Any, index: Any, table: Any) -> Any:
        return self.pr.shaw_values(self._floats(weights), self._ints(index), self._floats(table))

    def sandwich_bias(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, dim: int, base: float, dtype: str
    ) -> Any:
        return self.pr.sandwich_bias(
            self._ints(q_positions),
            self._ints(k_positions),
            num_heads=num_heads,
            dim=dim,
            base=base,
            dtype=self._dtype(dtype),
        )

    def kerple_bias(self, q_positions: Any, k_positions: Any, r1: Any, r2: Any, *, kind: str) -> Any:
        return self.pr.kerple_bias(
            self._ints(q_positions), self._ints(k_positions), self._floats(r1), self._floats(r2), kind=kind
        )

    def window_bias(self, table: Any, window_size: list[int], *, cls_token: bool) -> Any:
        return self.pr.window_bias(self._floats(table), tuple(window_size), cls_token=cls_token)

    def swinv2_log_coords(
        self, window_size: list[int], *, pretrained_window_size: list[int], dtype: str
    ) -> Any:
        pretrained = tuple(pretrained_window_size) if pretrained_window_size else None
        return self.pr.swinv2_log_coords(
            tuple(window_size), pretrained_window_size=pretrained, dtype=self._dtype(dtype), xp=self.xp
        )

    def decomposed_rel_pos(
        self, query: Any, rel_pos_h: Any, rel_pos_w: Any, *, k_size: list[int], coords: str
    ) -> Any:
        return self.pr.decomposed_rel_pos(
            self._floats(query),
            self._floats(rel_pos_h),
            self._floats(rel_pos_w),
            k_size=tuple(k_size),
            coords=coords,
        )

    # --- Transformer-XL relative attention ------------------------------------------------------------

    def rel_sinusoid_positions(
        self, qlen: int, *, klen: int | None, convention: str, clamp_len: int | None, bi_data: bool
    ) -> Any:
        return self.pr.rel_sinusoid_positions(
            qlen, klen, convention=convention, clamp_len=clamp_len, bi_data=bi_data, xp=self.xp
        )

    def rel_sinusoid_table(
        self,
        qlen: int,
        dim: int,
        *,
        klen: int | None,
        convention: str,
        clamp_len: int | None,
        bi_data: bool,
        dtype: str,
    ) -> Any:
        return self.pr.rel_sinusoid_table(
            qlen,
            dim,
            klen=klen,
            convention=convention,
            clamp_len=clamp_len,
            bi_data=bi_data,
            dtype=self._dtype(dtype),
            xp=self.xp,
        )

    def rel_shift(self, x: Any, *, klen: int | None, convention: str, shift: int) -> Any:
        return self.pr.rel_shift(self._floats(x), klen=klen, convention=convention, shift=shift)

    def rel_attention_scores(
        self,
        q: Any,
        k: Any,
        r: Any,
        *,
        u: Any,
        v: Any,
        convention: str,
        shift: int,
        scale: float | None,
    ) -> Any:
        return self.pr.rel_attention_scores(
            self._floats(q),
            self._floats(k),
            self._floats(r),
            u=None if u is None else self._floats(u),
            v=None if v is None else self._floats(v),
            convention=convention,
            shift=shift,
            scale=scale,
        )

    # --- grid resize -----------------------------------------------------------------------------------

    @staticmethod
    def _factors(scale_factor: Any) -> tuple[float, ...] | None:
        return None if scale_factor is None else tuple(float(f) for f in np.asarray(scale_factor).reshape(-1))

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
        return self.pr.grid_resize(
            self._floats(table),
            list(size),
            mode=mode,
            align_corners=align_corners,
            scale_factor=self._factors(scale_factor),
            antialias=antialias,
        )

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
        return self.pr.patch_grid_resize(
            self._floats(table),
            list(grid),
            list(new_grid),
            prefix_tokens=prefix_tokens,
            mode=mode,
            align_corners=align_corners,
            scale_factor=self._factors(scale_factor),
            antialias=antialias,
            skip_same_grid=skip_same_grid,
        )

    # --- vision sine -----------------------------------------------------------------------------------

    def detr_sine_2d(self, mask: Any, num_position_features: int, *, dtype: str, **options: Any) -> Any:
        return self.pr.detr_sine_2d(
            self._mask(mask), num_position_features, dtype=self._dtype(dtype), **options
        )

    def detr_coord_sine(self, coords: Any, num_pos_feats: int, **options: Any) -> Any:
        return self.pr.detr_coord_sine(self._floats(coords), num_pos_feats, **options)

    def sincos_2d(self, h_positions: Any, w_positions: Any, dim: int, *, dtype: str, **options: Any) -> Any:
        return self.pr.sincos_2d(
            self._ints(h_positions), self._ints(w_positions), dim, dtype=self._dtype(dtype), **options
        )

    # --- vision features (SAM Fourier features, NaViT buckets, factorised 2-D tables) ---------------------

    def fourier_features(self, coords: Any, gaussian: Any, *, input_shape: Any, offset: float) -> Any:
        return self.pr.fourier_features(
            self._floats(coords), self._floats(gaussian), input_shape=tuple(input_shape), offset=offset
        )

    def fourier_grid(self, gaussian: Any, *, height: int, width: int) -> Any:
        return self.pr.fourier_grid(self._floats(gaussian), height=height, width=width)

    def navit_position_ids(
        self, patch_attention_mask: Any, *, num_patches_per_side: int, arithmetic: str
    ) -> Any:
        mask = np.asarray(patch_attention_mask)
        mask = self._floats(mask) if mask.dtype.kind == "f" else self._bools(mask)  # float: an invalid case
        return self.pr.navit_position_ids(
            mask, num_patches_per_side=num_patches_per_side, arithmetic=arithmetic
        )

    def bbox_embedding(
        self,
        x_table: Any,
        y_table: Any,
        h_table: Any,
        w_table: Any,
        bbox: Any,
        *,
        combine: str,
        clip_shape: bool,
    ) -> Any:
        tables = [self._floats(t) for t in (x_table, y_table, h_table, w_table)]
        return self.pr.bbox_embedding(*tables, self._ints(bbox), combine=combine, clip_shape=clip_shape)

    def row_col_embedding(self, row_table: Any, col_table: Any, rows: Any, cols: Any, *, combine: str) -> Any:
        return self.pr.row_col_embedding(
            self._floats(row_table),
            self._floats(col_table),
            self._ints(rows),
            self._ints(cols),
            combine=combine,
        )

    def causal_mask(self, q_positions: Any, k_positions: Any, *, sliding_window: Any, chunk_size: Any) -> Any:
        return self.pr.causal_mask(
            self._ints(q_positions),
            self._ints(k_positions),
            sliding_window=sliding_window,
            chunk_size=chunk_size,
        )

    def llama4_attn_scale(
        self, positions: Any, *, floor_scale: float, attn_scale: float, convention: str, dtype: str
    ) -> Any:
        return self.pr.llama4_attn_scale(
            self._ints(positions),
            floor_scale=floor_scale,
            attn_scale=attn_scale,
            convention=convention,
            dtype=self._dtype(dtype),
        )

    def attention(self, q: Any, k: Any, v: Any, *, bias: Any, mask: Any, scale: float | None) -> Any:
        return self.pr.attention(
            self._floats(q),
            self._floats(k),
            self._floats(v),
            bias=None if bias is None else self._floats(bias),
            mask=None if mask is None else self._bools(mask),
            scale=scale,
        )
