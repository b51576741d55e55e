"""The RoPE canonical functions of issue 12: rope_from_base, rope_heads, xpos_scale, M-RoPE ids and angles.

Planted bugs in the plain product implementation (``tests/adapters/plain_product.py``)
must fail under the product class, each on the cases meant to catch it; named
variants are checked against plain implementations of the code each cites; the
derived-frequency allowance of rope_from_base is shown to be needed; the
structure of the new cases (positions forms, contiguous large blocks) is pinned.
"""

from __future__ import annotations

import copy
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import golden
from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.compare import product_bound
from posenc_ref_conformance.golden import _format
from posenc_ref_conformance.runner import run
from tests.test_precision_classes import _plain, assert_mutant_fails

FILES = {doc["function"]: doc for doc in golden.load()}
_P = _plain()

# --- planted bugs ----------------------------------------------------------------------------------------


def _positions_f16(positions: Any) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # beyond 65504 float16 is inf
        rounded = np.asarray(positions).astype(np.float16).astype(np.float64)
    return np.nan_to_num(rounded, posinf=2**40).astype(np.int64)


def _base_positions_f16(x: Any, positions: Any, **kw: Any) -> Any:
    return _P.rope_from_base(x, _positions_f16(positions), **kw)


def _base_with(
    inv_of: Callable[..., Any] | None = None, attention: float | None = None
) -> Callable[..., Any]:
    """rope_from_base with the frequencies (``inv_of(dim, base, dtype)``) or attention factor replaced."""

    def rope_from_base(
        x: Any, positions: Any, *, dim: int, base: float, scaling: Any, seq_len: Any, layout: str
    ) -> Any:
        dtype = str(np.asarray(x).dtype)
        inv, factor = _P.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
        inv = inv if inv_of is None else inv_of(dim, base, dtype)
        factor = factor if attention is None else attention
        cos, sin = _P.rope_cos_sin(positions, inv, attention_factor=factor, layout=layout, dtype=dtype)
        return _P.apply_rope(x, cos, sin, layout=layout)

    return rope_from_base


def _denominator_d_minus_2(dim: int, base: float, dtype: str) -> Any:
    return (1.0 / base ** (np.arange(0, dim, 2) / (dim - 2))).astype(dtype)


def _base_linear_ignored(x: Any, positions: Any, *, scaling: Any, **kw: Any) -> Any:
    linear = isinstance(scaling, dict) and scaling.get("rope_type") == "linear"
    return _P.rope_from_base(x, positions, scaling=None if linear else scaling, **kw)


def _heads_bshd_as_bhsd(x: Any, positions: Any, inv_freq: Any, *, head_layout: str, **kw: Any) -> Any:
    return _P.rope_heads(
        x, positions, inv_freq, head_layout="bhsd" if head_layout == "bshd" else head_layout, **kw
    )


def _heads_first_sequence(x: Any, positions: Any, inv_freq: Any, *, head_layout: str, **kw: Any) -> Any:
    p = np.asarray(positions)
    if head_layout == "thd":  # packed sequences numbered as one: 0 .. T-1
        p = np.arange(p.size)
    else:  # every sequence at the first one's positions
        p = np.broadcast_to(p[:1], p.shape)
    return _P.rope_heads(x, p, inv_freq, head_layout=head_layout, **kw)


def _xpos_uncentred(positions: Any, dim: int, *, offset: int, **kw: Any) -> Any:
    return _P.xpos_scale(positions, dim, offset=0, **kw)


def _xpos_swapped(positions: Any, dim: int, **kw: Any) -> Any:
    q, k = _P.xpos_scale(positions, dim, **kw)
    return k, q


def _xpos_fixed_gamma(positions: Any, dim: int, *, gamma: float, **kw: Any) -> Any:
    return _P.xpos_scale(positions, dim, gamma=0.4, **kw)


def _mrope_spatial_advance(segments: Any, *, time_interval: float) -> Any:
    """HF transformers 5.x get_rope_index: after a vision block start += max(h, w), ignoring time."""
    parts, start = [], 0
    for segment in segments:
        block = _P.mrope_position_ids([segment], time_interval=time_interval) + start
        parts.append(block)
        start += max(segment[1], segment[2]) if isinstance(segment, list) else segment
    return np.concatenate(parts, axis=1)


def _mrope_no_interval(segments: Any, *, time_interval: float) -> Any:
    return _P.mrope_position_ids(segments, time_interval=1.0)


def _vision_row_major(grid_t: int, grid_h: int, grid_w: int, *, merge_size: int) -> Any:
    return _P.vision_position_ids(grid_t, grid_h, grid_w, merge_size=1)


def _angles_always_chunked(position_ids: Any, inv_freq: Any, *, section_order: str, **kw: Any) -> Any:
    return _P.mrope_angles(position_ids, inv_freq, section_order="chunked", **kw)


def _frequencies_factor_null_as_1(dim: int, *, scaling: Any, **kw: Any) -> Any:
    if isinstance(scaling, dict) and "factor" in scaling and scaling["factor"] is None:
        scaling = {**scaling, "factor": 1.0}
    return _P.rope_frequencies(dim, scaling=scaling, **kw)


def _frequencies_static_dynamic(dim: int, *, scaling: Any, seq_len: Any, **kw: Any) -> Any:
    """vLLM's old static dynamic NTK: the scaled base at every length, seq_len ignored."""
    if isinstance(scaling, dict) and scaling.get("rope_type") == "dynamic":
        seq_len = int(scaling["factor"] * scaling["max_position_embeddings"])
    return _P.rope_frequencies(dim, scaling=scaling, seq_len=seq_len, **kw)


def _frequencies_attention_factor_ignored(dim: int, *, scaling: Any, **kw: Any) -> Any:
    if isinstance(scaling, dict) and scaling.get("rope_type") == "yarn":
        scaling = {k: v for k, v in scaling.items() if k != "attention_factor"}
    return _P.rope_frequencies(dim, scaling=scaling, **kw)


MUTANTS: list[tuple[str, dict[str, Callable[..., Any]], str, Callable[[str], bool]]] = [
    (
        "rope_from_base float16 positions",
        {"rope_from_base": _base_positions_f16},
        "rope_from_base",
        lambda i: "llama2-d128" in i or "gpt-oss" in i,
    ),
    (
        "rope_from_base (d-2) denominator",
        {"rope_from_base": _base_with(inv_of=_denominator_d_minus_2)},
        "rope_from_base",
        lambda i: "default-d16" in i,
    ),
    (
        "rope_from_base attention factor dropped",
        {"rope_from_base": _base_with(attention=1.0)},
        "rope_from_base",
        lambda i: "yarn-gpt-oss" in i or "longrope" in i,
    ),
    (
        "rope_from_base linear scaling ignored",
        {"rope_from_base": _base_linear_ignored},
        "rope_from_base",
        lambda i: "linear-factor" in i,
    ),
    (
        "rope_heads bshd read as bhsd",
        {"rope_heads": _heads_bshd_as_bhsd},
        "rope_heads",
        lambda i: "/bshd-" in i,
    ),
    (
        "rope_heads per-sequence positions ignored",
        {"rope_heads": _heads_first_sequence},
        "rope_heads",
        lambda i: "-offsets-partial" in i,
    ),
    (
        "xpos centre ignored",
        {"xpos_scale": _xpos_uncentred},
        "xpos_scale",
        lambda i: "lucidrains-centre" in i,
    ),
    ("xpos q and k swapped", {"xpos_scale": _xpos_swapped}, "xpos_scale", lambda i: "paper-d8" in i),
    (
        "xpos gamma fixed at 0.4",
        {"xpos_scale": _xpos_fixed_gamma},
        "xpos_scale",
        lambda i: "batched-far" in i,
    ),
    (
        "M-RoPE ids advance by max(h, w)",
        {"mrope_position_ids": _mrope_spatial_advance},
        "mrope_position_ids",
        lambda i: "video-3-frames" in i or "video-interval-2" in i,
    ),
    (
        "M-RoPE time interval ignored",
        {"mrope_position_ids": _mrope_no_interval},
        "mrope_position_ids",
        lambda i: "video-interval" in i,
    ),
    (
        "vision ids row-major",
        {"vision_position_ids": _vision_row_major},
        "vision_position_ids",
        lambda i: "merge-2" in i,
    ),
    (
        "M-RoPE interleaved as chunked",
        {"mrope_angles": _angles_always_chunked},
        "mrope_angles",
        lambda i: "interleaved" in i,
    ),
    (
        "yarn factor null read as 1",
        {"rope_frequencies": _frequencies_factor_null_as_1},
        "rope_frequencies",
        lambda i: "factor-null" in i,
    ),
    (
        "static dynamic NTK",
        {"rope_frequencies": _frequencies_static_dynamic},
        "rope_frequencies",
        lambda i: i == "invariant/rope/dynamic-within-limit-is-default" or "seq-len-1000" in i,
    ),
    (
        "yarn attention_factor ignored",
        {"rope_frequencies": _frequencies_attention_factor_ignored},
        "rope_frequencies",
        lambda i: i == "invariant/rope/yarn-explicit-attention-factor",
    ),
]


@pytest.mark.parametrize(("name", "functions", "only", "targeted"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_planted_bugs_fail_under_the_product_class(
    name: str, functions: dict[str, Callable[..., Any]], only: str, targeted: Callable[[str], bool]
) -> None:
    assert_mutant_fails(name, functions, only, targeted)


# --- the derived-frequency allowance ---------------------------------------------------------------------


def _iterative_rope_from_base(
    x: Any, positions: Any, *, dim: int, base: float, scaling: Any, seq_len: Any, layout: str
) -> Any:
    """ggml's float32 kernel: step = powf(b, -2/d), angle_0 = float(p), angle_{i+1} = angle_i * step."""
    f = np.float32
    step = f(np.power(f(base), f(-2.0) / f(dim)))
    angles = [np.asarray(positions).astype(f)]
    for _ in range(1, dim // 2):
        angles.append((angles[-1] * step).astype(f))
    pairs = np.stack(angles, axis=-1)
    full = np.concatenate([pairs, pairs], -1) if layout == "half" else np.repeat(pairs, 2, -1)
    return _P.apply_rope(np.asarray(x), np.cos(full).astype(f), np.sin(full).astype(f), layout=layout)


def _failing_elements(case: dict[str, Any], output: np.ndarray, frequency_error: float) -> int:
    phase = copy.deepcopy(case["phase"])
    phase["frequencyError"] = frequency_error
    expected = _format.decode(case["expected"]["out"])
    bound = product_bound(phase, expected.shape, "float32")
    allowed = np.maximum(bound.bound, case["tolerances"]["float32"]["atol"])
    return int(np.sum((np.abs(output - expected) > allowed) & ~bound.beyond))


def test_derived_frequencies_need_their_allowance() -> None:
    """ggml's iterative float32 frequencies (36 ulp at pair 63 for d=128, b=1e4) pass Llama 2 at 2**20 only
    because the case says the implementation derives them (3 ln 1e4 + 6 = 34 ulp): with the allowance of
    given frequencies (1 ulp) 100+ judged elements would fail."""
    case = next(
        c for c in FILES["rope_from_base"]["cases"] if c["id"].endswith("half/large-block-2e20-llama2-d128")
    )
    assert case["phase"]["frequencyError"] == math.ceil(3 * math.log(1e4) + 6)
    inputs = {
        k: _format.decode(v) if isinstance(v, dict) and "dtype" in v else v for k, v in case["inputs"].items()
    }
    args = {k: inputs[k] for k in ("dim", "base", "scaling", "seq_len", "layout")}
    output = _iterative_rope_from_base(inputs["x"].astype(np.float32), inputs["positions"], **args)
    assert _failing_elements(case, output, case["phase"]["frequencyError"]) == 0
    assert _failing_elements(case, output, 1.0) > 100


# --- named variants, against plain implementations of the code each cites -------------------------------


def _deepseek(dim: int, base: float, p: dict[str, Any]) -> tuple[np.ndarray, float]:
    """modeling_deepseek.py DeepseekV3YarnRotaryEmbedding / vLLM DeepseekScalingRotaryEmbedding, float64."""
    s, original = p["factor"], p["original_max_position_embeddings"]

    def corr(rotations: float) -> float:
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(corr(p.get("beta_fast", 32))), 0)
    high = min(math.ceil(corr(p.get("beta_slow", 1))), dim - 1)
    ramp = np.clip((np.arange(dim // 2) - low) / ((high + 0.001 if low == high else high) - low), 0, 1)
    extra = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    inv = extra / s * ramp + extra * (1 - ramp)

    def mscale(m: float) -> float:
        return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0

    return inv, mscale(p.get("mscale", 1)) / mscale(p.get("mscale_all_dim", 0))


def _phi3(dim: int, base: float, p: dict[str, Any], seq_len: Any) -> tuple[np.ndarray, float]:
    """Phi-3's modeling_phi3.py Phi3LongRoPEScaledRotaryEmbedding, float64."""
    original = p["original_max_position_embeddings"]
    ext = p["long_factor"] if seq_len is not None and seq_len > original else p["short_factor"]
    scale = p["max_position_embeddings"] / original
    attention = 1.0 if scale <= 1 else math.sqrt(1 + math.log(scale) / math.log(original))
    return 1.0 / (np.asarray(ext) * base ** (np.arange(0, dim, 2) / dim)), attention


def _gemma4(dim: int, base: float, p: dict[str, Any]) -> tuple[np.ndarray, float]:
    """vLLM gemma4_rope.py Gemma4RotaryEmbedding: b**(-2i/head_dim) for the rotated pairs, 0 beyond."""
    rotated = int(p.get("partial_rotary_factor", 1.0) * dim // 2)
    inv = 1.0 / base ** (np.arange(0, 2 * rotated, 2) / dim)
    return np.concatenate([inv, np.zeros(dim // 2 - rotated)]), 1.0


def _variant_module(
    topic: str, formula: Callable[..., tuple[np.ndarray, float]], declared: bool
) -> ModuleAdapter:
    def rope_frequencies(dim: int, *, base: float, scaling: Any, seq_len: Any, dtype: str) -> Any:
        kind = (scaling or {}).get("rope_type", (scaling or {}).get("type"))
        if kind != topic:
            return _P.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
        args = (dim, base, scaling, seq_len) if topic == "longrope" else (dim, base, scaling)
        inv, attention = formula(*args)
        return inv.astype(dtype), attention

    names = {"yarn": "deepseek", "longrope": "phi3-ratio", "proportional": "gemma4"}
    caps = {"invalid_inputs": False, "variants": {topic: names[topic]} if declared else {}}
    module = types.SimpleNamespace(rope_frequencies=rope_frequencies, CAPABILITIES=caps)
    return ModuleAdapter(module, name=f"{topic} variant")


VARIANT_CODE = [
    ("yarn", _deepseek, "yarn-deepseek/"),
    ("longrope", _phi3, "longrope-phi3-ratio/"),
    ("proportional", _gemma4, "proportional-gemma4/"),
]


@pytest.mark.parametrize(("topic", "formula", "prefix"), VARIANT_CODE, ids=[v[0] for v in VARIANT_CODE])
def test_a_variant_declared_passes_its_own_cases(topic: str, formula: Any, prefix: str) -> None:
    report = run(_variant_module(topic, formula, True), only=["rope_frequencies"], invariants=False)
    ran = [r for r in report.results if r.status == "pass" and f"rope_frequencies/{prefix}" in r.id]
    assert report.verdict == "PASS", [
        f"{r.result_id}: {r.detail}" for r in report.results if r.status == "fail"
    ]
    assert len(ran) >= 4  # two cases or more, both dtypes


@pytest.mark.parametrize(("topic", "formula", "prefix"), VARIANT_CODE, ids=[v[0] for v in VARIANT_CODE])
def test_the_same_formula_undeclared_fails_canonical_cases(topic: str, formula: Any, prefix: str) -> None:
    report = run(_variant_module(topic, formula, False), only=["rope_frequencies"], invariants=False)
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed and all(i.startswith(f"rope_frequencies/{topic}/") for i in failed), sorted(failed)


# --- capabilities and case structure ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (["bhsd", "nhwc"], ValueError, r"^head_layouts must be chosen from \['bhsd', 'bshd', 'thd'\]"),
        ("bhsd", TypeError, "^head_layouts must be a list of strings"),
    ],
)
def test_head_layouts_are_validated(value: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        Capabilities(head_layouts=value)


def test_one_declared_head_layout_skips_the_others_and_the_transpose_invariant() -> None:
    module = _plain()
    module.CAPABILITIES = {"phase": "product", "invalid_inputs": False, "head_layouts": ["thd"]}
    report = run(ModuleAdapter(module, name="thd only"), only=["rope_heads"])
    by_status: dict[str, set[str]] = {}
    for r in report.results:
        by_status.setdefault(r.status, set()).add(r.id)
    assert report.verdict == "PASS"
    assert all("/thd-" in i for i in by_status["pass"])
    skipped = [r for r in report.results if "/bhsd-" in r.id]
    assert skipped and all(
        r.status == "skip" and "head_layout 'bhsd' not supported" in r.detail for r in skipped
    )
    invariant = [r for r in report.results if r.id.startswith("invariant/rope/head-layout-transpose")]
    assert invariant and all(r.status == "skip" and "two head layouts" in r.detail for r in invariant)


def test_every_apply_case_has_its_positions_form() -> None:
    rope = {c["id"]: c for c in FILES["rope"]["cases"]}
    applied = [c for c in FILES["apply_rope"]["cases"] if c["result"] == "valid"]
    assert len(applied) >= 10
    for case in applied:
        _, layout, name = case["id"].split("/")
        twin = rope[f"rope/{layout}/apply-{name}"]
        assert twin["inputs"]["x"] == case["inputs"]["x"] and twin["inputs"]["layout"] == layout
        assert "PositionsForm" in twin["flags"]


def test_attention_factors_other_than_1_reach_apply_rope() -> None:
    factors = set()
    for case in FILES["rope"]["cases"]:
        if case["id"].split("/")[-1].startswith("apply-"):
            factors.add(float(_format.decode(case["inputs"]["attention_factor"])))
    assert {1.0, 0.75} < factors and any(f > 1.2 for f in factors)


def test_large_positions_come_as_small_contiguous_blocks() -> None:
    """rope, rope_from_base and rope_heads take a scalar offset's worth of positions at 2**20 and beyond."""
    for function in ("rope", "rope_from_base", "rope_heads"):
        for case in FILES[function]["cases"]:
            if "LargePosition" not in case["flags"]:
                continue
            positions = _format.decode(case["inputs"]["positions"])
            rows = positions.reshape(-1, positions.shape[-1])  # one run per sequence (rope_heads: [B, S])
            assert rows.shape[-1] <= 5, case["id"]
            assert all(np.array_equal(row, row[0] + np.arange(row.size)) for row in rows), case["id"]
    for case in FILES["rope_cos_sin"]["cases"]:
        inv = _format.decode(case["inputs"]["inv_freq"])
        positions = _format.decode(case["inputs"]["positions"]).reshape(-1)
        if inv.size >= 64 and positions.max() >= 2**20:  # a d=128 table: each case one block of 3
            assert np.array_equal(positions, positions[0] + np.arange(3)), case["id"]
        if "ConsecutiveRun" in case["flags"]:  # an offset-only table: one run of 5
            assert np.array_equal(positions, positions[0] + np.arange(5)), case["id"]


def test_every_rope_flag_is_behind_two_cases() -> None:
    counts: dict[str, int] = {}
    for doc in FILES.values():
        if doc["scheme"] != "rope":
            continue
        for case in doc["cases"]:
            for flag in case["flags"]:
                counts[flag] = counts.get(flag, 0) + 1
    assert {flag: n for flag, n in counts.items() if n < 2} == {}


def test_xpos_scale_is_float64_accurate_on_mlx() -> None:
    """posenc_ref's MLX float64 exp is float64-accurate (MLX's own is float32-accurate there)."""
    mx = pytest.importorskip("mlx.core", reason="needs mlx", exc_type=ImportError)
    import posenc_ref

    q, _ = posenc_ref.xpos_scale(mx.array([100], dtype=mx.int64), 8, dtype=mx.float64)
    want = math.exp(100 / 512 * math.log(0.4 / 1.4))
    assert abs(float(q.tolist()[0][0]) - want) <= 4 * 2.0**-53 * want
