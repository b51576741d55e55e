"""The transformers adapter's T5-bucket columns: each family's own copy of T5's buckets and its variant.

For every family holding T5's bucket function (mT5, LongT5, UMT5, Pix2Struct, Switch Transformers,
Pop2Piano, MPNet, UDOP, LayoutLMv2/v3, PP-DocLayout-V2, WavLM, ProphetNet, CPM-Ant), its column declares
only the functions that family's code serves, passes them with no known failure beyond the adopter xfail
file, and runs that family's own code: shifting the copy's output turns a pass into a failure.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import load_xfails, run

XFAILS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "matrix" / "xfails" / "transformers.txt"
MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

_T5 = ("t5_bucket", "t5_bias")
_BUCKET = "t5_bucket/bidirectional/32-128-range[int]"
_BIAS = "t5_bias/bidirectional/32-128-range[float32]"
_CAUSAL_BIAS = "t5_bias/causal/32-128-range[float32]"

#: variant -> (declared functions, (module, attribute) to perturb, a case its pass depends on)
COLUMNS = {
    "mt5": (_T5, ("mt5", "MT5Attention"), _BIAS),
    "longt5": (_T5, ("longt5", "LongT5Attention"), _BIAS),
    "umt5": (_T5, ("umt5", "UMT5Attention"), _BIAS),
    "pix2struct": (_T5, ("pix2struct", "Pix2StructTextAttention"), _CAUSAL_BIAS),
    "switch_transformers": (_T5, ("switch_transformers", "SwitchTransformersAttention"), _BIAS),
    "pop2piano": (_T5, ("pop2piano", "Pop2PianoAttention"), _BIAS),
    "mpnet": (_T5, ("mpnet", "MPNetEncoder"), "t5_bias/bidirectional/block-of-70000[float32]"),
    "udop": (
        (*_T5, "t5_udop_bias"),
        ("udop", "RelativePositionBiasAggregated"),
        "t5_udop_bias/default[float64]",
    ),
    "layoutlmv2": (
        (*_T5, "t5_layout_bias"),
        ("layoutlmv2", "relative_position_bucket"),
        "t5_layout_bias/layoutlmv2/unscaled[float64]",
    ),
    "layoutlmv3": (
        (*_T5, "t5_layout_bias"),
        ("layoutlmv3", "LayoutLMv3Encoder"),
        "t5_layout_bias/layoutlmv3/base[float64]",
    ),
    "pp_doclayout_v2": (
        ("sincos_2d", *_T5, "t5_layout_bias"),
        ("pp_doclayout_v2", "PPDocLayoutV2ReadingOrderEncoder"),
        "t5_layout_bias/pp_doclayout_v2/one-d[float64]",
    ),
    "wavlm": ((*_T5, "t5_gated_bias"), ("wavlm", "WavLMAttention"), "t5_gated_bias/wavlm-base[float64]"),
    "prophetnet": (
        ("t5_bucket", "t5_stream_buckets"),
        ("prophetnet", "compute_all_stream_relative_buckets"),
        "t5_stream_buckets/default[int]",
    ),
    "cpmant": (
        (*_T5, "t5_segment_bias"),
        ("cpmant", "CpmAntSegmentPositionEmbedding"),
        "t5_segment_bias/cpmant-default[float64]",
    ),
}


def _perturbed(original):
    """The HF class (its ``forward``, or its bucket function) or function, its output plus one."""
    if isinstance(original, type):
        overrides = {}
        names = (
            "forward",
            "_relative_position_bucket",
            "relative_position_bucket",
            "_relative_positions_bucket",
        )
        for name in (*names, "_position_bucket"):
            if name in vars(original):
                method = getattr(original, name)
                if isinstance(vars(original)[name], staticmethod):
                    overrides[name] = staticmethod(lambda *a, _m=method, **k: _m(*a, **k) + 1)
                else:
                    overrides[name] = lambda self, *a, _m=method, **k: _m(self, *a, **k) + 1
        return type(original.__name__, (original,), overrides)

    def shifted(*args, **kwargs):
        out = original(*args, **kwargs)
        return tuple(o + 1 for o in out) if isinstance(out, tuple) else out + 1

    return shifted


def _failed(report) -> list[str]:
    return [f"{r.result_id}: {r.detail}" for r in report.results if r.status in ("fail", "xpass")]


def test_every_column_is_a_variant() -> None:
    assert set(COLUMNS) <= set(hf.ADAPTERS)


def test_the_default_column_keeps_t5_alone() -> None:
    adapter = load_adapter("transformers")
    assert adapter.supports("t5_bucket") and adapter.supports("t5_bias")
    assert not any(adapter.supports(f) for f in hf._FAMILY_ONLY)


@pytest.mark.parametrize("variant", sorted(COLUMNS))
def test_t5_column(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    functions, (module, attribute), must_pass = COLUMNS[variant]
    adapter = load_adapter(f"transformers:{variant}")
    assert set(functions) <= set(adapter.capabilities.functions or ())  # and the family's other schemes
    report = run(adapter, only=["t5"], xfails=load_xfails(XFAILS))
    assert not _failed(report), _failed(report)
    passed = {r.result_id.partition("/")[0] for r in report.results if r.status == "pass"} - {"invariant"}
    assert passed == set(functions) - {"sincos_2d"}
    statuses = {r.result_id: r.status for r in report.results}
    assert statuses[must_pass] == "pass"
    modeling = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    monkeypatch.setattr(modeling, attribute, _perturbed(getattr(modeling, attribute)))
    shifted = run(adapter, only=[must_pass.partition("/")[0]], xfails=load_xfails(XFAILS))
    assert {r.result_id: r.status for r in shifted.results}[must_pass] == "fail"
