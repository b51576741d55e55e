"""A RoPE that drops YaRN's attention factor: what an export of a YaRN model catches.

Run:  posenc-ref check docs/examples/no_attention_factor_adapter.py --golden DIR

It is the reference implementation with one bug planted: the attention factor that
YaRN (and LongRoPE) multiply cos and sin by is taken as 1, as a port does that reads
the scaled frequencies from the config but not the magnitude.  For a model without
such a factor (Mistral, Llama 3.1) it is correct.
"""

from __future__ import annotations

from typing import Any

from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter


class NoAttentionFactor(PosencRefAdapter):
    """posenc_ref on NumPy, with every attention factor replaced by 1."""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "name": "no-attention-factor"}

    def rope_frequencies(self, dim: int, **options: Any) -> Any:
        inv_freq, _dropped = super().rope_frequencies(dim, **options)
        return inv_freq, 1.0

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, **options: Any
    ) -> Any:
        return super().rope_cos_sin(
            positions, inv_freq, attention_factor=1.0, **options
        )


ADAPTER = NoAttentionFactor()
