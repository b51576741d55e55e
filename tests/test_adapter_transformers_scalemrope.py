"""The transformers variants of issue 26's attention-scale, M-RoPE and Falcon ALiBi families.

``ministral3`` / ``mistral4`` (``get_llama_4_attn_scale``, the ``"mistral"`` convention) and
``beam`` (``compute_attention_scaling``) run their own NoPE query temperatures; ``ernie4_5_vl_moe``
and ``hunyuan_vl`` their text rotary classes' slot selection; ``falcon`` its bf16 ALiBi.  Each
column keeps the verdicts the matrix page classifies: Ernie, Ministral 3, Mistral 4 and Beam pass
their golden cases; HunYuan-VL fails exactly where a rotated pair's two channels read different
axes (a bug, reproduced in docs/matrix/repro/transformers_hunyuan_vl_xdrope_pairs.py); Falcon fails
exactly the cases its bf16 rounding reaches (a precision class,
docs/matrix/repro/transformers_falcon_alibi_bf16.py).  Skipped without torch and transformers.
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import run

MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "torch and transformers are needed")

#: Variant -> (canonical function run, golden cases that must fail; every other run case passes).
EXPECTED = {
    "ministral3": ("llama4_attn_scale", set()),
    "mistral4": ("llama4_attn_scale", set()),
    "beam": ("llama4_attn_scale", set()),
    "ernie4_5_vl_moe": ("mrope_angles", set()),
    "hunyuan_vl": (
        "mrope_angles",
        {
            "mrope_angles/chunked-qwen2-vl[float32]",
            "mrope_angles/chunked-hunyuan-xdrope[float32]",
            "mrope_angles/chunked-xdrope-small[float32]",
        },
    ),
    "falcon": (
        "alibi",
        {
            *(f"alibi_slopes/max-bias-8/heads-{h}[float32]" for h in (12, 16, 20, 24, 40, 112)),
            "alibi_bias/causal/block-of-65536[float32]",
            "alibi_bias_from_heads/causal/12-heads[float32]",
            "alibi_bias_from_heads/causal/block-of-65536[float32]",
            "invariant/alibi/slopes-geometric[float32]",
        },
    ),
}


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_column_verdicts(variant: str) -> None:
    function, failing = EXPECTED[variant]
    report = run(load_adapter(f"transformers:{variant}"), only=[function])
    statuses = {r.result_id: r.status for r in report.results}
    failed = {rid for rid, status in statuses.items() if status == "fail"}
    assert failed == failing, [f"{r.result_id}: {r.detail}" for r in report.results if r.status == "fail"]
    assert sum(status == "pass" for status in statuses.values()) >= 1


def test_variants_declare_only_their_family() -> None:
    for variant, functions in {
        "ministral3": ("llama4_attn_scale",),
        "beam": ("llama4_attn_scale",),
        "ernie4_5_vl_moe": ("mrope_angles",),
        "hunyuan_vl": ("mrope_angles",),
        "falcon": ("alibi_slopes", "alibi_bias", "alibi_bias_from_heads"),
    }.items():
        assert set(functions) <= set(hf.ADAPTERS[variant].capabilities.functions)  # and its RoPE row's
    default = hf.TransformersAdapter()
    assert not default.supports("llama4_attn_scale") and not default.supports("mrope_angles")


def test_mistral_scale_is_hf_get_llama_4_attn_scale() -> None:
    from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

    adapter = hf.ADAPTERS["ministral3"]()
    positions = np.asarray([[0, 16383, 16384], [32767, 32768, 100000]])
    got = np.asarray(
        adapter.llama4_attn_scale(
            positions, floor_scale=16384.0, attn_scale=0.1, convention="mistral", dtype="float32"
        )
    )
    assert got.shape == positions.shape
    assert got[0].tolist() == pytest.approx([1.0, 1.0, 1 + 0.1 * np.log(2)], rel=1e-7)
    import torch

    direct = get_llama_4_attn_scale(torch.tensor(positions.reshape(1, -1)), 0.1, 16384)
    assert np.array_equal(got.reshape(-1), direct.reshape(-1).numpy())


def test_beam_refuses_other_constants_and_conventions() -> None:
    from posenc_ref_conformance.adapters.base import Unsupported

    adapter = hf.ADAPTERS["beam"]()
    with pytest.raises(Unsupported, match="2048"):
        adapter.llama4_attn_scale(
            np.asarray([0]), floor_scale=4096.0, attn_scale=0.1, convention="beam", dtype="float32"
        )
    with pytest.raises(Unsupported, match="float32"):
        adapter.llama4_attn_scale(
            np.asarray([0]), floor_scale=2048.0, attn_scale=0.1, convention="beam", dtype="float64"
        )
    with pytest.raises(Unsupported, match="'mistral' convention"):
        hf.ADAPTERS["mistral4"]().llama4_attn_scale(
            np.asarray([0]), floor_scale=8192.0, attn_scale=0.1, convention="llama4", dtype="float32"
        )


def test_ernie_slots_alternate_h_and_w_then_t() -> None:
    adapter = hf.ADAPTERS["ernie4_5_vl_moe"]()
    ids = np.asarray([[7], [2], [3]])  # (t, h, w) of one vision token
    inv = np.asarray([1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125])
    got = np.asarray(
        adapter.mrope_angles(ids, inv, mrope_section=[2, 2, 2], section_order="ernie", dtype="float32")
    )
    # slots h, w, h, w, t, t with their own frequencies
    assert got.tolist() == [[2 * 1.0, 3 * 0.5, 2 * 0.25, 3 * 0.125, 7 * 0.0625, 7 * 0.03125]]


def test_hunyuan_text_tokens_pass_and_vision_tokens_are_refused() -> None:
    adapter = hf.ADAPTERS["hunyuan_vl"]()
    inv = np.asarray([1.0, 0.5, 0.25, 0.125])
    text = np.asarray([[0, 1, 2]] * 4)
    got = np.asarray(
        adapter.mrope_angles(text, inv, mrope_section=[1, 1, 1, 1], section_order="chunked", dtype="float32")
    )
    assert np.array_equal(got, np.arange(3)[:, None] * inv[None, :])
    image = np.asarray([[0, 1], [0, 1], [0, 0], [0, 0]])
    with pytest.raises(RuntimeError, match="two channels of a rotated pair"):
        adapter.mrope_angles(image, inv, mrope_section=[1, 1, 1, 1], section_order="chunked", dtype="float32")


def test_falcon_slopes_are_bloom_slopes_in_bfloat16() -> None:
    import torch

    falcon = np.asarray(hf.ADAPTERS["falcon"]().alibi_slopes(12, max_bias=8.0, dtype="float32"))
    bloom = np.asarray(hf.TransformersAdapter().alibi_slopes(12, max_bias=8.0, dtype="float32"))
    assert np.array_equal(falcon, torch.tensor(bloom).bfloat16().float().numpy())
    assert not np.array_equal(falcon, bloom)


#: variant -> (modeling module, attribute it runs (class.method for a method), a case it passes)
OWN_CODE = {
    "ministral3": ("ministral3", "get_llama_4_attn_scale", "llama4_attn_scale/mistral/small-floor"),
    "mistral4": ("mistral4", "get_llama_4_attn_scale", "llama4_attn_scale/mistral/small-floor"),
    "beam": ("beam", "compute_attention_scaling", "llama4_attn_scale/beam/batched"),
    "falcon": ("falcon", "build_alibi_tensor", "alibi_slopes/max-bias-8/heads-8"),
    "ernie4_5_vl_moe": (
        "ernie4_5_vl_moe",
        "Ernie4_5_VLMoeTextRotaryEmbedding.recomposition_frequencies",
        "mrope_angles/ernie-batched",
    ),
    "hunyuan_vl": (
        "hunyuan_vl",
        "HunYuanVLRotaryEmbedding.recomposition_frequencies",
        "mrope_angles/chunked-text-is-1d",
    ),
}


@pytest.mark.parametrize("variant", sorted(OWN_CODE))
def test_each_variant_runs_its_family_module(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shifting the family's own function by one turns a passing case into a failure."""
    import importlib

    family, attribute, case = OWN_CODE[variant]
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    owner, _, name = attribute.rpartition(".")
    target = getattr(module, owner) if owner else module
    original = getattr(target, name)
    monkeypatch.setattr(target, name, lambda *args, **kwargs: original(*args, **kwargs) + 1)
    report = run(load_adapter(f"transformers:{variant}"), only=[case.split("/")[0]], invariants=False)
    statuses = {r.result_id: r.status for r in report.results}
    assert statuses[f"{case}[float32]"] == "fail"
