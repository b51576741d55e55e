"""Mutation tests: deliberately wrong adapters, each a real bug from the reference notes, must be caught.

Every mutant wraps the correct posenc_ref adapter (NumPy) and breaks one thing
the way a real implementation did.  The suite must report at least one failing
result, and in particular the case(s) written to catch that bug.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run


class SwappedLayout(PosencRefAdapter):
    """cos/sin built and applied in the other layout (HF weights with Meta's rotation, transformers#25199)."""

    def rope_cos_sin(self, positions: Any, inv_freq: Any, *, layout: str, **kw: Any) -> Any:
        return super().rope_cos_sin(positions, inv_freq, layout=_other(layout), **kw)

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        return super().apply_rope(x, cos, sin, layout=_other(layout))


class Rope2dAxesSwapped(PosencRefAdapter):
    """2-D RoPE with the row and column ids exchanged (a [w, h] position grid where [h, w] is meant)."""

    def rope_2d_cos_sin(self, positions: Any, head_dim: int, **kw: Any) -> Any:
        return super().rope_2d_cos_sin(np.asarray(positions)[::-1].copy(), head_dim, **kw)


def _other(layout: str) -> str:
    return "interleaved" if layout == "half" else "half"


class Float32Positions(PosencRefAdapter):
    """Positions cast to float32 before the product (bf16/fp16/fp32 position ids, gpt-neox PR #1016)."""

    def rope_cos_sin(self, positions: Any, inv_freq: Any, **kw: Any) -> Any:
        rounded = np.asarray(positions).astype(np.float32).astype(np.int64)
        return super().rope_cos_sin(rounded, inv_freq, **kw)

    def sinusoidal(self, positions: Any, dim: int, **kw: Any) -> Any:
        return super().sinusoidal(np.asarray(positions).astype(np.float32).astype(np.int64), dim, **kw)


class NaiveFloat32Angles(PosencRefAdapter):
    """theta and m * theta in float32, as HF's float32 GEMM and vLLM's einsum compute them."""

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> Any:
        angles = np.asarray(positions).astype(np.float32)[..., None] * np.asarray(inv_freq, dtype=np.float32)
        cos, sin = np.cos(angles) * attention_factor, np.sin(angles) * attention_factor
        expand = (
            (lambda a: np.concatenate([a, a], -1)) if layout == "half" else (lambda a: np.repeat(a, 2, -1))
        )
        return expand(cos).astype(dtype), expand(sin).astype(dtype)


class YarnAlwaysTruncate(PosencRefAdapter):
    """YaRN correction range always floored/ceiled (vLLM before PR #28244; llama.cpp)."""

    def rope_frequencies(self, dim: int, *, scaling: Any, **kw: Any) -> Any:
        if scaling and scaling.get("rope_type") == "yarn":
            scaling = {**scaling, "truncate": True}
        return super().rope_frequencies(dim, scaling=scaling, **kw)


class AttentionFactorDropped(PosencRefAdapter):
    """An explicit or derived attention factor ignored (vLLM PR #46280, mlx-lm PR #1507)."""

    def rope_frequencies(self, dim: int, **kw: Any) -> Any:
        return super().rope_frequencies(dim, **kw)[0], 1.0

    def rope_cos_sin(self, positions: Any, inv_freq: Any, *, attention_factor: float, **kw: Any) -> Any:
        return super().rope_cos_sin(positions, inv_freq, attention_factor=1.0, **kw)


class YarnMscaleOnlyMlxLm(PosencRefAdapter):
    """mlx-lm's YarnRoPE: mscale without mscale_all_dim divides by get_mscale(s, 0) = 1."""

    def rope_frequencies(self, dim: int, *, scaling: Any, **kw: Any) -> Any:
        inv, factor = super().rope_frequencies(dim, scaling=scaling, **kw)
        if (
            scaling
            and scaling.get("rope_type") == "yarn"
            and scaling.get("mscale")
            and not scaling.get("mscale_all_dim")
            and scaling.get("attention_factor") is None
        ):
            s = scaling["factor"]
            factor = 0.1 * scaling["mscale"] * math.log(s) + 1.0
        return inv, factor


class Llama3ExclusiveBand(PosencRefAdapter):
    """mlx-lm's Llama3RoPE: strict bands; a wavelength equal to original/low_freq_factor stays unscaled."""

    def rope_frequencies(self, dim: int, *, base: float, scaling: Any, **kw: Any) -> Any:
        if not scaling or scaling.get("rope_type") != "llama3":
            return super().rope_frequencies(dim, base=base, scaling=scaling, **kw)
        factor, old = scaling["factor"], scaling["original_max_position_embeddings"]
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        inv = base ** (-np.arange(0, dim, 2) / dim)
        wavelen = 2 * math.pi / inv
        low_wl, high_wl = old / low, old / high
        out = np.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low) if high != low else np.zeros_like(inv)
        medium = (wavelen > high_wl) & (wavelen < low_wl)
        out = np.where(medium, (1 - smooth) * out / factor + smooth * out, out)
        return out.astype(kw["dtype"]), 1.0


class LongRopeGreaterEqual(PosencRefAdapter):
    """LongRoPE switches to long factors at seq_len >= original_max (unsloth PR #10681)."""

    def rope_frequencies(self, dim: int, *, scaling: Any, seq_len: Any, **kw: Any) -> Any:
        if (
            scaling
            and scaling.get("rope_type") == "longrope"
            and seq_len == scaling["original_max_position_embeddings"]
        ):
            seq_len += 1
        return super().rope_frequencies(dim, scaling=scaling, seq_len=seq_len, **kw)


class DynamicUsesOriginalMax(PosencRefAdapter):
    """Dynamic NTK divided by original_max_position_embeddings instead of max_position_embeddings."""

    def rope_frequencies(self, dim: int, *, scaling: Any, **kw: Any) -> Any:
        if (
            scaling
            and scaling.get("rope_type") == "dynamic"
            and "original_max_position_embeddings" in scaling
        ):
            scaling = {**scaling, "max_position_embeddings": scaling["original_max_position_embeddings"]}
        return super().rope_frequencies(dim, scaling=scaling, **kw)


class AlibiLinearExponent(PosencRefAdapter):
    """Slopes 2**(-8 i / H) for every head count (MLX before PR #3071)."""

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        return (2.0 ** (-max_bias * np.arange(1, num_heads + 1) / num_heads)).astype(dtype)


class AlibiSlopeOffByOne(PosencRefAdapter):
    """Slopes start at 2**0 = 1 instead of 2**(-8/n) (paiml/aprender PR #2143)."""

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        slopes = np.asarray(super().alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype))
        return slopes * 2.0 ** (max_bias / num_heads)


class CausalWhereSymmetric(PosencRefAdapter):
    """The row-identical causal ALiBi used without a causal mask (attention_with_linear_biases#5)."""

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        return super().alibi_bias(q_positions, k_positions, slopes, form="causal")


class FairseqOffsetMissing(PosencRefAdapter):
    """fairseq table rows indexed by the 0-based position: no padding_idx + 1 offset."""

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        if convention == "fairseq":
            positions = np.asarray(positions) - (options.get("padding_idx", 1) + 1)
        return super().sinusoidal(positions, dim, convention=convention, options=options, dtype=dtype)


class T2TFrequenciesForVaswani(PosencRefAdapter):
    """Interleaved layout with tensor2tensor's frequencies (t2t#1423: not a permutation of the paper's)."""

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        if convention != "vaswani" or dim % 2 or dim < 4:
            return super().sinusoidal(positions, dim, convention=convention, options=options, dtype=dtype)
        table = np.asarray(
            super().sinusoidal(positions, dim, convention="tensor2tensor", options={}, dtype=dtype)
        )
        half = dim // 2
        out = np.empty_like(table)
        out[..., 0::2], out[..., 1::2] = table[..., :half], table[..., half:]
        return out


class T5ZeroInUpperHalf(PosencRefAdapter):
    """Bidirectional T5 with ``relative >= 0`` instead of ``> 0``: distance 0 lands in the upper half."""

    def t5_bucket(self, relative: Any, *, bidirectional: bool, **kw: Any) -> Any:
        out = np.asarray(super().t5_bucket(relative, bidirectional=bidirectional, **kw))
        if bidirectional:
            out = np.where(np.asarray(relative) == 0, kw["num_buckets"] // 2, out)
        return out


class ShawBertSignFlipped(PosencRefAdapter):
    """HF BERT relative_key indexed with key - query (the tensor2tensor sign)."""

    def shaw_index(self, relative: Any, *, max_distance: Any, convention: str) -> Any:
        if convention == "bert":
            relative = -np.asarray(relative)
        return super().shaw_index(relative, max_distance=max_distance, convention=convention)


MUTANTS: list[tuple[type[PosencRefAdapter], str, Callable[[str], bool]]] = [
    (SwappedLayout, "rope", lambda i: i.startswith(("rope_cos_sin/", "apply_rope/", "rope/"))),
    (Float32Positions, "rope", lambda i: i.startswith("rope_cos_sin/") and "large-positions" in i),
    (NaiveFloat32Angles, "rope", lambda i: "large-positions" in i),
    (
        YarnAlwaysTruncate,
        "rope",
        lambda i: i in ("rope_frequencies/yarn/gpt-oss", "rope_frequencies/yarn/llama2-no-truncate"),
    ),
    (AttentionFactorDropped, "rope", lambda i: "gpt-oss" in i or "yarn-attention-factor" in i),
    (YarnMscaleOnlyMlxLm, "rope", lambda i: i == "rope_frequencies/yarn/mscale-only"),
    (Llama3ExclusiveBand, "rope", lambda i: i == "rope_frequencies/llama3/low-band-edge"),
    (LongRopeGreaterEqual, "rope", lambda i: i == "rope_frequencies/longrope/seq-len-4096"),
    (DynamicUsesOriginalMax, "rope", lambda i: i.startswith("rope_frequencies/dynamic/seq-len-")),
    (AlibiLinearExponent, "alibi", lambda i: i.startswith("alibi_slopes/max-bias-8/heads-") and i[-1] != "8"),
    (AlibiSlopeOffByOne, "alibi", lambda i: i.startswith("alibi_slopes/max-bias-8/heads-")),
    (CausalWhereSymmetric, "alibi", lambda i: i.startswith("alibi_bias/symmetric/")),
    (FairseqOffsetMissing, "sinusoidal", lambda i: i.startswith("sinusoidal/fairseq/")),
    (T2TFrequenciesForVaswani, "sinusoidal", lambda i: i.startswith("sinusoidal/vaswani/")),
    (T5ZeroInUpperHalf, "t5", lambda i: i.startswith("t5_bucket/bidirectional/")),
    (ShawBertSignFlipped, "shaw", lambda i: i == "shaw_index/bert/basic"),
    (Rope2dAxesSwapped, "rope_2d_cos_sin", lambda i: i.startswith("rope_2d_cos_sin/pixtral/")),
]


@pytest.mark.parametrize(("mutant", "scheme", "targeted"), MUTANTS, ids=[m[0].__name__ for m in MUTANTS])
def test_mutant_is_caught(
    mutant: type[PosencRefAdapter], scheme: str, targeted: Callable[[str], bool]
) -> None:
    report = run(mutant("numpy"), only=[scheme])
    failed = {r.id for r in report.results if r.status == "fail"}
    assert report.failed, f"{mutant.__name__} passed the whole {scheme} suite: {mutant.__doc__}"
    hit = sorted(i for i in failed if targeted(i))
    assert hit, f"{mutant.__name__} failed only {sorted(failed)[:10]}, not the cases written for it"


def test_the_unmutated_adapter_passes_every_targeted_scheme() -> None:
    report = run(PosencRefAdapter("numpy"), only=sorted({m[1] for m in MUTANTS}))
    assert not report.failed, [r.result_id for r in report.results if r.status == "fail"]


@pytest.mark.parametrize(("layouts", "status"), [(("half", "interleaved"), "pass"), (("half",), "skip")])
def test_layout_equivalence_needs_both_declared_layouts(layouts: tuple[str, ...], status: str) -> None:
    import dataclasses

    adapter = PosencRefAdapter("numpy")
    adapter.capabilities = dataclasses.replace(adapter.capabilities, layouts=layouts)
    results = {r.id: r.status for r in run(adapter, only=["rope"]).results}
    assert results["invariant/rope/layout-equivalence"] == status
