"""transformers variants of issue 26: the remaining families with a sinusoid table of their own.

VideoMAE (``vaswani``), CTRL, Canary and ZoeDepth (``marian``, float32 torch), PegasusX,
Fun-ASR-Nano and TimesFM (``tensor2tensor``), each column running its family's own function or
module; TimesFM's odd-width padding bug is reproduced and classified, and TimesFM 2.5's unused
copy is listed in ``SINUSOID_NOT_RUN``.  Skipped without torch and transformers.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.adapters.base import Unsupported
from posenc_ref_conformance.runner import load_xfails, run

ROOT = pathlib.Path(__file__).resolve().parents[1]
XFAILS = ROOT / "docs" / "matrix" / "xfails" / "transformers.txt"
#: TimesFM's own failures (the xfail file's comment lists them for its variant)
TIMESFM_XFAILS = ["sinusoidal/tensor2tensor/odd-dim-5", "sinusoidal/tensor2tensor/dim-1"]
MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

CONVENTION = {
    "videomae": "vaswani",
    "ctrl": "marian",
    "canary": "marian",
    "zoedepth": "marian",
    "pegasus_x": "tensor2tensor",
    "fun_asr_nano": "tensor2tensor",
    "timesfm": "tensor2tensor",
}


@pytest.mark.parametrize(
    ("variant", "must_pass"),
    [
        ("videomae", ["sinusoidal/vaswani/odd-dim-5[float32]", "sinusoidal/vaswani/dim-512-sample[float32]"]),
        ("ctrl", ["sinusoidal/marian/odd-dim-5[float32]", "sinusoidal/marian/basic-d8[float32]"]),
        ("canary", ["sinusoidal/marian/basic-d8[float32]"]),
        ("zoedepth", ["sinusoidal/marian/basic-d8[float32]"]),
        (
            "pegasus_x",
            ["sinusoidal/tensor2tensor/negative[float32]", "sinusoidal/tensor2tensor/basic-d8[float32]"],
        ),
        ("fun_asr_nano", ["sinusoidal/tensor2tensor/dim-512-sample[float32]"]),
        (
            "timesfm",
            [
                "sinusoidal/tensor2tensor/min-timescale-2[float32]",
                "sinusoidal/tensor2tensor/negative[float32]",
                "sinusoidal/tensor2tensor/dim-2[float32]",
            ],
        ),
    ],
)
def test_new_variants_pass_their_own_cases(variant: str, must_pass: list[str]) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    assert adapter.capabilities.sinusoidal_conventions == (CONVENTION[variant],)
    xfails = load_xfails(XFAILS)
    if variant == "timesfm":  # its max(n - 1, 1) guard: dim 2 passes; its odd widths are its own bug
        xfails = [x for x in xfails if x != "sinusoidal/tensor2tensor/dim-2"] + TIMESFM_XFAILS
    report = run(adapter, only=["sinusoidal"], xfails=xfails)
    statuses = {r.result_id: r.status for r in report.results}
    for case in must_pass:
        assert statuses[case] == "pass", (case, statuses.get(case))
    assert not [r.result_id for r in report.results if r.status == "fail"]


@pytest.mark.parametrize("variant", sorted(CONVENTION))
def test_values_match_the_reference(variant: str) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    convention = CONVENTION[variant]
    positions = np.array([[0, 3], [7, 1]])
    out = np.asarray(adapter.sinusoidal(positions, 8, convention=convention, options={}, dtype="float32"))
    reference = load_adapter("posenc_ref")
    want = np.asarray(reference.sinusoidal(positions, 8, convention=convention, options={}, dtype="float64"))
    assert out.shape == (2, 2, 8)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-6)


def test_phase_classes() -> None:
    """The float32 torch tables are products; VideoMAE's float64 NumPy table is exact, like XLM's."""
    for variant in ("ctrl", "canary", "zoedepth"):
        caps = load_adapter(f"transformers:{variant}").capabilities
        assert caps.phase_of("sinusoidal", "marian") == "product", variant
    assert load_adapter("transformers:videomae").capabilities.phase_of("sinusoidal", "vaswani") == "exact"


def test_canary_and_fun_asr_forward_read_the_mapped_table() -> None:
    """The columns take the tables their forward reads: Canary's divided by sqrt(d), Fun-ASR's from row 1."""
    import torch
    from transformers.models.canary.modeling_canary import CanaryPositionalEmbedding
    from transformers.models.fun_asr_nano.modeling_fun_asr_nano import FunAsrNanoPositionEmbedding

    canary = CanaryPositionalEmbedding(6, 8)
    ids = torch.tensor([0, 4, 2])
    table = canary.compute_default_singular_positional_embedding()
    torch.testing.assert_close(canary(ids), table[ids] / math.sqrt(8), rtol=0, atol=0)
    fun = FunAsrNanoPositionEmbedding(6, 8)
    table = fun.compute_default_singular_positional_embedding()
    torch.testing.assert_close(fun(torch.zeros(1, 4, 8)), table[1:5], rtol=0, atol=0)


@pytest.mark.parametrize(
    ("variant", "dim", "match"),
    [
        ("canary", 5, "rejects odd channels"),
        ("zoedepth", 5, "6 columns"),
        ("pegasus_x", 5, "raises RuntimeError"),
        ("fun_asr_nano", 7, "reject odd channels"),
    ],
)
def test_odd_widths_the_family_refuses_are_unsupported(variant: str, dim: int, match: str) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    with pytest.raises(Unsupported, match=match):
        adapter.sinusoidal(np.arange(3), dim, convention=CONVENTION[variant], options={}, dtype="float32")


def test_timesfm_takes_both_timescales_and_refuses_fractional_ones() -> None:
    adapter = load_adapter("transformers:timesfm")
    options = {"min_timescale": 2.0, "max_timescale": 1000.0}
    out = np.asarray(
        adapter.sinusoidal(np.arange(4), 6, convention="tensor2tensor", options=options, dtype="float32")
    )
    want = np.asarray(
        load_adapter("posenc_ref").sinusoidal(
            np.arange(4), 6, convention="tensor2tensor", options=options, dtype="float64"
        )
    )
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-6)
    with pytest.raises(Unsupported, match="integer timescales"):
        adapter.sinusoidal(
            np.arange(4), 6, convention="tensor2tensor", options={"min_timescale": 0.5}, dtype="float32"
        )


def test_timesfm_odd_width_failures_are_the_classified_bug() -> None:
    """Odd widths fail (F.pad pads the sequence axis); both failures are classified with the repro."""
    report = run(load_adapter("transformers:timesfm"), only=["sinusoidal"], xfails=load_xfails(XFAILS))
    failing = {r.result_id.partition("[")[0] for r in report.results if r.status == "fail"}
    assert failing <= set(TIMESFM_XFAILS), failing
    classification = json.loads(
        (ROOT / "docs" / "matrix" / "classification.json").read_text(encoding="utf-8")
    )
    entries = {e["match"]: e for e in classification["transformers:timesfm"]}
    assert set(entries) == set(TIMESFM_XFAILS)
    for entry in entries.values():
        assert entry["class"] == "bug"
        assert (ROOT / "docs" / entry["repro"]).is_file()
    assert "odd-dim-5" in XFAILS.read_text(encoding="utf-8")  # the comment naming the variant's xfails


def test_timesfm2_5_copy_is_listed_as_not_run() -> None:
    from transformers.models.timesfm2_5.configuration_timesfm2_5 import TimesFm2_5Config

    assert "timesfm2_5" in hf.NOT_RUN["sinusoidal"]
    assert hf.NOT_RUN["sinusoidal"] is hf.SINUSOID_NOT_RUN
    assert "sinusoidal" not in hf.ADAPTERS["timesfm2_5"].capabilities.functions  # its column is RoPE only
    assert not hasattr(TimesFm2_5Config(), "min_timescale")  # why the class cannot be built from its config
