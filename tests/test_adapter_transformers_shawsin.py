"""transformers variants of issue 26: the speech models' Shaw indices and the sinusoid copies.

Each variant runs its family's own module: SpeechT5's, VITS's and Granite Speech's relative
indices, MusicGen's ``[cos | sin]`` table, PatchTST's / PatchTSMixer's standardised table,
Florence-2's temporal cosine table, and every verbatim copy of a covered sinusoid table.  Skipped
without torch and transformers.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import load_xfails, run

XFAILS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "matrix" / "xfails" / "transformers.txt"
MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.mark.parametrize(
    ("variant", "only", "must_pass"),
    [
        (
            "speecht5",
            ["shaw_index", "shaw_table_rows"],
            ["shaw_index/speecht5/l-3[int]", "shaw_index/speecht5/2d[int]"],
        ),
        ("vits", ["shaw_index"], ["shaw_index/vits/window-2[int]", "shaw_index/vits/self-attention-6[int]"]),
        ("granite_speech", ["shaw_index", "shaw_table_rows"], ["shaw_index/granite_speech/block-4[int]"]),
        ("granite_speech_plus", ["shaw_table_rows"], ["shaw_table_rows/granite_speech/200-512[int]"]),
        ("granite_speech5", ["shaw_index"], ["shaw_index/granite_speech/block-4[int]"]),
        ("musicgen", ["sinusoidal"], ["sinusoidal/tensor2tensor/cos-first-odd-dim-7[float32]"]),
        ("musicgen_melody", ["sinusoidal"], ["sinusoidal/tensor2tensor/cos-first-d8[float32]"]),
        ("patchtst", ["sinusoidal"], ["sinusoidal/patchtst/rows-of-a-larger-table[float32]"]),
        ("patchtsmixer", ["sinusoidal"], ["sinusoidal/patchtst/basic-d8[float32]"]),
        ("florence2", ["sinusoidal"], ["sinusoidal/vaswani/basic-d8[float32]"]),
    ],
)
def test_new_variants_pass_their_own_cases(variant: str, only: list[str], must_pass: list[str]) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    assert adapter.describe()["sources"] != load_adapter("transformers").describe()["sources"]
    report = run(adapter, only=only, xfails=load_xfails(XFAILS))
    statuses = {r.result_id: r.status for r in report.results}
    for case in must_pass:
        assert statuses[case] == "pass", (case, statuses.get(case))
    assert not [r.result_id for r in report.results if r.status == "fail"]


COPIES = {
    "fairseq": (
        "kosmos2",
        "kosmos2_5",
        "nllb_moe",
        "seamless_m4t",
        "seamless_m4t_v2",
        "xglm",
        "trocr",
        "tipsv2",
    ),
    "marian": ("pegasus", "autoformer", "informer", "time_series_transformer", "roformer"),
    "vaswani": ("flaubert", "distilbert"),
    "tensor2tensor": ("qwen2_5_omni", "qwen3_omni_moe", "qwen3_asr"),
}


@pytest.mark.parametrize(
    ("variant", "convention"),
    [(v, c) for c, names in COPIES.items() for v in names] + [("speecht5", "fairseq")],
)
def test_sinusoid_copies_declare_only_their_convention(variant: str, convention: str) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    assert adapter.capabilities.sinusoidal_conventions == (convention,)
    positions = np.array([[0, 3], [7, 1]])
    out = np.asarray(adapter.sinusoidal(positions, 8, convention=convention, options={}, dtype="float32"))
    reference = load_adapter("posenc_ref")
    want = np.asarray(reference.sinusoidal(positions, 8, convention=convention, options={}, dtype="float64"))
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-6)


def test_default_column_declares_no_shaw_and_no_patchtst() -> None:
    default = load_adapter("transformers")
    assert not default.supports("shaw_index") and not default.supports("shaw_table_rows")
    assert "patchtst" not in default.capabilities.sinusoidal_conventions
    assert load_adapter("transformers:vits").capabilities.shaw_conventions == ("vits",)


def test_vits_value_skew_is_the_inverse_of_its_key_skew() -> None:
    """The value side (_absolute_position_to_relative_position) reads the same rows as the key side:
    so shaw_values with the vits index is VITS's value term too."""
    import torch
    from transformers import VitsConfig
    from transformers.models.vits.modeling_vits import VitsAttention

    n = 7
    attention = VitsAttention(VitsConfig(hidden_size=1, num_attention_heads=1, window_size=2))
    absolute = torch.arange(1, n * n + 1, dtype=torch.float32).reshape(1, n, n)
    relative = attention._absolute_position_to_relative_position(absolute)  # [1, n, 2n - 1]
    assert torch.equal(attention._relative_position_to_absolute_position(relative), absolute)


def test_granite_distances_beyond_a_block_are_unsupported() -> None:
    from posenc_ref_conformance.adapters.base import Unsupported

    adapter = load_adapter("transformers:granite_speech")
    with pytest.raises(Unsupported, match="within blocks of context_size=2"):
        adapter.shaw_index(np.array([3]), max_distance=[2, 3], convention="granite_speech")
    out = adapter.shaw_index(np.array([-1, 0, 1]), max_distance=[2, 3], convention="granite_speech")
    assert np.asarray(out).tolist() == [4, 3, 2]


def test_musicgen_refuses_sin_first_and_whisper_cos_first() -> None:
    from posenc_ref_conformance.adapters.base import Unsupported

    with pytest.raises(Unsupported, match=r"\[cos \| sin\]"):
        load_adapter("transformers:musicgen").sinusoidal(
            np.arange(3), 8, convention="tensor2tensor", options={}, dtype="float32"
        )
    with pytest.raises(Unsupported, match="hard-codes cos_first"):
        load_adapter("transformers").sinusoidal(
            np.arange(3), 8, convention="tensor2tensor", options={"cos_first": True}, dtype="float32"
        )
