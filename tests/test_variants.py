"""Named variants: a formula shipped under a canonical name is reported as that variant, not as a failure.

Variants are independent axes (posenc_ref_conformance/variants.py); each golden case records the axes its
expected values depend on (``assumes``), so an implementation that mixes axes is judged on every case
its combination determines.
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import golden, variants
from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.golden import generate
from posenc_ref_conformance.golden.cases._common import Case
from posenc_ref_conformance.golden.functions import FunctionSpec
from posenc_ref_conformance.runner import run

ROPE_FREQUENCIES = next(doc for doc in golden.load() if doc["function"] == "rope_frequencies")


def _vllm_ntk(dim: int, *, base: float, scaling: Any, seq_len: Any, dtype: str) -> Any:
    """vLLM's NTKScalingRotaryEmbedding, in float64 NumPy: (b s)^(-2i/d) / s^(2/d)."""
    reference = PosencRefAdapter()
    if not scaling or scaling.get("rope_type", scaling.get("type")) != "ntk":
        return reference.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
    s = float(scaling["factor"])
    inv = (base * s) ** (-np.arange(0, dim, 2) / dim) / s ** (2 / dim)
    return inv.astype(dtype), 1.0


def _deepseek_factor(dim: int, *, base: float, scaling: Any, seq_len: Any, dtype: str) -> Any:
    """megatron-like YaRN: HF's frequencies (truncate read), DeepSeek's attention factor.

    get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) with the defaults 1 and 0, the
    ``attention_factor`` key not read, ``factor`` required (a KeyError without it).
    """
    inv, factor = PosencRefAdapter().rope_frequencies(
        dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype
    )
    if not scaling or scaling.get("rope_type", scaling.get("type")) != "yarn":
        return inv, factor
    s = float(scaling["factor"])

    def get_mscale(m: float) -> float:
        return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0

    return inv, get_mscale(scaling.get("mscale", 1.0)) / get_mscale(scaling.get("mscale_all_dim", 0.0))


def _adapter(variants: dict[str, Any], function: Any = _vllm_ntk, name: str = "vllm-like") -> ModuleAdapter:
    module = types.SimpleNamespace(
        rope_frequencies=function, CAPABILITIES={"variants": variants, "invalid_inputs": False}
    )
    return ModuleAdapter(module, name=name)


def _assuming(axis: str, value: str) -> set[str]:
    """The shipped rope_frequencies cases whose expected values assume ``axis: value``."""
    return {c["id"] for c in ROPE_FREQUENCIES["cases"] if c.get("assumes", {}).get(axis) == value}


def test_a_declared_variant_runs_its_own_cases_instead() -> None:
    report = run(_adapter({"ntk": "vllm"}), only=["rope_frequencies"], invariants=False)
    by_id = {r.result_id: r for r in report.results}
    assert report.verdict == "PASS"
    assert by_id["rope_frequencies/ntk-vllm/factor-8-d64[float64]"].status == "pass"
    skipped = by_id["rope_frequencies/ntk/factor-8[float64]"]
    assert skipped.status == "skip"
    assert skipped.detail == "for variant ntk: hf (the adapter declares ntk: vllm)"
    # an ntk case the two formulas agree on (factor 1) runs for both
    assert by_id["rope_frequencies/ntk/unit-factor[float64]"].status == "pass"


def test_an_implementation_mixing_the_yarn_axes_is_judged_on_every_case_its_mix_determines() -> None:
    """DeepSeek's attention factor with truncate read (megatron): the gpt-oss truncate-false cases run."""
    report = run(
        _adapter({"yarn-attention-factor": "deepseek"}, _deepseek_factor, "megatron-like"),
        only=["rope_frequencies"],
        invariants=False,
    )
    by_id = {r.id: r for r in report.results if r.dtype == "float64"}
    assert report.verdict == "PASS"
    assert by_id["rope_frequencies/yarn/gpt-oss"].status == "pass"  # assumes yarn-truncate: honoured
    assert by_id["rope_frequencies/yarn/llama2-no-truncate"].status == "pass"
    assert by_id["rope_frequencies/yarn-deepseek/mscale-only"].status == "pass"
    assert by_id["rope_frequencies/yarn/deepseek-v3"].status == "pass"  # the formulas agree: no assumes
    hf_only = by_id["rope_frequencies/yarn/mscale-only"]
    assert hf_only.status == "skip"
    assert hf_only.detail == (
        "for variant yarn-attention-factor: hf (the adapter declares yarn-attention-factor: deepseek)"
    )
    ignored = by_id["rope_frequencies/yarn-deepseek/truncate-false-ignored"]
    assert ignored.status == "skip" and "yarn-truncate: ignored" in ignored.detail


def test_the_mix_undeclared_fails_exactly_the_cases_assuming_hfs_attention_factor() -> None:
    report = run(_adapter({}, _deepseek_factor, "megatron-like"), only=["rope_frequencies"], invariants=False)
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == _assuming("yarn-attention-factor", "hf")
    assert len(failed) >= 8


def test_declaring_the_deepseek_preset_for_the_mix_fails_the_truncate_case() -> None:
    """``{"yarn": "deepseek"}`` claims truncate is ignored; this code reads it, and the suite says so."""
    report = run(
        _adapter({"yarn": "deepseek"}, _deepseek_factor, "megatron-like"),
        only=["rope_frequencies"],
        invariants=False,
    )
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == {"rope_frequencies/yarn-deepseek/truncate-false-ignored"}
    gpt_oss = next(r for r in report.results if r.id == "rope_frequencies/yarn/gpt-oss")
    assert gpt_oss.status == "skip" and "yarn-truncate: honoured" in gpt_oss.detail


def test_variants_declared_per_function() -> None:
    caps = Capabilities(variants={"rope_frequencies": {"ntk": "vllm"}, "default": {"yarn": "deepseek"}})
    assert caps.variants_of("rope_frequencies")["ntk"] == "vllm"
    assert caps.variants_of("rope_frequencies")["yarn-truncate"] == "ignored"  # from "default"
    assert caps.variants_of("rope_from_base")["ntk"] == "hf"
    assert caps.variants_of("rope_from_base")["yarn-attention-factor"] == "deepseek"
    report = run(_adapter({"rope_frequencies": {"ntk": "vllm"}}), only=["rope_frequencies"], invariants=False)
    assert report.verdict == "PASS"


def _two_axis_spec(outputs: dict[tuple[str, str], float]) -> FunctionSpec:
    """A one-output function whose topic ``t`` has the axes ``t-a`` and ``t-b``; ``outputs`` by value pair."""
    return FunctionSpec(
        "fake",
        "fake",
        "fake() -> out",
        {},
        {"out": "float"},
        lambda inputs: {"out": [0.0]},
        positional=0,
        topic=lambda inputs: "t",
        variants={"t": lambda c: lambda inputs: {"out": [outputs[(c["t-a"], c["t-b"])]]}},
    )


@pytest.fixture
def two_axes(monkeypatch: pytest.MonkeyPatch) -> None:
    value = variants.Value("", "", ())
    for name in ("t-a", "t-b"):
        monkeypatch.setitem(variants.AXES, name, variants.Axis("t", "", {"c": value, "n": value}))


@pytest.mark.parametrize(
    ("outputs", "variant", "assumes"),
    [
        ({("c", "c"): 0.0, ("c", "n"): 0.0, ("n", "c"): 0.0, ("n", "n"): 0.0}, None, {}),
        ({("c", "c"): 0.0, ("c", "n"): 1.0, ("n", "c"): 0.0, ("n", "n"): 1.0}, None, {"t-b": "c"}),
        ({("c", "c"): 0.0, ("c", "n"): 0.0, ("n", "c"): 1.0, ("n", "n"): 1.0}, None, {"t-a": "c"}),
        # only both flipped together differ: agreeing on one axis already fixes the value
        ({("c", "c"): 0.0, ("c", "n"): 0.0, ("n", "c"): 0.0, ("n", "n"): 1.0}, None, {"t-a": "c"}),
        # every combination differs: the case is for its own combination only
        (
            {("c", "c"): 0.0, ("c", "n"): 1.0, ("n", "c"): 2.0, ("n", "n"): 3.0},
            None,
            {"t-a": "c", "t-b": "c"},
        ),
    ],
)
def test_assumes_is_the_fewest_axes_that_fix_the_expected_values(
    two_axes: None, outputs: dict[tuple[str, str], float], variant: str | None, assumes: dict[str, str]
) -> None:
    spec = _two_axis_spec(outputs)
    case = Case("fake/x", "", (), {}, None, None, variant, None)
    assert generate._assumes(spec, case) == assumes


def test_the_same_formula_undeclared_fails_the_canonical_cases() -> None:
    report = run(_adapter({}), only=["rope_frequencies"], invariants=False)
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == {"rope_frequencies/ntk/factor-8", "rope_frequencies/ntk/factor-4-d128"}


def test_canonical_adapters_skip_variant_cases_with_the_reason() -> None:
    report = run(PosencRefAdapter(), only=["rope_frequencies"], invariants=False)
    variant = [r for r in report.results if "/ntk-vllm/" in r.id]
    assert variant and all(
        r.status == "skip" and r.detail == "for variant ntk: vllm (the adapter declares ntk: hf)"
        for r in variant
    )


def test_the_variant_oracle_is_vllms_formula() -> None:
    """theta_0 = 8**(-2/64) = 0.937..., the value vLLM 0.32's layer gives (docs/matrix/vllm.md)."""
    inv, _ = _vllm_ntk(
        64, base=10000.0, scaling={"rope_type": "ntk", "factor": 8.0}, seq_len=None, dtype="float64"
    )
    assert math.isclose(float(inv[0]), 8.0 ** (-2 / 64), rel_tol=1e-15)


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ({"ntk": "sglang"}, r"^variants\['ntk'\] must be one of"),
        ({"nkt": "vllm"}, "^variants keys must be variant axes or presets"),
        ({"yarn": "hf"}, r"^variants\['yarn'\] \(a preset\) must be one of \['deepseek'\]"),
        ({"yarn-truncate": "no"}, r"^variants\['yarn-truncate'\] must be one of \['honoured', 'ignored'\]"),
        ({"rope": {"ntk": "x"}}, r"^variants\['rope'\]\['ntk'\] must be one of"),
        ({"ropes": {"ntk": "vllm"}}, "^variants keys must be canonical functions or 'default'"),
    ],
)
def test_unknown_variants_are_rejected(variants: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Capabilities(variants=variants)


def test_mixed_flat_and_per_function_variants_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="not both"):
        Capabilities(variants={"ntk": "vllm", "rope": {"ntk": "vllm"}})
