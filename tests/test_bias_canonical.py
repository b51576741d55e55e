"""Issue 12's non-RoPE canonical functions: their oracles and cases, fully masked rows, ALiBi slopes.

Expected values are the published reference code's own expressions (NeMo's Sandwich, KERPLE's kernels,
BLOOM's padded index, fairseq's make_positions) worked by hand or transcribed in NumPy float64, and the
numbers HF gave in docs/matrix/transformers.md; never posenc_ref.
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import golden, oracle
from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.golden import _format
from posenc_ref_conformance.runner import run

FILES = {doc["function"]: doc for doc in golden.load()}
NEW = (
    "token_positions",
    "t5_bias",
    "alibi_bias_from_heads",
    "alibi_bias_from_mask",
    "shaw_table_rows",
    "shaw_logits",
    "shaw_values",
    "sandwich_bias",
    "kerple_bias",
)


def _case(case_id: str) -> dict[str, Any]:
    return next(c for c in FILES[case_id.split("/", 1)[0]]["cases"] if c["id"] == case_id)


def _expected(case_id: str, name: str) -> np.ndarray:
    return _format.decode(_case(case_id)["expected"][name])


def _f64(nested: Any) -> np.ndarray:
    with oracle.working_precision():
        return np.vectorize(lambda v: oracle.round_float64(v), otypes=[float])(
            np.asarray(nested, dtype=object)
        )


# --- the cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize("function", NEW)
def test_each_new_function_has_valid_and_invalid_cases_and_a_signature(function: str) -> None:
    doc = FILES[function]
    results = {c["result"] for c in doc["cases"]}
    assert results == {"valid", "invalid"}, function
    assert sum(c["result"] == "valid" for c in doc["cases"]) >= 4
    assert doc["signature"]["positional"], function


def test_posenc_ref_passes_every_new_case_on_numpy() -> None:
    report = run(PosencRefAdapter(), only=list(NEW))
    ran = [r for r in report.results if r.status != "skip"]
    assert report.verdict == "PASS" and len(ran) > 150, [r.detail for r in ran if r.status != "pass"][:5]


# --- the oracles, against the reference code ---------------------------------------------------


def _nemo_sandwich(q: np.ndarray, k: np.ndarray, heads: int, dim: int, base: float) -> np.ndarray:
    """NeMo SandwichRelativePositionEmbedding.forward, transcribed in float64 NumPy."""
    rel = (k[None, :] - q[:, None]).astype(np.float64)
    inv_freq = 1.0 / (base ** (2 * np.arange(1, dim / 2 + 1) / dim))
    bias = np.cos(rel[:, :, None] * inv_freq).sum(axis=2)
    scales = np.arange(1, heads + 1)[:, None, None]
    return (bias[None] - dim / 2) / (scales * 8 / heads)


def test_sandwich_oracle_is_nemos_formula() -> None:
    q, k = np.arange(3, 9), np.arange(11)
    got = _f64(oracle.kernel_bias.sandwich_bias(q.tolist(), k.tolist(), num_heads=6, dim=16, base=10000.0))
    np.testing.assert_allclose(got, _nemo_sandwich(q, k, 6, 16, 10000.0), rtol=1e-13, atol=1e-13)
    one = _f64(oracle.kernel_bias.sandwich_bias([0], [3], num_heads=1, dim=2, base=500.0))
    assert math.isclose(one[0, 0, 0], (math.cos(3 / 500) - 1) / 8, rel_tol=1e-12)


def test_kerple_oracle_is_the_reference_kernels() -> None:
    """ParallelKerpleLog: -bias_p log(1 + bias_a d); ParallelKerplePower: -bias_a d**bias_p."""
    log = _f64(oracle.kernel_bias.kerple_bias([0], [0, 3], [2.0], [1.0], kind="log"))
    assert log[0, 0, 0] == 0.0 and math.isclose(log[0, 0, 1], -4 * math.log(2), rel_tol=1e-15)
    power = _f64(oracle.kernel_bias.kerple_bias([5], [0, 5, 7], [0.5], [2.0], kind="power"))
    assert power[0, 0].tolist() == [-12.5, 0.0, -2.0]


def test_token_positions_oracle_is_fairseqs_make_positions_less_the_offset() -> None:
    """make_positions([[5, 6, 1, 1], [1, 5, 6, 7]], padding_idx=1) = [[2, 3, 1, 1], [1, 2, 3, 4]]."""
    ids = [[5, 6, 1, 1], [1, 5, 6, 7]]
    fairseq = [[2, 3, 1, 1], [1, 2, 3, 4]]
    for row, made in zip(ids, fairseq, strict=True):
        positions = oracle.learned.token_positions([t != 1 for t in row])
        assert positions == [m - 2 for m in made]
    # HF create_position_ids_from_input_ids(..., past_key_values_length=2): (cumsum + 2) * mask + 1
    assert oracle.learned.token_positions([True, True, False], cache_length=2) == [2, 3, -1]


def test_padded_alibi_oracle_is_blooms_index() -> None:
    """build_alibi_tensor: (cumsum(mask) - 1) * mask times the slopes, one row per head."""
    assert oracle.alibi.padded_key_index([0, 0, 1, 1, 1]) == [0, 0, 0, 1, 2]
    bias = _f64(oracle.alibi.alibi_bias_from_mask([0, 0, 1, 1, 1], num_heads=4))
    assert bias[:, 0, :].tolist()[0] == [0.0, 0.0, 0.0, 0.25, 0.5]
    assert bias[:, 0, 4].tolist() == [2 * 2.0**-e for e in (2, 4, 6, 8)]


def test_t5_bias_oracle_reads_the_bucket_row() -> None:
    table = [[float(b), -float(b)] for b in range(32)]
    bias = oracle.t5.t5_bias(
        [0], [200, 1, 0], table
    )  # rp 200, 1, 0: buckets 31, 17, 0 (32/128 bidirectional)
    assert bias == [[[31.0, 17.0, 0.0]], [[-31.0, -17.0, -0.0]]]


def test_shaw_oracles() -> None:
    assert oracle.relative.shaw_table_rows(0, 512, convention="bert") == 1023  # HF: 2 * P - 1
    assert oracle.relative.shaw_table_rows(64, 8, convention="tensor2tensor") == 73
    table = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    logits = oracle.relative.shaw_logits([[2.0, 4.0]], [[0, 1, 2]], table, k=[[1.0, 1.0]] * 3)
    assert [float(v) for v in logits[0]] == [3.0, 5.0, 4.0]
    values = oracle.relative.shaw_values([[0.25, 0.75]], [[2, 0]], table)
    assert [float(v) for v in values[0]] == [0.875, 0.125]


# --- ALiBi slopes in the golden inputs (float64, cast per run) -----------------------------------


def test_golden_slopes_are_the_float64_slopes() -> None:
    slopes = _format.decode(_case("alibi_bias/symmetric/12-heads")["inputs"]["slopes"])
    with oracle.working_precision():
        exact = oracle.alibi.alibi_slopes(12)
        assert slopes.tolist() == [oracle.round_float64(s) for s in exact]
        assert slopes.tolist() != [oracle.round_float32(s) for s in exact]


def _own_slopes_adapter() -> ModuleAdapter:
    """A library whose alibi_bias ignores the given slopes and computes its own (BLOOM, MLX, keras-hub)."""
    ref = PosencRefAdapter()

    def alibi_bias(q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        dtype = str(np.asarray(slopes).dtype)
        own = np.asarray(ref.alibi_slopes(np.asarray(slopes).size, max_bias=8.0, dtype=dtype))
        return ref.alibi_bias(q_positions, k_positions, own, form=form)

    return ModuleAdapter(types.SimpleNamespace(alibi_bias=alibi_bias), name="own slopes")


def test_a_library_computing_its_own_slopes_runs_the_alibi_cases_in_both_dtypes() -> None:
    report = run(_own_slopes_adapter(), only=["alibi_bias"], invariants=False)
    passed = {r.result_id for r in report.results if r.status == "pass"}
    assert report.verdict == "PASS"
    assert {"alibi_bias/symmetric/12-heads[float64]", "alibi_bias/causal/12-heads[float32]"} <= passed


# --- the fully-masked-rows variant ----------------------------------------------------------------


def _hf_eager_attention(q: Any, k: Any, v: Any, *, bias: Any, mask: Any, scale: float | None) -> Any:
    """HF eager attention in NumPy: finfo.min added on masked logits, then softmax."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    logits = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if bias is not None:
        logits = logits + np.asarray(bias)
    if mask is not None:
        logits = logits + np.where(np.asarray(mask), 0.0, np.finfo(q.dtype).min).astype(q.dtype)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v


def _eager(variants: dict[str, str]) -> ModuleAdapter:
    module = types.SimpleNamespace(attention=_hf_eager_attention, CAPABILITIES={"variants": variants})
    return ModuleAdapter(module, name="hf-eager-like")


def test_hf_eager_declared_uniform_passes_and_runs_the_variant_cases() -> None:
    report = run(_eager({"fully-masked-rows": "uniform"}), only=["attention"], invariants=False)
    by_id = {r.result_id: r for r in report.results}
    assert report.verdict == "PASS"
    for case_id in (
        "attention/uniform-masked/fully-masked-row",
        "attention/uniform-masked/fully-masked-with-bias",
    ):
        assert by_id[f"{case_id}[float32]"].status == "pass"
    canonical = by_id["attention/mask/fully-masked-row[float64]"]
    assert canonical.status == "skip"
    assert (
        canonical.detail
        == "for variant fully-masked-rows: zero (the adapter declares fully-masked-rows: uniform)"
    )
    assert by_id["attention/mask/causal[float64]"].status == "pass"  # rows with a visible key still run


def test_hf_eager_undeclared_fails_only_the_fully_masked_cases() -> None:
    report = run(_eager({}), only=["attention"], invariants=False)
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == {"attention/mask/fully-masked-row", "attention/mask/fully-masked-with-bias"}


def test_the_uniform_variant_is_the_mean_of_v_hf_gave() -> None:
    """docs/matrix/transformers.md: HF's row is 1.690625, 1.440625, -1.603125, the mean of the case's v."""
    out = _expected("attention/uniform-masked/fully-masked-row", "out")
    assert out[1].tolist() == [1.690625, 1.440625, -1.603125]
    assert _expected("attention/mask/fully-masked-row", "out")[1].tolist() == [0.0, 0.0, 0.0]
    case = _case("attention/uniform-masked/fully-masked-row")
    assert case["assumes"] == {"fully-masked-rows": "uniform"}


def test_the_variant_is_a_declarable_capability() -> None:
    assert Capabilities(variants={"fully-masked-rows": "uniform"}).variants == {
        "fully-masked-rows": "uniform"
    }
    with pytest.raises(
        ValueError, match=r"^variants\['fully-masked-rows'\] must be one of \['zero', 'uniform'\]"
    ):
        Capabilities(variants={"fully-masked-rows": "nan"})
