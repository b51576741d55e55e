"""The built-in ``transformers`` adapter: its verdicts stay what docs/matrix/transformers.md explains.

The module imports without torch and transformers, and loading the adapter then
fails with the install hint (tested always, by hiding the package).  With
transformers installed: the known failures are exactly the adopter xfail file,
chosen cases keep their verdicts (passes the library must keep, discrepancies
the suite must keep detecting), each variant swaps in its HF implementation,
and the float64 that ``PLANNED_CAPABILITIES`` promises for ``apply_rope`` and
``learned`` holds.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys

import pytest

from posenc_ref_conformance.adapters import AdapterError, load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import Report, load_xfails, run

XFAILS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "matrix" / "xfails" / "transformers.txt"
MISSING = hf.missing()
needs_transformers = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def test_without_transformers_loading_fails_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ImportError
    assert "pip install transformers" in (hf.missing() or "")
    with pytest.raises(AdapterError, match="needs torch and transformers"):
        load_adapter("transformers")
    with pytest.raises(AdapterError, match="needs torch and transformers"):
        load_adapter("posenc_ref_conformance.adapters.transformers:mpt")


def test_unknown_variant_is_a_usage_error() -> None:
    with pytest.raises(AdapterError, match=r"the variant must be one of \['fsmt', 'gptj'"):
        load_adapter("transformers:bart")


@pytest.fixture(scope="module")
def report() -> Report:
    return run(load_adapter("transformers"), xfails=load_xfails(XFAILS))


def _statuses(report: Report) -> dict[str, str]:
    return {r.result_id: r.status for r in report.results}


@needs_transformers
def test_known_failures_are_exactly_the_xfail_file(report: Report) -> None:
    failed = [f"{r.result_id}: {r.detail}" for r in report.results if r.status in ("fail", "xpass")]
    assert not failed, failed
    assert not report.stale_xfails, report.stale_xfails
    assert report.counts()["pass"] > 100


#: Cases transformers must keep passing: each names a real convention the HF code gets right.
MUST_PASS = [
    "rope_frequencies/yarn/gpt-oss[float32]",  # truncate=False honoured
    "rope_frequencies/yarn/deepseek-v3[float32]",  # mscale / mscale_all_dim ratio
    "rope_frequencies/llama3/llama3.1[float32]",
    "rope_frequencies/dynamic/seq-len-10000[float32]",  # config.max_position_embeddings, not original
    "rope_frequencies/longrope/seq-len-4097[float32]",  # long factors past original_max
    "rope_frequencies/proportional/gemma-quarter[float32]",
    "rope_cos_sin/interleaved/gpt-oss-yarn[float32]",  # Cohere's repeat_interleave table
    "apply_rope/half/partial-r4-d10[float32]",  # GPT-NeoX's partial rotary
    "apply_rope/interleaved/batched-heads[float32]",  # GPT-J's rotate_every_two
    "t5_bucket/bidirectional/1000-32768-float32[int]",  # float32 log at a bucket boundary
    "alibi_slopes/max-bias-8/heads-12[float32]",  # BLOOM's non-power-of-two rule
    "alibi_bias/causal/block-of-65536[float32]",
    "sinusoidal/vaswani/odd-dim-5[float32]",  # XLM
    "sinusoidal/marian/odd-dim-5[float32]",  # ceil/floor split
    "sinusoidal/fairseq/padding-idx-3[float32]",  # Speech2Text rows p + padding_idx + 1
    "learned/opt/basic[float32]",  # OPT's offset 2, padding position -1
    "causal_mask/chunked/4[bool]",
    "attention/bias/alibi[float32]",  # eager_attention_forward with a bias in the mask
    "invariant/rope/layout-equivalence[float32]",
]

#: Discrepancies the suite must keep detecting (classified in docs/matrix/transformers.md).
MUST_DETECT = [
    "rope_cos_sin/half/large-positions-d16[float32]",  # (b) float32 phase product
    "invariant/rope/relative-shift-large[float32]",  # (b)
    "rope_frequencies/yarn/factor-from-lengths[float32]",  # (c) factor required
    "sinusoidal/tensor2tensor/dim-2[float32]",  # (a) Whisper divides by zero
    "rope_frequencies/invalid/beta-order[float32]",  # (a) validation only logs
    "attention/mask/fully-masked-row[float32]",  # (c) uniform weights, not zeros
]

#: Declared out of reach: skipped with a reason, never compared.
MUST_SKIP = [
    "rope_frequencies/ntk/factor-8[float32]",  # HF has no static ntk type
    "sinusoidal/mlx/defaults-d8[float32]",
    "alibi_bias/symmetric/square-4-heads[float32]",  # HF's ALiBi is the causal form only
    "rope_frequencies/default/d8[float64]",  # HF computes inv_freq in float32
]


@needs_transformers
def test_chosen_verdicts(report: Report) -> None:
    statuses = _statuses(report)
    expected = {
        **dict.fromkeys(MUST_PASS, "pass"),
        **dict.fromkeys(MUST_DETECT, "xfail"),
        **dict.fromkeys(MUST_SKIP, "skip"),
    }
    assert {rid: statuses.get(rid) for rid in expected} == expected


@needs_transformers
def test_float32_phase_error_is_large_not_marginal(report: Report) -> None:
    """At m = 2**24 the product m * theta loses whole radians: the failure is unmistakable."""
    (result,) = [r for r in report.results if r.result_id == "rope_cos_sin/half/large-positions-d16[float32]"]
    assert result.max_abs_err is not None and result.max_abs_err > 0.5


@needs_transformers
@pytest.mark.parametrize(
    ("variant", "only", "must_pass", "must_fail"),
    [
        (
            "mpt",
            ["alibi_slopes", "alibi_bias"],
            "alibi_slopes/max-bias-16/heads-12",
            "alibi_slopes/invalid/zero-max-bias",
        ),
        ("m2m100", ["sinusoidal"], "sinusoidal/fairseq/odd-dim-7", None),
        ("fsmt", ["sinusoidal"], "sinusoidal/fairseq/batched", None),
        ("gptj", ["rope"], "rope_cos_sin/interleaved/basic-d8", "invariant/rope/layout-equivalence"),
    ],
)
def test_variants_use_their_own_implementation(
    variant: str, only: list[str], must_pass: str, must_fail: str | None
) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    assert adapter.describe()["sources"] != load_adapter("transformers").describe()["sources"]
    report = run(adapter, only=only, xfails=load_xfails(XFAILS))
    statuses = {r.id: r.status for r in report.results}
    assert statuses[must_pass] == "pass"
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == ({must_fail} if must_fail else set())


@needs_transformers
def test_planned_float64_holds_for_apply_rope_and_learned() -> None:
    """apply_rope and learned follow their input dtype: float64 passes at float64 tolerances."""
    adapter = load_adapter("transformers")
    adapter.capabilities = dataclasses.replace(adapter.capabilities, dtypes=("float64",))
    assert hf.PLANNED_CAPABILITIES["dtypes"]["apply_rope"] == ["float64", "float32"]
    report = run(adapter, only=["apply_rope", "learned"], invariants=False)
    valid = [r for r in report.results if "InvalidInput" not in r.flags and r.status != "skip"]
    assert valid and {r.status for r in valid} == {"pass"}, [r.detail for r in valid if r.status != "pass"]
    assert {r.dtype for r in valid} == {"float64"}
