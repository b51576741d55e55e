"""Precision classes: an honest plain implementation passes, every planted bug still fails.

``tests/adapters/plain_product.py`` computes everything the plain way (positions
cast to the run's dtype, angles as products, frequencies derived in that dtype)
and declares ``"phase": "product"``: the suite must pass it at float32 and
float64 with no xfail file, reporting the large-position cases it cannot judge
as ``beyond-precision``.  Each mutant below breaks one thing the way real code
did, including the precision-shaped bugs a wide tolerance could hide; each must
still fail, and fail on the cases meant to catch it.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance.adapters.base import ModuleAdapter
from posenc_ref_conformance.runner import run

PLAIN = pathlib.Path(__file__).parent / "adapters" / "plain_product.py"


def _plain() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("plain_product_for_mutants", PLAIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plain_product_implementation_passes_with_no_xfails() -> None:
    report = run(str(PLAIN))
    failing = [f"{r.result_id}: {r.detail}" for r in report.results if r.status == "fail"]
    assert report.verdict == "PASS", failing[:5]
    dtypes = {r.dtype for r in report.results if r.status == "pass"}
    assert {"float64", "float32"} <= dtypes
    beyond = {r.result_id for r in report.results if r.status == "beyond-precision"}
    assert "rope_cos_sin/half/large-positions-d16[float32]" not in beyond  # judged below 2**20 ...
    assert any(
        r.id.startswith("invariant/rope/relative-shift-large")
        for r in report.results
        if r.result_id in beyond
    )
    grades = {(g["function"], g["dtype"]): g for g in report.accuracy()}
    worst = grades[("rope_cos_sin", "float32")]
    assert worst["within"] == "product" and worst["position"] == 2**24 + 1 and worst["worst"] > 0.1
    assert grades[("rope_cos_sin", "float64")]["worst"] < 1e-4  # at 2**40 + 1 (the float64 reach sweep)


def test_the_same_code_declared_exact_fails_only_where_exactness_shows() -> None:
    """float32 frequencies and products declared ``exact``: the large-position cases catch the claim."""
    module = _plain()
    module.CAPABILITIES = {"phase": "exact", "invalid_inputs": False}
    report = run(ModuleAdapter(module, name="plain declared exact"), only=["rope", "sinusoidal"])
    failed = {r.id for r in report.results if r.status == "fail"}
    assert report.verdict == "FAIL"
    assert {"rope_cos_sin/half/large-positions-d16", "sinusoidal/vaswani/large-positions"} <= failed
    exactness = ("large", "run-2e", "runs-2e", "gpt-oss", "mlx", "reach-sweep")
    assert all(any(word in i for word in exactness) for i in failed), sorted(failed)


def _mutant(name: str, **functions: Callable[..., Any]) -> ModuleAdapter:
    module = _plain()
    for function, impl in functions.items():
        setattr(module, function, impl)
    return ModuleAdapter(module, name=name)


_P = _plain()


def _cos_sin_positions_as(dtype: Any) -> Callable[..., Any]:
    def rope_cos_sin(positions: Any, inv_freq: Any, **kw: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore"):  # beyond 65504 float16 is inf
            rounded = np.asarray(positions).astype(dtype).astype(np.float64)
        return _P.rope_cos_sin(np.nan_to_num(rounded, posinf=2**62).astype(np.int64), inv_freq, **kw)

    return rope_cos_sin


def _factor_twice(positions: Any, inv_freq: Any, *, attention_factor: float, **kw: Any) -> Any:
    cos, sin = _P.rope_cos_sin(positions, inv_freq, attention_factor=attention_factor, **kw)
    return cos * attention_factor, sin * attention_factor


def _off_by_one(positions: Any, inv_freq: Any, **kw: Any) -> Any:
    return _P.rope_cos_sin(np.asarray(positions) + 1, inv_freq, **kw)


def _int16_positions(positions: Any, inv_freq: Any, **kw: Any) -> Any:
    return _P.rope_cos_sin(np.asarray(positions).astype(np.int16).astype(np.int64), inv_freq, **kw)


def _shifted_frequencies(positions: Any, inv_freq: Any, **kw: Any) -> Any:
    inv = np.asarray(inv_freq)
    return _P.rope_cos_sin(positions, np.concatenate([inv[1:], inv[-1:] / 10]), **kw)


def _swapped_layout(positions: Any, inv_freq: Any, *, layout: str, **kw: Any) -> Any:
    return _P.rope_cos_sin(positions, inv_freq, layout="interleaved" if layout == "half" else "half", **kw)


def _float16_trig(positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str) -> Any:
    angle = np.asarray(positions).astype(dtype)[..., None] * np.asarray(inv_freq).astype(dtype)
    angle = np.concatenate([angle, angle], -1) if layout == "half" else np.repeat(angle, 2, -1)
    half = angle.astype(np.float16)
    return (np.cos(half) * attention_factor).astype(dtype), (np.sin(half) * attention_factor).astype(dtype)


def _sin_positions_f16(positions: Any, dim: int, **kw: Any) -> Any:
    with np.errstate(over="ignore", invalid="ignore"):  # beyond 65504 float16 is inf
        rounded = np.nan_to_num(np.asarray(positions).astype(np.float16).astype(np.float64), posinf=65504)
    return _P.sinusoidal(rounded.astype(np.int64), dim, **kw)


def _sin_denominator(
    positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
) -> Any:
    if convention != "vaswani":
        return _P.sinusoidal(positions, dim, convention=convention, options=options, dtype=dtype)
    return _P.sinusoidal(positions, dim, convention="tensor2tensor", options={}, dtype=dtype)


def _apply_conjugate(x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
    return _P.apply_rope(x, cos, -np.asarray(sin), layout=layout)


def _rope_frequencies_f16(dim: int, **kw: Any) -> Any:
    inv, factor = _P.rope_frequencies(dim, **kw)
    return inv.astype(np.float16).astype(inv.dtype), factor


def _yarn_no_factor(dim: int, **kw: Any) -> Any:
    inv, _ = _P.rope_frequencies(dim, **kw)
    return inv, 1.0


def _slopes_linear(num_heads: int, *, max_bias: float, dtype: str) -> Any:
    return (2.0 ** (-8.0 * np.arange(1, num_heads + 1) / num_heads)).astype(dtype)


def _bias_f16(q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
    s = np.asarray(slopes)
    return _P.alibi_bias(q_positions, k_positions, s.astype(np.float16).astype(s.dtype), form=form)


def _llama4_no_floor(
    positions: Any, *, floor_scale: float, attn_scale: float, convention: str, dtype: str
) -> Any:
    p = np.asarray(positions).astype(dtype)
    return (np.log((p + 1) / floor_scale + 1) * attn_scale + 1).astype(dtype)


def _alibi_mask_counting_pads(mask: Any, *, num_heads: int, max_bias: float, dtype: str) -> Any:
    keys = np.broadcast_to(np.arange(np.shape(mask)[-1]), np.shape(mask)).astype(dtype)  # arange(L) keys
    return (
        _P.alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype)[:, None, None] * keys[..., None, None, :]
    )


def _t5_bias_next_bucket(q_positions: Any, k_positions: Any, table: Any, **kw: Any) -> Any:
    rows = np.asarray(table)
    return _P.t5_bias(q_positions, k_positions, np.concatenate([rows[1:], rows[-1:]]), **kw)


def _kerple_plus(q_positions: Any, k_positions: Any, r1: Any, r2: Any, *, kind: str) -> Any:
    return -_P.kerple_bias(q_positions, k_positions, r1, r2, kind=kind)


def _kerple_swapped(q_positions: Any, k_positions: Any, r1: Any, r2: Any, *, kind: str) -> Any:
    return _P.kerple_bias(q_positions, k_positions, r2, r1, kind=kind)


def _sandwich_from_zero(
    q_positions: Any, k_positions: Any, *, num_heads: int, dim: int, base: float, dtype: str
) -> Any:
    """RoPE's frequencies base**(-2k/d), k = 0 .. d/2 - 1, instead of NeMo's k = 1 .. d/2."""
    rel = _P.relative_positions(q_positions, k_positions).astype(dtype)
    total = np.cos(rel[..., None] * base ** (-2.0 * np.arange(dim // 2) / dim)).sum(-1) - dim / 2
    scales = np.arange(1, num_heads + 1) * 8 / num_heads
    return (total[..., None, :, :] / scales[:, None, None]).astype(dtype)


def _sandwich_heads_reversed(q_positions: Any, k_positions: Any, **kw: Any) -> Any:
    return _P.sandwich_bias(q_positions, k_positions, **kw)[..., ::-1, :, :]


def _positions_ignore_padding(mask: Any, *, cache_length: int) -> Any:
    return np.broadcast_to(np.arange(np.shape(mask)[-1]) + cache_length, np.shape(mask))


def _positions_ignore_cache(mask: Any, *, cache_length: int) -> Any:
    return _P.token_positions(mask, cache_length=0)


def _logits_without_key_term(q: Any, index: Any, table: Any, *, k: Any) -> Any:
    return _P.shaw_logits(q, index, table, k=None)


def _bert_rows_plus_two(max_distance: Any, *, convention: str) -> int:
    return _P.shaw_table_rows(max_distance, convention=convention) + (2 if convention == "bert" else 0)


def _own_slopes_linear(
    q_positions: Any, k_positions: Any, *, num_heads: int, form: str, dtype: str, **kw: Any
) -> Any:
    slopes = _slopes_linear(num_heads, max_bias=8.0, dtype=dtype)
    return _P.alibi_bias(q_positions, k_positions, slopes, form=form)


def _attention_uniform_rows(q: Any, k: Any, v: Any, *, bias: Any, mask: Any, scale: float | None) -> Any:
    """HF eager: finfo.min where masked, so a fully masked row averages v (undeclared here)."""
    if mask is None:
        return _P.attention(q, k, v, bias=bias, mask=mask, scale=scale)
    low = np.asarray(np.finfo(np.asarray(q).dtype).min, dtype=np.asarray(q).dtype)
    extra = np.where(np.asarray(mask), np.zeros((), dtype=low.dtype), low)
    total = extra if bias is None else np.asarray(bias) + extra
    return _P.attention(q, k, v, bias=total, mask=None, scale=scale)


MUTANTS: list[tuple[str, dict[str, Callable[..., Any]], str, Callable[[str], bool]]] = [
    (
        "float16 positions",
        {"rope_cos_sin": _cos_sin_positions_as(np.float16)},
        "rope_cos_sin",
        lambda i: "yarn" in i or "batched" in i,
    ),
    (
        "bfloat16-like positions",
        {"rope_cos_sin": _cos_sin_positions_as(np.float16)},
        "rope_cos_sin",
        lambda i: "offsets" in i,
    ),
    ("attention factor twice", {"rope_cos_sin": _factor_twice}, "rope_cos_sin", lambda i: "gpt-oss" in i),
    ("positions off by one", {"rope_cos_sin": _off_by_one}, "rope_cos_sin", lambda i: "basic" in i),
    (
        "int16 positions wrap",
        {"rope_cos_sin": _int16_positions},
        "rope_cos_sin",
        lambda i: "large-positions" in i,
    ),
    ("frequencies shifted", {"rope_cos_sin": _shifted_frequencies}, "rope_cos_sin", lambda i: "basic" in i),
    ("swapped layout", {"rope_cos_sin": _swapped_layout}, "rope_cos_sin", lambda i: "basic" in i),
    ("float16 trig", {"rope_cos_sin": _float16_trig}, "rope_cos_sin", lambda i: "basic" in i),
    (
        "sinusoidal float16 positions",
        {"sinusoidal": _sin_positions_f16},
        "sinusoidal",
        lambda i: "large" in i,
    ),
    ("t2t frequencies for vaswani", {"sinusoidal": _sin_denominator}, "sinusoidal", lambda i: "vaswani" in i),
    ("rotation by -theta", {"apply_rope": _apply_conjugate}, "apply_rope", lambda i: "full" in i),
    (
        "float16 inv_freq",
        {"rope_frequencies": _rope_frequencies_f16},
        "rope_frequencies",
        lambda i: "default" in i,
    ),
    (
        "yarn attention factor dropped",
        {"rope_frequencies": _yarn_no_factor},
        "rope_frequencies",
        lambda i: "yarn" in i,
    ),
    ("slopes 2**(-8i/n)", {"alibi_slopes": _slopes_linear}, "alibi_slopes", lambda i: "heads-12" in i),
    ("float16 slopes in the bias", {"alibi_bias": _bias_f16}, "alibi_bias", lambda i: "12-heads" in i),
    (
        "llama4 scale without floor",
        {"llama4_attn_scale": _llama4_no_floor},
        "llama4_attn_scale",
        lambda i: "defaults" in i,
    ),
    (
        "padded ALiBi counts pads",
        {"alibi_bias_from_mask": _alibi_mask_counting_pads},
        "alibi_bias_from_mask",
        lambda i: "padded/left" in i,
    ),
    ("t5_bias one bucket off", {"t5_bias": _t5_bias_next_bucket}, "t5_bias", lambda i: "umt5" in i),
    ("kerple with the wrong sign", {"kerple_bias": _kerple_plus}, "kerple_bias", lambda i: "square" in i),
    ("kerple r1 and r2 swapped", {"kerple_bias": _kerple_swapped}, "kerple_bias", lambda i: "log/" in i),
    (
        "sandwich frequencies from k = 0",
        {"sandwich_bias": _sandwich_from_zero},
        "sandwich_bias",
        lambda i: "square" in i,
    ),
    (
        "sandwich heads reversed",
        {"sandwich_bias": _sandwich_heads_reversed},
        "sandwich_bias",
        lambda i: "12-heads" in i,
    ),
    (
        "token positions ignore padding",
        {"token_positions": _positions_ignore_padding},
        "token_positions",
        lambda i: "padded/left" in i,
    ),
    (
        "token positions ignore the cache",
        {"token_positions": _positions_ignore_cache},
        "token_positions",
        lambda i: "cache" in i,
    ),
    (
        "shaw key term dropped",
        {"shaw_logits": _logits_without_key_term},
        "shaw_logits",
        lambda i: "key-query" in i,
    ),
    (
        "bert table 2P + 1 rows",
        {"shaw_table_rows": _bert_rows_plus_two},
        "shaw_table_rows",
        lambda i: "bert" in i,
    ),
    (
        "own slopes 2**(-8i/n)",
        {"alibi_bias_from_heads": _own_slopes_linear},
        "alibi_bias_from_heads",
        lambda i: "12-heads" in i,
    ),
    (
        "fully masked rows uniform, undeclared",
        {"attention": _attention_uniform_rows},
        "attention",
        lambda i: "fully-masked" in i,
    ),
]


def assert_mutant_fails(
    name: str, functions: dict[str, Callable[..., Any]], only: str, targeted: Callable[[str], bool]
) -> None:
    """The plain implementation with ``functions`` replaced fails ``only``, on a case ``targeted`` picks."""
    report = run(_mutant(name, **functions), only=[only])
    failed = {r.id for r in report.results if r.status == "fail"}
    assert report.verdict == "FAIL", f"{name} passed {only} under the product class"
    assert any(targeted(i) for i in failed), f"{name} failed only {sorted(failed)[:8]}"


@pytest.mark.parametrize(("name", "functions", "only", "targeted"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_planted_bugs_fail_under_the_product_class(
    name: str, functions: dict[str, Callable[..., Any]], only: str, targeted: Callable[[str], bool]
) -> None:
    assert_mutant_fails(name, functions, only, targeted)


def test_float16_positions_are_caught_below_the_beyond_precision_line() -> None:
    """The failure is judged, not hidden: below 2**17 the float32 product bound is ~0.02, the error ~1."""
    report = run(
        _mutant("float16 positions", rope_cos_sin=_cos_sin_positions_as(np.float16)), only=["rope_cos_sin"]
    )
    case = next(r for r in report.results if r.result_id == "rope_cos_sin/half/gpt-oss-yarn[float32]")
    assert case.status == "fail" and "(position 131071)" in case.detail and "product class" in case.detail
    assert not math.isclose(case.max_abs_err or 0.0, 0.0)
