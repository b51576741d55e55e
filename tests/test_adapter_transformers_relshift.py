"""The transformers adapter's Transformer-XL columns: one per family, each its own code.

XLNet, Wav2Vec2-Conformer, Wav2Vec2-BERT, SeamlessM4T, FastSpeech2-Conformer, Parakeet, Nemotron-ASR
streaming, Funnel, Gemma 3n and Gemma 4 audio: each variant declares only the relative-attention
functions its family's code serves, every declared case it runs passes, and the default column
declares none of them.
"""

from __future__ import annotations

import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import run

MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

REL = ("rel_sinusoid_table", "rel_shift", "rel_attention_scores")
TABLE_SHIFT = ("rel_sinusoid_table", "rel_shift")
#: variant -> (declared functions, cases that must pass: each family's own convention)
FAMILIES = {
    "xlnet": (
        TABLE_SHIFT,
        ("rel_sinusoid_table/xlnet/bi-data-q3-d4[float32]", "rel_shift/xlnet/bi-q3-k5[float64]"),
    ),
    "wav2vec2_conformer": (
        REL,
        ("rel_attention_scores/conformer/l3[float32]", "rel_shift/transformer_xl/paper-q3-k5[float64]"),
    ),
    "wav2vec2_bert": (REL, ("rel_attention_scores/conformer/shared-r-batch2[float64]",)),
    "seamless_m4t": (REL, ("rel_sinusoid_table/conformer/l4-d8[float32]",)),
    "fastspeech2_conformer": (TABLE_SHIFT, ("rel_shift/transformer_xl/conformer-l4[float32]",)),
    "parakeet": (
        TABLE_SHIFT,
        ("rel_shift/transformer_xl/untrimmed-q3[float32]", "rel_sinusoid_table/conformer/l48-d16[float32]"),
    ),
    "nemotron_asr_streaming": (TABLE_SHIFT, ("rel_sinusoid_table/conformer/streaming-q2-k5-d6[float32]",)),
    "funnel": (
        TABLE_SHIFT,
        ("rel_shift/xlnet/funnel-shift2[float64]", "rel_sinusoid_table/xlnet/funnel-l6-d8[float32]"),
    ),
    "gemma3n": (
        ("rel_shift",),
        ("rel_shift/gemma3n/block-w3[float64]", "rel_shift/gemma3n/previous-row[float32]"),
    ),
    "gemma4": (("rel_shift",), ("rel_shift/gemma3n/block-w3[float32]",)),
}


@pytest.mark.parametrize("variant", sorted(FAMILIES))
def test_family_column_is_its_own_code_and_passes(variant: str) -> None:
    functions, must_pass = FAMILIES[variant]
    adapter = load_adapter(f"transformers:{variant}")
    rel = {"rel_sinusoid_positions", "rel_sinusoid_table", "rel_shift", "rel_attention_scores"}
    assert set(adapter.capabilities.functions) & rel == set(functions)  # (and a RoPE row: Gemma 3n, 4)
    assert adapter.describe()["sources"]["relative_attention"] == variant
    report = run(adapter, only=REL, invariants=False)
    statuses = {r.result_id: r.status for r in report.results}
    assert not [rid for rid, status in statuses.items() if status in ("fail", "error", "xpass")]
    assert {rid: statuses.get(rid) for rid in must_pass} == dict.fromkeys(must_pass, "pass")
    ran = sum(status == "pass" for status in statuses.values())
    assert ran >= 4  # each column compares more than a token case


def test_default_column_declares_none() -> None:
    adapter = load_adapter("transformers")
    assert not any(adapter.supports(f) for f in REL)
    assert adapter.describe()["sources"]["relative_attention"] is None
