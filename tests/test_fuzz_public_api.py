"""Hostile arguments to every public function: only ValueError/TypeError escape, naming a parameter.

Each public function (every function in ``posenc_ref.__all__``, plus the two
constructors of ``RopeFrequencies`` and ``RopeConfig``) has a valid call; the
fuzz replaces one or two of its arguments with hostile values (wrong types,
None, NaN/inf, negative/zero/huge integers, unsigned and narrow integer arrays,
64-bit arrays beyond ``2**62``, wrong shapes and dtypes, dtype names as
strings, sets, nested dicts, modules, arrays of another library) and checks
that the call either succeeds or raises ``ValueError``/``TypeError`` whose
message starts with ``<parameter> must be``.  Hypothesis runs with a fixed
seed (``derandomize``) and a fixed budget per function, without a database.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import array_api_strict
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posenc_ref as pr
from posenc_ref import _compat
from tests.helpers import floats, ints

#: Random pairs per function and backend (plus the exhaustive single-argument sweep): the file runs in
#: about 15 s on numpy + array_api_strict.
EXAMPLES = 40

_NAME = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*)")


def _templates(xp: Any) -> dict[str, tuple[Callable[..., Any], dict[str, Any]]]:
    """A valid call of every public function: (callable, arguments by parameter name)."""
    pos, keys = ints(xp, [0, 1, 2]), ints(xp, [0, 1, 2, 3])
    freqs = pr.rope_frequencies(8, xp=xp)
    cos, sin = pr.rope_cos_sin(ints(xp, [0, 1]), freqs)
    index = ints(xp, [[0, 1, 2, 4], [4, 3, 2, 1], [0, 0, 1, 1]])
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    hf = {
        "hidden_size": 64,
        "num_attention_heads": 4,
        "rope_theta": 500000.0,
        "max_position_embeddings": 1024,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
        },
    }
    slopes = pr.alibi_slopes(2, xp=xp)
    return {
        "sinusoidal": (
            pr.sinusoidal,
            {"positions": pos, "dim": 8, "convention": "vaswani", "dtype": None, "base": 10000.0},
        ),
        "learned": (
            pr.learned,
            {"table": floats(xp, np.ones((4, 3))), "positions": pos, "offset": "plain", "padding_idx": None},
        ),
        "interpolate_table": (pr.interpolate_table, {"table": floats(xp, np.ones((4, 3))), "new_length": 6}),
        "token_positions": (pr.token_positions, {"mask": pos != 1, "cache_length": 0}),
        "rope_frequencies": (
            pr.rope_frequencies,
            {"dim": 8, "base": 10000.0, "scaling": yarn, "seq_len": None, "compute_dtype": None, "xp": xp},
        ),
        "rope_cos_sin": (
            pr.rope_cos_sin,
            {"positions": pos, "freqs": freqs, "layout": "half", "dtype": None, "compute_dtype": None},
        ),
        "apply_rope": (
            pr.apply_rope,
            {"x": floats(xp, np.ones((2, 8))), "cos": cos, "sin": sin, "layout": "half"},
        ),
        "xpos_scale": (
            pr.xpos_scale,
            {"positions": pos, "dim": 8, "scale_base": 512.0, "gamma": 0.4, "offset": 0, "layout": "half"},
        ),
        "rope_config_from_hf": (pr.rope_config_from_hf, {"config": hf, "layer_type": None}),
        "relative_positions": (pr.relative_positions, {"q_positions": pos, "k_positions": keys}),
        "shaw_index": (
            pr.shaw_index,
            {"relative": pr.relative_positions(pos, keys), "max_distance": 2, "convention": "tensor2tensor"},
        ),
        "shaw_table_rows": (pr.shaw_table_rows, {"max_distance": 2, "convention": "tensor2tensor"}),
        "shaw_logits": (
            pr.shaw_logits,
            {
                "q": floats(xp, np.ones((3, 2))),
                "index": index,
                "table": floats(xp, np.ones((5, 2))),
                "k": floats(xp, np.ones((4, 2))),
            },
        ),
        "shaw_values": (
            pr.shaw_values,
            {"weights": floats(xp, np.ones((3, 4))), "index": index, "table": floats(xp, np.ones((5, 2)))},
        ),
        "t5_bucket": (
            pr.t5_bucket,
            {
                "relative": pr.relative_positions(pos, keys),
                "bidirectional": True,
                "num_buckets": 32,
                "max_distance": 128,
            },
        ),
        "deberta_bucket": (
            pr.deberta_bucket,
            {
                "relative": pr.relative_positions(pos, keys),
                "position_buckets": 8,
                "max_relative_positions": 16,
                "arithmetic": "exact",
            },
        ),
        "deberta_relative_index": (
            pr.deberta_relative_index,
            {
                "q_positions": pos,
                "k_positions": keys,
                "position_buckets": 8,
                "max_relative_positions": 16,
                "term": "c2p",
                "arithmetic": "exact",
            },
        ),
        "t5_bucket_thresholds": (
            pr.t5_bucket_thresholds,
            {"bidirectional": True, "num_buckets": 32, "max_distance": 128},
        ),
        "t5_bias": (
            pr.t5_bias,
            {
                "q_positions": pos,
                "k_positions": keys,
                "table": floats(xp, np.ones((32, 2))),
                "bidirectional": True,
                "max_distance": 128,
            },
        ),
        "alibi_slopes": (
            pr.alibi_slopes,
            {"num_heads": 4, "max_bias": 8.0, "xp": xp, "device": None, "dtype": None},
        ),
        "alibi_bias": (
            pr.alibi_bias,
            {"q_positions": pos, "k_positions": keys, "slopes": slopes, "form": "causal"},
        ),
        "attention": (
            pr.attention,
            {
                "q": floats(xp, np.ones((2, 3, 4))),
                "k": floats(xp, np.ones((2, 5, 4))),
                "v": floats(xp, np.ones((2, 5, 2))),
                "bias": floats(xp, np.zeros((3, 5))),
                "mask": ints(xp, np.tril(np.ones((3, 5), dtype=np.int64))) == 1,
                "scale": None,
                "return_weights": False,
            },
        ),
        "kerple_bias": (
            pr.kerple_bias,
            {
                "q_positions": pos,
                "k_positions": keys,
                "r1": floats(xp, [0.5, 1.0]),
                "r2": floats(xp, [0.3, 0.9]),
                "kind": "log",
            },
        ),
        "sandwich_bias": (
            pr.sandwich_bias,
            {
                "q_positions": pos,
                "k_positions": keys,
                "num_heads": 2,
                "dim": 8,
                "base": 10000.0,
                "dtype": None,
            },
        ),
        "window_bias": (
            pr.window_bias,
            {"table": floats(xp, np.ones((15 + 3, 2))), "window_size": (2, 3), "cls_token": True},
        ),
        "swinv2_log_coords": (
            pr.swinv2_log_coords,
            {"window_size": (3, 4), "pretrained_window_size": None, "dtype": None, "xp": xp, "device": None},
        ),
        "decomposed_rel_pos": (
            pr.decomposed_rel_pos,
            {
                "query": floats(xp, np.ones((1, 2, 3, 4))),
                "rel_pos_h": floats(xp, np.ones((5, 4))),
                "rel_pos_w": floats(xp, np.ones((5, 4))),
                "k_size": (3, 2),
                "coords": "float32",
            },
        ),
        "grid_resize": (
            pr.grid_resize,
            {
                "table": floats(xp, np.arange(24.0).reshape(3, 4, 2) / 8),
                "size": (5, 2),
                "mode": "bicubic",
                "align_corners": False,
                "scale_factor": None,
                "antialias": False,
            },
        ),
        "patch_grid_resize": (
            pr.patch_grid_resize,
            {
                "table": floats(xp, np.arange(20.0).reshape(1, 10, 2) / 8),
                "grid": (3, 3),
                "new_grid": (4, 2),
                "prefix_tokens": 1,
                "mode": "bicubic",
                "align_corners": False,
                "scale_factor": (1.5, 0.75),
                "antialias": False,
                "skip_same_grid": False,
            },
        ),
        "detr_sine_2d": (
            pr.detr_sine_2d,
            {
                "mask": ints(xp, [[[1, 1, 0], [1, 1, 0]]]) == 1,
                "num_position_features": 4,
                "temperature": 10000.0,
                "temperature_height": None,
                "temperature_width": 20.0,
                "normalize": True,
                "scale": 2 * math.pi,
                "convention": "detr",
                "dtype": None,
            },
        ),
        "detr_coord_sine": (
            pr.detr_coord_sine,
            {
                "coords": floats(xp, [[0.25, 0.5, 0.125, 0.75]]),
                "num_pos_feats": 4,
                "temperature": 10000.0,
                "scale": 2 * math.pi,
                "convention": "conditional_detr",
            },
        ),
        "sincos_2d": (
            pr.sincos_2d,
            {
                "h_positions": pos,
                "w_positions": keys,
                "dim": 8,
                "temperature": 10000.0,
                "convention": "rt_detr",
                "cls_token": True,
                "dtype": None,
            },
        ),
        "fourier_features": (
            pr.fourier_features,
            {
                "coords": floats(xp, [[1.0, 2.0], [3.5, 0.5]]),
                "gaussian": floats(xp, [[1.0, 0.5], [0.25, -2.0]]),
                "input_shape": (8, 8),
                "offset": 0.5,
            },
        ),
        "fourier_grid": (
            pr.fourier_grid,
            {"gaussian": floats(xp, [[1.0, 0.5], [0.25, -2.0]]), "height": 3, "width": 2},
        ),
        "navit_position_ids": (
            pr.navit_position_ids,
            {
                "patch_attention_mask": ints(xp, np.ones((2, 3, 4), dtype=np.int64)) == 1,
                "num_patches_per_side": 5,
                "arithmetic": "float32",
            },
        ),
        "bbox_embedding": (
            pr.bbox_embedding,
            {
                "x_table": floats(xp, np.ones((8, 2))),
                "y_table": floats(xp, np.ones((8, 2))),
                "h_table": floats(xp, np.ones((8, 2))),
                "w_table": floats(xp, np.ones((8, 2))),
                "bbox": ints(xp, [[0, 1, 3, 4], [2, 2, 7, 7]]),
                "combine": "sum",
                "clip_shape": False,
            },
        ),
        "row_col_embedding": (
            pr.row_col_embedding,
            {
                "row_table": floats(xp, np.ones((4, 3))),
                "col_table": floats(xp, np.ones((4, 3))),
                "rows": ints(xp, [0, 1, 3]),
                "cols": ints(xp, [2, 0, 1]),
                "combine": "sum",
            },
        ),
        "rel_sinusoid_positions": (
            pr.rel_sinusoid_positions,
            {
                "qlen": 3,
                "klen": 5,
                "convention": "xlnet",
                "clamp_len": 4,
                "bi_data": True,
                "xp": xp,
                "device": None,
            },
        ),
        "rel_sinusoid_table": (
            pr.rel_sinusoid_table,
            {
                "qlen": 3,
                "dim": 4,
                "klen": 5,
                "convention": "conformer",
                "clamp_len": None,
                "bi_data": False,
                "dtype": None,
                "xp": xp,
                "device": None,
            },
        ),
        "rel_shift": (
            pr.rel_shift,
            {"x": floats(xp, np.ones((2, 3, 5))), "klen": 3, "convention": "transformer_xl", "shift": 1},
        ),
        "rel_attention_scores": (
            pr.rel_attention_scores,
            {
                "q": floats(xp, np.ones((2, 3, 4))),
                "k": floats(xp, np.ones((2, 3, 4))),
                "r": floats(xp, np.ones((2, 5, 4))),
                "u": floats(xp, np.ones((2, 4))),
                "v": floats(xp, np.ones((2, 4))),
                "convention": "transformer_xl",
                "shift": 1,
                "scale": None,
            },
        ),
        "t5_layout_bias": (
            pr.t5_layout_bias,
            {
                "positions": pos,
                "bbox": ints(xp, [[0, 1, 3, 4], [2, 2, 7, 7], [9, 0, 9, 1]]),
                "table": floats(xp, np.ones((8, 2))),
                "x_table": floats(xp, np.ones((8, 2))),
                "y_table": floats(xp, np.ones((8, 2))),
                "max_rel_pos": 16,
                "max_rel_2d_pos": 32,
                "head_dim": 4,
            },
        ),
        "t5_udop_bias": (
            pr.t5_udop_bias,
            {
                "bbox": floats(xp, [[0.0, -1.0, 0.5, 0.5], [0.25, 0.0, 0.75, 0.5]]),
                "table": floats(xp, np.ones((10, 2))),
                "x_table": floats(xp, np.ones((10, 2))),
                "y_table": floats(xp, np.ones((10, 2))),
                "max_distance": 16,
                "max_distance_2d": 20,
                "scaling_factor": 100.0,
                "prefix_buckets": True,
            },
        ),
        "t5_gated_bias": (
            pr.t5_gated_bias,
            {
                "hidden": floats(xp, np.ones((2, 3, 4)) / 4),
                "table": floats(xp, np.ones((8, 2))),
                "gate_weight": floats(xp, np.ones((8, 4)) / 8),
                "gate_bias": floats(xp, np.zeros(8)),
                "gate_const": floats(xp, np.ones(2)),
                "max_distance": 16,
            },
        ),
        "t5_stream_buckets": (pr.t5_stream_buckets, {"positions": pos, "num_buckets": 8, "max_distance": 16}),
        "t5_segment_bias": (
            pr.t5_segment_bias,
            {
                "q_positions": pos,
                "k_positions": keys,
                "q_segments": ints(xp, [0, 1, 1]),
                "k_segments": ints(xp, [0, 0, 1, 1]),
                "table": floats(xp, np.ones((8 + 4, 2))),
                "num_segments": 2,
                "max_distance": 16,
            },
        ),
        "causal_mask": (
            pr.causal_mask,
            {"q_positions": pos, "k_positions": keys, "sliding_window": 2, "chunk_size": 4},
        ),
        "llama4_attn_scale": (
            pr.llama4_attn_scale,
            {"positions": pos, "floor_scale": 8192, "attn_scale": 0.1, "convention": "llama4", "dtype": None},
        ),
        "mrope_slot_components": (
            pr.mrope_slot_components,
            {"mrope_section": (2, 1, 1), "section_order": "chunked"},
        ),
        "mrope_angles": (
            pr.mrope_angles,
            {
                "position_ids": pr.mrope_position_ids([3], xp=xp),
                "inv_freq": floats(xp, [1.0, 0.5, 0.25, 0.125]),
                "mrope_section": (2, 1, 1),
                "section_order": "chunked",
            },
        ),
        "axial_angles": (
            pr.axial_angles,
            {"position_ids": pr.vision_position_ids(1, 2, 2, xp=xp), "inv_freq": floats(xp, [1.0, 0.5])},
        ),
        "rope_2d_cos_sin": (
            pr.rope_2d_cos_sin,
            {
                "positions": pr.vision_position_ids(1, 2, 3, xp=xp),
                "head_dim": 8,
                "base": 100.0,
                "convention": "pixtral",
            },
        ),
        "mrope_position_ids": (
            pr.mrope_position_ids,
            {"segments": [2, (1, 2, 2)], "time_interval": 1, "xp": xp, "device": None},
        ),
        "vision_position_ids": (
            pr.vision_position_ids,
            {"grid_t": 1, "grid_h": 2, "grid_w": 2, "merge_size": 1, "xp": xp, "device": None},
        ),
        "RopeFrequencies.from_inv_freq": (
            pr.RopeFrequencies.from_inv_freq,
            {
                "inv_freq": [1.0, 0.1],
                "attention_factor": 1.0,
                "compute_dtype": None,
                "xp": xp,
                "device": None,
            },
        ),
        "RopeFrequencies": (
            pr.RopeFrequencies,
            {"inv_freq": floats(xp, [1.0, 0.1]), "attention_factor": 1.0, "turns": None},
        ),
        "RopeConfig": (
            pr.RopeConfig,
            {
                "dim": 8,
                "head_dim": 8,
                "base": 10000.0,
                "scaling": {"rope_type": "default"},
                "max_position_embeddings": 64,
            },
        ),
    }


def _hostile(xp: Any) -> list[Any]:
    """Values no parameter accepts, or accepts only within limits."""
    foreign = array_api_strict if xp.__name__ != "array_api_strict" else np
    idx = _compat.index_dtype(xp)
    top = 2**62 if idx == xp.int64 else 2**30
    values: list[Any] = [
        None,
        True,
        0,
        1,
        3,
        -1,
        2**40,
        2**63,
        -(2**63),
        10**30,
        1.5,
        -0.0,
        math.nan,
        math.inf,
        -math.inf,
        1e300,
        "float32",
        "neox",
        "",
        b"x",
        {1, 2},
        {"rope_type": {"nested": {"factor": 2}}},
        {"rope_type": "yarn"},
        [],
        [1, 2, 3],
        [[1.0], [2.0]],
        (1, 2, 3),
        (0, -1),
        (2.5,),
        object(),
        np,
        math,
        "numpy",
        xp.int8,
        xp.uint8,
        getattr(xp, "bool", None) or xp.bool_,  # MLX spells it bool_
        xp.int64,
        xp.float64,
        np.float32,
        "cpu",
        "bogus",
        ints(xp, [127, -128], dtype=xp.int8),
        ints(xp, [0, 255], dtype=xp.uint8),
        ints(xp, [[1, 0], [0, 2]], dtype=xp.uint8),
        ints(xp, [top, 0]),
        ints(xp, [-top]),
        ints(xp, 3),
        ints(xp, np.zeros((0,), dtype=np.int64)),
        ints(xp, np.ones((2, 2, 2), dtype=np.int64)),
        ints(xp, [[0, 1, 2, 3]] * 3),
        floats(xp, [math.nan, 1.0]),
        floats(xp, [-1.0, 2.0]),
        floats(xp, 0.5),
        floats(xp, np.zeros((0, 4))),
        floats(xp, np.ones((2, 3, 4))),
        floats(xp, np.ones((3, 4))),
        _compat.asarray([1.0, 2.0], xp=xp, dtype=xp.float32),
        ints(xp, [1, 0]) == 1,
        foreign.asarray([0, 1]),
        foreign.asarray([1.0, 0.5]),
    ]
    values += [  # nested structures: scaling dicts, HF configs, segments
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "mscale": -100.0},
        {"rope_type": "longrope", "short_factor": {1.0, 2.0}, "long_factor": [1.0] * 4, "factor": 2.0},
        {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 2**70},
        {"rope_type": "yarn", "factor": 1e308, "beta_fast": 0, "original_max_position_embeddings": 64},
        {"rope_type": "linear", "factor": {"nested": 1.0}},
        {"rope_type": 3},
        {1: 2},
        {"head_dim": 0},
        {"head_dim": 64, "rope_theta": 0, "partial_rotary_factor": 0},
        {"head_dim": 64, "layer_types": 5},
        {"hidden_size": 64, "num_attention_heads": 0},
        {"head_dim": 64, "rope_parameters": {"full": {"rope_type": "su"}}, "layer_types": ["full"]},
        {"head_dim": 8, "rope_parameters": {1: {"rope_type": "default"}}, "layer_types": [1]},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "truncate": "yes"},
        [2, (1, -1, 2)],
        [(2**40, 2**40, 2)],
        [2**40],
        ("a",),
        [math.nan],
        [1.0, -1.0],
    ]
    if hasattr(xp, "uint64"):
        values.append(ints(xp, np.asarray([2**64 - 1, 0], dtype=np.uint64), dtype=xp.uint64))
    if hasattr(xp, "float16"):
        values += [xp.float16, _compat.asarray([1.0, 0.5], xp=xp, dtype=xp.float16)]
    return values


_CACHE: dict[str, tuple[dict[str, Any], list[Any]]] = {}


def _setup(xp: Any) -> tuple[dict[str, Any], list[Any]]:
    if xp.__name__ not in _CACHE:
        _CACHE[xp.__name__] = (_templates(xp), _hostile(xp))
    return _CACHE[xp.__name__]


def _call(fn: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    params = inspect.signature(fn).parameters
    positional = [n for n, p in params.items() if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    args = [arguments[n] for n in positional if n in arguments]
    return fn(*args, **{n: v for n, v in arguments.items() if n not in positional})  # **options too


def _check_raised(exc: BaseException, allowed: set[str], name: str, arguments: dict[str, Any]) -> None:
    described = f"{name}({', '.join(f'{k}={v!r:.60}' for k, v in arguments.items())})"
    if not isinstance(exc, (ValueError, TypeError)):
        msg = f"{described} raised {type(exc).__name__}: {exc}"
        raise AssertionError(msg) from exc
    message = str(exc)
    head = _NAME.match(message)
    assert head is not None and head.group(1) in allowed, (
        f"{described}: message names no parameter: {message}"
    )
    assert " must be " in message, f"{described}: message states no rule: {message}"


def _function_names() -> list[str]:
    names = [n for n in pr.__all__ if inspect.isfunction(getattr(pr, n))]
    return sorted([*names, "RopeFrequencies.from_inv_freq", "RopeFrequencies", "RopeConfig"])


_EXTRA_NAMES = {"sinusoidal": {"options"}, "rope_config_from_hf": {"config"}, "RopeFrequencies": {"turns"}}


@pytest.mark.parametrize("name", _function_names())
def test_only_value_and_type_errors_escape(xp: Any, name: str) -> None:
    templates, hostile = _setup(xp)
    fn, valid = templates[name]
    params = list(valid)
    allowed = set(inspect.signature(fn).parameters) | set(valid) | _EXTRA_NAMES.get(name, set())

    @settings(
        derandomize=True,
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        st.lists(
            st.tuples(st.sampled_from(params), st.integers(0, len(hostile) - 1)),
            min_size=1,
            max_size=2,
            unique_by=lambda pair: pair[0],
        )
    )
    def fuzz(changes: list[tuple[str, int]]) -> None:
        arguments = dict(valid)
        for param, i in changes:
            arguments[param] = hostile[i]
        try:
            result = _call(fn, arguments)
        except Exception as exc:
            _check_raised(exc, allowed, name, arguments)
            return
        if name == "RopeConfig":  # a constructed config must also build its frequencies
            result.frequencies(xp=xp)

    fuzz()


@pytest.mark.parametrize("name", _function_names())
def test_template_is_a_valid_call(xp: Any, name: str) -> None:
    templates, _ = _setup(xp)
    fn, valid = templates[name]
    _call(fn, valid)


@pytest.mark.parametrize("name", _function_names())
def test_every_hostile_value_in_every_argument(xp: Any, name: str) -> None:
    """The exhaustive single-argument sweep behind the random pairs above."""
    templates, hostile = _setup(xp)
    fn, valid = templates[name]
    allowed = set(inspect.signature(fn).parameters) | set(valid) | _EXTRA_NAMES.get(name, set())
    for param in valid:
        for value in hostile:
            arguments = {**valid, param: value}
            try:
                _call(fn, arguments)
            except Exception as exc:
                _check_raised(exc, allowed, name, arguments)
