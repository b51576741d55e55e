"""Diagnosis: every planted bug is named by the hypothesis that is its formula, and nothing else is named.

The planted bugs are the mutants of ``tests/test_precision_classes.py`` (the
plain product implementation with one thing broken) and ``tests/test_mutations.py``
(posenc_ref with one thing broken), each written from a real bug.  For each, the
report must name the bug on at least one of its failing results, and every name
it gives on any failing result must be the bug or a formula that is the same
thing on that case (listed here with the reason).  An implementation with
unstructured error (added noise) gets no name, only a description of where its
error lives.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import types
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import diagnosis
from posenc_ref_conformance.adapters.base import ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run

HERE = pathlib.Path(__file__).parent
PRODUCT = "the product precision class"


def _load(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"diagnosis_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


PRECISION = _load("test_precision_classes")
MUTATIONS = _load("test_mutations")

LAYOUT = "the other RoPE layout"
SLOPES = "slopes 2^(-8i/n)"
#: DeepSeek's YaRN is always truncated, and its attention factor is 1 where mscale equals
#: mscale_all_dim and 0.1 mscale ln(s) + 1 for a lone mscale: on such cases it *is* the
#: truncating, the factor-dropping and mlx-lm's formula.
DEEPSEEK = "DeepSeek's own YaRN"
#: The YaRN axes one at a time (variants.py): each is DeepSeek's YaRN on the cases the other agrees on.
DEEPSEEK_FACTOR = "YaRN with DeepSeek's attention factor"
TRUNCATE_IGNORED = "YaRN with truncate not read"
#: Planted bug -> (the text that names it, other texts that are the same formula on some cases: why).
NAMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "float16 positions": ("positions rounded to float16", ()),
    "bfloat16-like positions": ("positions rounded to float16", ()),  # the mutant is the float16 one
    "attention factor twice": ("attention factor applied twice", ()),
    "positions off by one": ("positions off by one (p + 1", ()),
    "int16 positions wrap": ("positions wrapped to int16", ()),
    "frequencies shifted": ("", ()),  # no real formula: named by nothing (the 10% allowance)
    "swapped layout": (LAYOUT, ()),
    "float16 trig": ("cos/sin computed in float16", ()),
    "sinusoidal float16 positions": (
        "",
        (),
    ),  # fails only past 65504, where float16 is inf (the mutant clamps)
    # the mutant *is* the tensor2tensor table; with dim 4 fairseq's frequencies are the same
    "t2t frequencies for vaswani": ("the tensor2tensor sinusoidal convention", ("the fairseq sinusoidal",)),
    "rotation by -theta": ("rotation by -theta", ()),
    "float16 inv_freq": ("inverse frequencies rounded to float16", ()),
    # a YaRN config whose frequencies equal the plain ones: dropping the factor = ignoring the scaling
    "yarn attention factor dropped": (
        "attention factor dropped (1.0 returned)",
        ("scaling ignored", DEEPSEEK, DEEPSEEK_FACTOR),
    ),
    "slopes 2**(-8i/n)": (SLOPES, ()),
    # float16 and bfloat16 round these slopes (powers of two) alike
    "float16 slopes in the bias": ("slopes rounded to float16", ("slopes rounded to bfloat16",)),
    "llama4 scale without floor": ("the floor dropped", ()),
    "padded ALiBi counts pads": ("padding ignored", ()),
    "t5_bias one bucket off": ("T5 bias rows one bucket off (bucket + 1)", ()),
    "kerple with the wrong sign": ("bias with the opposite sign", ()),
    "kerple r1 and r2 swapped": ("r1 and r2 swapped", ()),
    "sandwich frequencies from k = 0": ("Sandwich frequencies from k = 0", ()),
    "sandwich heads reversed": ("heads in reverse order", ()),
    "token positions ignore padding": ("padding ignored", ()),
    "token positions ignore the cache": ("the KV cache length ignored", ()),
    "shaw key term dropped": ("the key term dropped", ()),
    "bert table 2P + 1 rows": ("the other Shaw convention", ()),
    "own slopes 2**(-8i/n)": (SLOPES, ()),
    "fully masked rows uniform, undeclared": ("fully masked rows average v", ()),
    "SwappedLayout": (LAYOUT, ()),
    # positions rounded to float32 then multiplied in float64: within the product class's bound;
    # at 2**24 + 1 bfloat16 rounds the case's positions as float32 does (all to 2**24)
    "Float32Positions": ("positions rounded to float32", (PRODUCT, "positions rounded to bfloat16")),
    # at small positions ggml's successive float32 products agree with the direct one to the last bits
    "NaiveFloat32Angles": ("angles formed as float32 products", (PRODUCT, "angles by successive float32")),
    "YarnAlwaysTruncate": ("YaRN truncate ignored", (DEEPSEEK, TRUNCATE_IGNORED)),
    # where the config's factor only scales attention, the frequencies match the unscaled ones
    "AttentionFactorDropped": ("attention factor dropped", ("scaling ignored", DEEPSEEK, DEEPSEEK_FACTOR)),
    "YarnMscaleOnlyMlxLm": ("0.1 mscale ln(s) + 1", (DEEPSEEK, DEEPSEEK_FACTOR)),
    "Llama3ExclusiveBand": ("Llama 3 band edges exclusive", ()),
    "LongRopeGreaterEqual": ("switch one position early", ()),
    "DynamicUsesOriginalMax": ("dynamic NTK divided by original_max_position_embeddings", ()),
    "AlibiLinearExponent": (SLOPES, ()),
    "AlibiSlopeOffByOne": ("slopes off by one head", ()),
    "CausalWhereSymmetric": ("the other ALiBi form", ()),
    # fairseq without its offset is the tensor2tensor table; the float32 rounding at 2**24 is product-class
    "FairseqOffsetMissing": ("fairseq padding offset missing", ("the tensor2tensor sinusoidal", PRODUCT)),
    "T2TFrequenciesForVaswani": ("interleaved [sin, cos] pairs with tensor2tensor's frequencies", ()),
    "T5ZeroInUpperHalf": ("distance 0 in the upper half", ()),
    "ShawBertSignFlipped": ("relative positions with the opposite sign", ()),
    "Rope2dAxesSwapped": ("2-D RoPE rows and columns swapped", ()),
}


def _planted() -> list[tuple[str, Any, str]]:
    found = [(name, PRECISION._mutant(name, **fns), only) for name, fns, only, _ in PRECISION.MUTANTS]
    found += [(cls.__name__, cls(), only) for cls, only, _ in MUTATIONS.MUTANTS]
    return found


def _diagnosed(adapter: Any, only: str) -> list[Any]:
    with np.errstate(all="ignore"):  # some mutants overflow float16 on purpose
        report = run(adapter, only=[only], invariants=False)
    return [r for r in report.results if r.status == "fail"]


def test_every_planted_bug_has_its_expected_name() -> None:
    planted = {name for name, _, _ in _planted()}
    assert planted == set(NAMES), planted ^ set(NAMES)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("name", "adapter", "only"), _planted(), ids=[p[0] for p in _planted()])
def test_a_planted_bug_is_named_and_nothing_else_is(name: str, adapter: Any, only: str) -> None:
    expected, equivalent = NAMES[name]
    failing = _diagnosed(adapter, only)
    assert failing, f"{name} fails nothing"
    given = {text for r in failing for text in r.diagnosis}
    wrong = {t for t in given if not t.startswith(expected or "\0") and expected not in t}
    wrong = {t for t in wrong if not any(e in t for e in equivalent)}
    assert not wrong, f"{name}: named {sorted(wrong)}"
    if expected:
        assert any(expected in t for t in given), (
            f"{name}: not named; structures {[r.structure for r in failing][:3]}"
        )
    else:
        assert not given


def test_at_least_90_percent_of_planted_bugs_are_named() -> None:
    named = sum(1 for expected, _ in NAMES.values() if expected)
    assert named / len(NAMES) >= 0.9


class Noisy(PosencRefAdapter):
    """posenc_ref with relative noise of about 1e-3 added to every float output: no bug shape."""

    def _noise(self, value: Any) -> Any:
        a = np.asarray(value)
        rng = np.random.default_rng(a.size)
        return (a * (1 + 1e-3 * rng.standard_normal(a.shape))).astype(a.dtype)

    def rope_cos_sin(self, *args: Any, **kw: Any) -> Any:
        return tuple(self._noise(v) for v in super().rope_cos_sin(*args, **kw))

    def sinusoidal(self, *args: Any, **kw: Any) -> Any:
        return self._noise(super().sinusoidal(*args, **kw))

    def alibi_bias(self, *args: Any, **kw: Any) -> Any:
        return self._noise(super().alibi_bias(*args, **kw))


def test_unstructured_error_is_named_by_nothing_and_described() -> None:
    """Noise of 1e-3 is no bug shape; only at large positions is it within the float32 product bound.

    There (flag LargePosition) the float32 product class's own error is larger than the noise,
    so that class truly explains the output, and saying so is right.
    """
    failing = [r for only in ("rope_cos_sin", "sinusoidal", "alibi_bias") for r in _diagnosed(Noisy(), only)]
    assert len(failing) > 20
    named = {(r.result_id, t) for r in failing for t in r.diagnosis}
    large = {r.result_id for r in failing if "LargePosition" in r.flags}
    assert all(t.startswith(PRODUCT) and rid in large for rid, t in named), named
    described = [r for r in failing if r.structure]
    assert len(described) > 0.9 * len(failing)
    assert all("relative" in r.structure and "absolute error" in r.structure for r in described)


def test_a_float32_product_with_no_declaration_fails_naming_the_product_class() -> None:
    module = PRECISION._plain()
    module.CAPABILITIES = {"invalid_inputs": False}  # phase undeclared: judged exact
    report = run(ModuleAdapter(module, name="plain, undeclared"), only=["rope_cos_sin"], invariants=False)
    failing = [r for r in report.results if r.status == "fail"]
    assert report.verdict == "FAIL" and failing
    assert all(r.diagnosis and r.diagnosis[0].startswith(PRODUCT) for r in failing), [
        (r.result_id, r.diagnosis, r.detail) for r in failing if not r.diagnosis
    ]
    assert all('declare "phase": "product"' in r.diagnosis[0] for r in failing)
    module.CAPABILITIES = {"invalid_inputs": False, "phase": "product"}
    declared = run(ModuleAdapter(module, name="plain, product"), only=["rope_cos_sin"], invariants=False)
    assert declared.verdict == "PASS"


def test_a_failure_is_located_in_the_data_own_terms() -> None:
    failing = _diagnosed(MUTATIONS.SwappedLayout(), "rope_cos_sin")
    case = next(r for r in failing if r.id == "rope_cos_sin/half/batched-offsets")
    worst = case.where[0]
    assert set(worst["at"]) == {"batch", "position", "channel", "pair"}
    assert worst["position"] is not None and worst["error"] > worst["allowed"]
    assert worst["output"] in ("cos", "sin")


def test_bfloat16_rounds_to_nearest_even() -> None:
    values = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-20, -(2.0**100)])
    np.testing.assert_array_equal(
        diagnosis.round_to(values, "bfloat16"), [1.0, 1 + 2.0**-6, 1 + 2.0**-7, -(2.0**100)]
    )


def test_the_error_structure_names_axes_and_growth() -> None:
    positions = np.arange(8)
    expected = np.ones((8, 4))
    actual = expected.copy()
    actual[:, 2] += 1e-6 * positions**2
    failing = np.abs(actual - expected) > 1e-9
    text = diagnosis.describe_structure(
        "rope_cos_sin", "cos", {"positions": positions}, actual, expected, failing
    )
    assert "only at channel 2 of 0-3" in text and "growing with position" in text


class _Variant(PosencRefAdapter):
    """posenc_ref, except that one scaling type computes a named variant's formula (the oracle's)."""

    key, topic, variant = "", "", ""

    def rope_frequencies(self, dim: int, **kw: Any) -> Any:
        scaling = kw.get("scaling") or {}
        if scaling.get("rope_type") != self.topic:
            return super().rope_frequencies(dim, **kw)
        from posenc_ref_conformance import variants
        from posenc_ref_conformance.golden.cases import FUNCTIONS

        inputs = {"dim": dim, "base": kw["base"], "scaling": scaling, "seq_len": kw["seq_len"]}
        choice = variants.choice_of(self.key, self.variant)
        out = FUNCTIONS["rope_frequencies"].variants[self.topic](choice)(inputs)
        inv = np.array([float(v) for v in out["inv_freq"]]).astype(kw["dtype"])
        return inv, float(out["attention_factor"])


@pytest.mark.parametrize(("key", "variant"), list(diagnosis.VARIANT_TEXTS))
def test_an_undeclared_variant_is_named_with_its_declaration(key: str, variant: str) -> None:
    from posenc_ref_conformance import variants

    fields = {"key": key, "topic": variants.topic_of(key), "variant": variant}
    adapter = type(f"{key}_{variant}", (_Variant,), fields)()
    failing = [r for r in _diagnosed(adapter, "rope_frequencies") if r.where]
    assert failing, f"the {key}:{variant} formula fails no canonical case"
    declaration = f'declare variants {{"{key}": "{variant}"}}'
    named = [r for r in failing if any(declaration in t for t in r.diagnosis)]
    assert named, [(r.result_id, r.diagnosis, r.structure) for r in failing][:3]


def test_a_partial_rotary_channel_names_its_pair_and_a_pass_through_channel_none() -> None:
    inputs = {"x": np.zeros((3, 12)), "positions": np.arange(3), "inv_freq": np.ones(4), "layout": "half"}
    rotated, passed = diagnosis.locate(
        "rope", "out", inputs, (3, 12), [(4, 0.0, 0.0, 1.0, 0.0), (9, 0.0, 0.0, 1.0, 0.0)]
    )
    assert rotated["at"] == {"position": 0, "channel": 4, "pair": 0}  # channels 0 and 4 of r = 8
    assert passed["at"] == {"position": 0, "channel": 9}


def test_a_hypothesis_that_raises_does_not_apply_and_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    boom = diagnosis.Hypothesis("boom", ("apply_rope",), lambda s: 1 / 0)
    monkeypatch.setattr(diagnosis, "HYPOTHESES", (boom, *diagnosis.HYPOTHESES))
    (case,) = [
        r
        for r in _diagnosed(PRECISION._mutant("-theta", apply_rope=PRECISION._apply_conjugate), "apply_rope")
        if r.id == "apply_rope/half/full-d8" and r.dtype == "float32"
    ]
    assert case.diagnosis == ("rotation by -theta (sin negated)",) and case.where


def test_outputs_too_large_are_said_to_be_undiagnosed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnosis, "MAX_ELEMENTS", 4)
    failing = _diagnosed(PRECISION._mutant("-theta", apply_rope=PRECISION._apply_conjugate), "apply_rope")
    located = [r for r in failing if r.where]
    assert located and all(not r.diagnosis and r.structure.startswith("not diagnosed (") for r in located)
