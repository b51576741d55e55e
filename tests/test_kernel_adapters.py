"""The vLLM and ggml adapters: their glue without the libraries, and their matrix where installed.

The glue (``posenc_ref_conformance.adapters._kernel``, ggml's frequency divisors and
YaRN magnitude, vLLM's parameter mapping) is tested against the mpmath oracle.  The
libraries themselves live in heavy venvs (``scripts/matrix/setup_*.sh``); where one is
installed, ``TestMatrix`` runs the whole suite against it with the published xfail
file (``docs/matrix/xfails/``) and requires no failure and no stale entry.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np
import pytest

from posenc_ref_conformance import oracle
from posenc_ref_conformance.adapters import AdapterError, Unsupported, _kernel, load_adapter
from posenc_ref_conformance.adapters import ggml as ggml_adapter
from posenc_ref_conformance.adapters import vllm as vllm_adapter
from posenc_ref_conformance.adapters.base import CANONICAL_FUNCTIONS
from posenc_ref_conformance.runner import load_xfails, run

ROOT = pathlib.Path(__file__).resolve().parents[1]
L31 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


def _oracle_freqs(dim: int, base: float, scaling: dict | None = None) -> tuple[np.ndarray, float]:
    with oracle.working_precision():
        inv, factor = oracle.rope.rope_frequencies(dim, base=base, scaling=scaling)
        return np.array([oracle.round_float64(t) for t in inv]), oracle.round_float64(factor)


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class TestLoading:
    @pytest.mark.parametrize(
        ("spec", "module", "script"),
        [
            ("vllm", "vllm", "setup_vllm.sh"),
            ("vllm:native", "vllm", "setup_vllm.sh"),
            ("ggml", "ggml", "setup_ggml.sh"),
        ],
    )
    def test_missing_library_names_the_setup_script(self, spec: str, module: str, script: str) -> None:
        if _installed(module):
            pytest.skip(f"{module} is installed here")
        with pytest.raises(AdapterError, match=rf"^adapter '{spec}' needs .*{script}"):
            load_adapter(spec)

    @pytest.mark.parametrize(
        "adapter",
        [
            vllm_adapter.VllmAdapter,
            vllm_adapter.NativeAdapter,
            vllm_adapter.DeepseekAdapter,
            ggml_adapter.GgmlAdapter,
        ],
        ids=["vllm", "vllm:native", "vllm:deepseek", "ggml"],
    )
    def test_declares_canonical_functions_each_with_a_note(self, adapter) -> None:
        """What each adapter declares is readable without the library: canonical names, a note for each."""
        declared = adapter.capabilities.functions
        assert declared and set(declared) <= set(CANONICAL_FUNCTIONS)
        assert set(declared) <= set(adapter.capabilities.notes), set(declared) - set(
            adapter.capabilities.notes
        )


class TestKernelGlue:
    def test_default_base_recovers_the_base(self) -> None:
        inv, _ = _oracle_freqs(16, 500000.0)
        assert math.isclose(_kernel.default_base(inv), 500000.0, rel_tol=1e-9)

    def test_default_base_rejects_scaled_frequencies(self) -> None:
        inv, _ = _oracle_freqs(128, 500000.0, L31)
        assert _kernel.default_base(inv) is None
        assert _kernel.default_base(np.array([1.0])) is None

    @pytest.mark.parametrize("layout", ["half", "interleaved"])
    def test_pair_table_and_values_invert(self, layout: str) -> None:
        with oracle.working_precision():
            cos, _ = oracle.rope.rope_cos_sin([0, 3, 9], _oracle_freqs(8, 10000.0)[0], layout=layout)
            table = np.array([[oracle.round_float64(v) for v in row] for row in cos])
        pairs = _kernel.pair_values(table, layout, "cos")
        assert pairs.shape == (3, 4)
        np.testing.assert_array_equal(_kernel.pair_table(pairs, layout), table)

    def test_pair_values_rejects_per_channel_tables(self) -> None:
        with pytest.raises(Unsupported, match=r"^cos differs within a pair"):
            _kernel.pair_values(np.arange(8.0)[None, :], "half", "cos")

    @pytest.mark.parametrize("layout", ["half", "interleaved"])
    def test_unit_pairs_read_back_cos_and_sin(self, layout: str) -> None:
        """An exact rotation (the oracle's) of unit pairs returns its cos and sin tables."""
        inv, _ = _oracle_freqs(8, 10000.0)
        rows = _kernel.unit_pairs(2, 10, 8, layout)
        with oracle.working_precision():
            cos, sin = oracle.rope.rope_cos_sin([5, 77], inv, layout=layout)
            out = np.array(
                [
                    [
                        oracle.round_float64(v)
                        for v in oracle.rope.apply_rope(
                            [float(v) for v in rows[t, 0]], cos[t], sin[t], layout=layout
                        )
                    ]
                    for t in range(2)
                ]
            )
            want_cos = np.array([[oracle.round_float64(v) for v in row] for row in cos])
            want_sin = np.array([[oracle.round_float64(v) for v in row] for row in sin])
        got_cos, got_sin = _kernel.read_pairs(out, 8, layout)
        np.testing.assert_array_equal(_kernel.pair_table(got_cos, layout), want_cos)
        np.testing.assert_array_equal(_kernel.pair_table(got_sin, layout), want_sin)
        np.testing.assert_array_equal(out[:, 8:], 0.0)  # channels past rotary_dim pass through

    def test_to_tokens_keeps_heads(self) -> None:
        x = np.arange(2 * 3 * 4 * 8, dtype=np.float64).reshape(2, 3, 4, 8)  # [B, H, L, D]
        rows, pos, back = _kernel.to_tokens(x, np.array([10, 11, 12, 13]))
        assert rows.shape == (8, 3, 8)
        np.testing.assert_array_equal(rows[5, 2], x[1, 2, 1])  # token 5 = batch 1, position index 1
        np.testing.assert_array_equal(pos, [10, 11, 12, 13, 10, 11, 12, 13])
        np.testing.assert_array_equal(back(rows), x)

    def test_to_tokens_broadcasts_positions_per_row(self) -> None:
        x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
        positions = np.array([[0, 1, 2], [40, 41, 42]])
        rows, pos, back = _kernel.to_tokens(x, positions)
        assert rows.shape == (6, 1, 4)
        np.testing.assert_array_equal(pos, positions.reshape(-1))
        np.testing.assert_array_equal(back(rows), x)


class TestGgmlGlue:
    def test_default_frequencies_need_no_divisors(self) -> None:
        base, divisors = ggml_adapter.frequency_divisors(_oracle_freqs(64, 10000.0)[0])
        assert math.isclose(base, 10000.0, rel_tol=1e-9)
        assert divisors is None

    def test_divisors_reproduce_llama3_frequencies(self) -> None:
        inv, _ = _oracle_freqs(128, 500000.0, L31)
        base, divisors = ggml_adapter.frequency_divisors(inv)
        assert math.isclose(base, 500000.0, rel_tol=1e-9)  # the high-frequency pairs are unscaled
        own = base ** (-np.arange(0, 128, 2) / 128)
        np.testing.assert_allclose(own / divisors.astype(np.float64), inv, rtol=2.0**-24, atol=0)

    def test_zero_frequencies_get_infinite_divisors(self) -> None:
        inv, _ = _oracle_freqs(16, 10000.0, {"rope_type": "proportional", "partial_rotary_factor": 0.5})
        _, divisors = ggml_adapter.frequency_divisors(inv)
        assert np.all(np.isinf(divisors[inv == 0])) and np.all(np.isfinite(divisors[inv > 0]))

    @pytest.mark.parametrize(
        "extra",
        [
            {"factor": 64.0, "attention_factor": 1.0},
            {"factor": 16.0, "mscale": 1.0, "mscale_all_dim": 0.5},
            {"factor": 8.0},
        ],
        ids=["attention-factor", "mscale-ratio", "default"],
    )
    def test_yarn_magnitude_matches_hf(self, extra: dict) -> None:
        """attn_factor times the kernel's own 1 + 0.1 ln(factor) is HF's attention factor."""
        scaling = {"rope_type": "yarn", "original_max_position_embeddings": 4096, **extra}
        params = ggml_adapter._scaling_params(64, scaling, None)
        kernel = 1.0 + 0.1 * math.log(extra["factor"])
        want = _oracle_freqs(64, 10000.0, scaling)[1]
        assert math.isclose(params["attn_factor"] * kernel, want, rel_tol=1e-15)
        assert params["freq_scale"] == 1.0 / extra["factor"] and params["ext_factor"] == 1.0

    def test_yarn_without_truncation_is_unsupported(self) -> None:
        scaling = {
            "rope_type": "yarn",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "truncate": False,
        }
        with pytest.raises(Unsupported, match="floors/ceils"):
            ggml_adapter._scaling_params(64, scaling, None)

    def test_longrope_picks_factors_by_context(self) -> None:
        scaling = {
            "rope_type": "longrope",
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
            "short_factor": [1.0] * 4,
            "long_factor": [2.0] * 4,
        }
        assert ggml_adapter._scaling_params(8, scaling, 4096)["divisors"][0] == 1.0
        long = ggml_adapter._scaling_params(8, scaling, 4097)
        assert long["divisors"][0] == 2.0
        assert math.isclose(long["attn_factor"], math.sqrt(1 + math.log(32) / math.log(4096)), rel_tol=1e-15)


class TestVllmGlue:
    def test_legacy_type_key(self) -> None:
        kind, params = vllm_adapter._rope_parameters(500000.0, {"type": "linear", "factor": 2.0})
        assert kind == "linear"
        assert params == {"rope_theta": 500000.0, "rope_type": "linear", "factor": 2.0}

    def test_default(self) -> None:
        assert vllm_adapter._rope_parameters(10000.0, None) == (
            "default",
            {"rope_theta": 10000.0, "rope_type": "default"},
        )


MATRIX = [
    ("vllm", "vllm", "vllm.txt"),
    ("vllm:native", "vllm", "vllm_native.txt"),
    ("ggml", "ggml", "ggml.txt"),
]


@pytest.mark.filterwarnings("ignore")  # the libraries' own warnings (vLLM's complex-cache cast is a finding)
@pytest.mark.parametrize(("spec", "module", "xfails"), MATRIX, ids=[m[0] for m in MATRIX])
def test_matrix_xfails_are_exact(spec: str, module: str, xfails: str) -> None:
    """Every failure of the library is in its published xfail file, and every entry still fails.

    The spec runs in its own process, as ``posenc-ref check`` runs it: vLLM's CPU op can abort
    the process on a rope_dim above the head size (a classified bug), which must fail that case only.
    """
    if not _installed(module):
        pytest.skip(f"{module} is not installed (scripts/matrix/setup_{module}.sh VENV installs it)")
    xfail_ids = load_xfails(ROOT / "docs/matrix/xfails" / xfails)
    report = run(spec, only={"rope"}, xfails=xfail_ids, timeout=300)
    failures = [r.result_id for r in report.results if r.status == "fail"]
    passing = [r.result_id for r in report.results if r.status == "xpass"]
    assert not failures, f"{spec}: failures missing from {xfails}: {failures}"
    assert not passing and not report.stale_xfails, f"{spec}: stale entries {passing} {report.stale_xfails}"
