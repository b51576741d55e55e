"""rope_config_from_hf on real model config.json excerpts (tests/data/hf_configs)."""

from __future__ import annotations

import json
import math
import pathlib
import re
from typing import Any

import pytest

from posenc_ref import RopeConfig, rope_config_from_hf
from posenc_ref._compat import has_float64
from tests.helpers import assert_close, to_numpy

CONFIGS = pathlib.Path(__file__).parent / "data" / "hf_configs"


def load(name: str) -> dict[str, Any]:
    return json.loads((CONFIGS / f"{name}.json").read_text())


# What each config must resolve to, from the values in the file and HF's rules (head_dim, theta, scaling).
EXPECTED = {
    "llama3_1_8b": (128, 500000.0, "llama3", 1.0),
    "llama3_1_8b_v5": (128, 500000.0, "llama3", 1.0),
    "qwen2_5_7b_instruct_yarn": (128, 1e6, "yarn", 0.1 * math.log(4.0) + 1),
    "gpt_oss_20b": (64, 150000.0, "yarn", 0.1 * math.log(32.0) + 1),
    "deepseek_v3": (64, 10000.0, "yarn", 1.0),  # mscale == mscale_all_dim: ratio 1
    "phi3_mini_128k_instruct": (96, 10000.0, "longrope", math.sqrt(1 + math.log(32) / math.log(4096))),
    "phi3_5_mini_instruct": (96, 10000.0, "longrope", math.sqrt(1 + math.log(32) / math.log(4096))),
    "gemma_7b": (256, 10000.0, "default", 1.0),
    "mistral_7b_v0_3": (128, 1e6, "default", 1.0),
    "phi_2": (32, 10000.0, "default", 1.0),  # int(80 * 0.4)
}


class TestRopeConfigFromHf:
    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_resolves(self, name: str) -> None:
        dim, base, rope_type, attention_factor = EXPECTED[name]
        cfg = rope_config_from_hf(load(name))
        assert isinstance(cfg, RopeConfig)
        assert (cfg.dim, cfg.base, cfg.rope_type) == (dim, base, rope_type)
        assert cfg.scaling["rope_type"] == rope_type and "type" not in cfg.scaling
        assert cfg.frequencies().attention_factor == pytest.approx(attention_factor, rel=1e-15)

    def test_llama3_1(self) -> None:
        cfg = rope_config_from_hf(load("llama3_1_8b"))
        assert cfg.scaling == {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        }
        assert cfg.max_position_embeddings == 131072 and cfg.head_dim == 128

    def test_v4_and_v5_agree(self, xp: Any) -> None:
        v4 = rope_config_from_hf(load("llama3_1_8b")).frequencies(xp=xp)
        v5 = rope_config_from_hf(load("llama3_1_8b_v5")).frequencies(xp=xp)
        assert_close(v5.inv_freq, to_numpy(v4.inv_freq), xp=xp, rtol=0, atol=0)

    def test_gpt_oss_head_dim_and_truncate(self) -> None:
        cfg = rope_config_from_hf(load("gpt_oss_20b"))
        assert cfg.head_dim == 64  # not hidden_size // heads = 45
        assert cfg.scaling["truncate"] is False
        assert cfg.scaling["max_position_embeddings"] == 131072

    def test_deepseek_rope_head_dim(self) -> None:
        cfg = rope_config_from_hf(load("deepseek_v3"))
        assert (cfg.head_dim, cfg.dim) == (64, 64)  # qk_rope_head_dim, not 7168 // 128
        assert cfg.scaling["factor"] == 40 and cfg.scaling["mscale_all_dim"] == 1.0

    def test_qwen_legacy_type(self) -> None:
        cfg = rope_config_from_hf(load("qwen2_5_7b_instruct_yarn"))
        assert cfg.scaling == {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
            "max_position_embeddings": 32768,
        }

    @pytest.mark.parametrize("name", ["phi3_mini_128k_instruct", "phi3_5_mini_instruct"])
    def test_phi3_longrope_switch(self, xp: Any, name: str) -> None:
        config = load(name)
        cfg = rope_config_from_hf(config)
        assert cfg.scaling["original_max_position_embeddings"] == 4096  # the top-level key
        short = config["rope_scaling"]["short_factor"]
        long = config["rope_scaling"]["long_factor"]
        thetas = [10000.0 ** (-2 * i / 96) for i in range(48)]
        tol = {"rtol": 1e-14} if has_float64(xp) else {}
        for seq_len, factors in ((None, short), (4096, short), (4097, long)):
            freqs = cfg.frequencies(seq_len, xp=xp)
            assert_close(freqs.inv_freq, [t / f for t, f in zip(thetas, factors, strict=True)], xp=xp, **tol)

    def test_top_level_original_max_wins(self) -> None:
        config = load("phi3_mini_128k_instruct")
        config["rope_scaling"] = {**config["rope_scaling"], "original_max_position_embeddings": 8192}
        assert rope_config_from_hf(config).scaling["original_max_position_embeddings"] == 4096

    def test_phi3_su_alias(self) -> None:
        config = load("phi3_mini_128k_instruct")
        config["rope_scaling"] = {**config["rope_scaling"], "type": "su"}
        assert rope_config_from_hf(config).rope_type == "longrope"

    def test_qwen2_vl_mrope(self) -> None:
        # HF v4 Qwen2VLConfig rewrites "mrope" to "default"; v5 keeps "default" plus mrope_section.
        v4 = {"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1e6}
        v4["rope_scaling"] = {"type": "mrope", "mrope_section": [16, 24, 24]}
        v5 = {"hidden_size": 3584, "num_attention_heads": 28}
        v5["rope_parameters"] = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}
        for config in (v4, v5):
            cfg = rope_config_from_hf(config)
            assert (cfg.dim, cfg.base, cfg.scaling) == (128, 1e6, {"rope_type": "default"})

    def test_gemma3_per_layer(self, xp: Any, device: Any) -> None:
        config = load("gemma3_4b_v5")
        full = rope_config_from_hf(config, layer_type="full_attention")
        local = rope_config_from_hf(config, layer_type="sliding_attention")
        assert (full.dim, full.base, full.scaling) == (256, 1e6, {"rope_type": "linear", "factor": 8.0})
        assert (local.dim, local.base, local.scaling) == (256, 10000.0, {"rope_type": "default"})
        freqs = full.frequencies(xp=xp, device=device)
        expected = [1e6 ** (-2 * i / 256) / 8 for i in range(128)]
        tol = {"rtol": 1e-14} if has_float64(xp) else {}
        assert_close(freqs.inv_freq, expected, xp=xp, device=device, **tol)

    def test_partial_rotary(self) -> None:
        cfg = rope_config_from_hf(load("phi_2"))
        assert (cfg.head_dim, cfg.dim) == (80, 32)
        proportional = {
            "head_dim": 256,
            "rope_parameters": {
                "rope_type": "proportional",
                "rope_theta": 1e6,
                "partial_rotary_factor": 0.25,
            },
        }
        cfg = rope_config_from_hf(proportional)
        assert (cfg.dim, cfg.scaling["partial_rotary_factor"]) == (256, 0.25)
        inv = to_numpy(cfg.frequencies().inv_freq)
        assert inv.shape == (128,) and (inv[32:] == 0).all() and (inv[:32] > 0).all()

    def test_dynamic_reads_max_position_embeddings(self) -> None:
        config = {"hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 2048}
        config["rope_scaling"] = {"type": "dynamic", "factor": 2.0}
        cfg = rope_config_from_hf(config)
        assert cfg.scaling == {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 2048}
        below, above = cfg.frequencies(1000), cfg.frequencies(4096)
        assert to_numpy(below.inv_freq)[-1] == pytest.approx(10000.0 ** (-30 / 32), rel=1e-15)
        assert to_numpy(above.inv_freq)[-1] < to_numpy(below.inv_freq)[-1]

    def test_defaults(self) -> None:
        cfg = rope_config_from_hf({"hidden_size": 512, "num_attention_heads": 8})
        assert (cfg.dim, cfg.base, cfg.scaling, cfg.max_position_embeddings) == (
            64,
            10000.0,
            {"rope_type": "default"},
            None,
        )

    @pytest.mark.parametrize(
        ("config", "pattern"),
        [
            ({"head_dim": 64, "rope_theta": 0}, r"^config\['rope_theta'\] must be > 1\.0; got 0\.0"),
            (
                {"head_dim": 64, "rope_scaling": {"rope_theta": 0}},
                r"^config\['rope_scaling'\]\['rope_theta'\] must be > 1",
            ),
            (
                {"head_dim": 64, "partial_rotary_factor": 0},
                r"^config\['partial_rotary_factor'\] must be > 0\.0",
            ),
            (
                {"head_dim": 64, "rope_parameters": {"partial_rotary_factor": 0.0}},
                r"^config\['rope_parameters'\]\['partial_rotary_factor'\] must be > 0",
            ),
            ({"head_dim": 0}, r"^config\['head_dim'\] must be a positive integer; got 0"),
            (
                {"head_dim": 64, "max_position_embeddings": 0},
                r"^config\['max_position_embeddings'\] must be a positive integer",
            ),
            (
                {"head_dim": 64, "rope_scaling": {"rope_type": ""}},
                r"^config\['rope_scaling'\]\['rope_type'\] must be one of",
            ),
            (
                {"head_dim": 64, "partial_rotary_factor": 0.01},
                r"^config\['partial_rotary_factor'\] must be a value that rotates an even",
            ),
        ],
    )
    def test_zero_is_an_error_never_a_default(self, config: Any, pattern: str) -> None:
        # main: `x or default` read rope_theta 0 as 10000 and partial_rotary_factor 0 as 1.0
        with pytest.raises(ValueError, match=pattern):
            rope_config_from_hf(config)

    def test_missing_and_null_keys_take_the_defaults(self) -> None:
        for config in ({"head_dim": 64}, {"head_dim": 64, "rope_theta": None, "partial_rotary_factor": None}):
            cfg = rope_config_from_hf(config)
            assert (cfg.dim, cfg.base, cfg.rope_type) == (64, 10000.0, "default")

    def test_a_config_built_by_hand_is_validated(self) -> None:
        with pytest.raises(ValueError, match=r"^base must be > 1\.0; got 0\.5"):
            RopeConfig(dim=8, head_dim=8, base=0.5, scaling={"rope_type": "default"})
        with pytest.raises(ValueError, match=r"^dim must be an integer <= 8"):
            RopeConfig(dim=16, head_dim=8, base=1e4, scaling={"rope_type": "default"})
        with pytest.raises(ValueError, match=r"^scaling must be a mapping that contains 'factor'"):
            RopeConfig(dim=8, head_dim=8, base=1e4, scaling={"rope_type": "linear"})

    @pytest.mark.parametrize(
        ("config", "kwargs", "error", "match"),
        [
            ([("hidden_size", 8)], {}, TypeError, r"^config must be a mapping"),
            ({"num_attention_heads": 8}, {}, ValueError, r"^config must be a mapping with 'head_dim' or"),
            (
                {"head_dim": 64, "rope_scaling": {"type": "ntk-by-parts"}},
                {},
                ValueError,
                r"^config\['rope_scaling'\]\['rope_type'\] must be one of",
            ),
            (
                {"head_dim": 64, "partial_rotary_factor": 1.5},
                {},
                ValueError,
                r"^config\['partial_rotary_factor'\] must be <= 1.0",
            ),
            (
                {"head_dim": 64, "rope_scaling": {"type": "linear"}},
                {},
                ValueError,
                r"^config\['rope_scaling'\] must be a mapping that contains 'factor'",
            ),
            (
                {"head_dim": 64, "rope_scaling": "linear"},
                {},
                TypeError,
                r"^config\['rope_scaling'\] must be a mapping",
            ),
            (
                "gemma3_4b_v5",
                {},
                ValueError,
                r"^layer_type must be one of \['full_attention', 'sliding_attention'\]",
            ),
            ("gemma3_4b_v5", {"layer_type": "global"}, ValueError, r"^layer_type must be one of"),
            ("phi_2", {"layer_type": "x"}, None, None),
        ],
    )
    def test_bad_input(self, config: Any, kwargs: dict, error: Any, match: Any) -> None:
        config = load(config) if isinstance(config, str) else config
        if error is None:  # no layer_types in the config: every layer shares the one dict
            assert rope_config_from_hf(config, **kwargs).dim == 32
            return
        with pytest.raises(error, match=match):
            rope_config_from_hf(config, **kwargs)


class TestBothNames:
    """``rope_parameters`` (transformers v5) and ``rope_scaling`` (v4) in one config: they must agree."""

    @staticmethod
    def both(v5: Any, v4: Any, **top: Any) -> dict[str, Any]:
        config = {k: v for k, v in load("llama3_1_8b").items() if k != "rope_scaling"}
        return {**config, **top, "rope_parameters": v5, "rope_scaling": v4}

    def test_identical_and_equivalent_copies(self) -> None:
        v5 = load("llama3_1_8b")["rope_scaling"]
        expected = rope_config_from_hf(load("llama3_1_8b"))
        legacy = {("type" if k == "rope_type" else k): v for k, v in v5.items()}
        moved = {**v5, "rope_theta": 500000.0}  # v5 keeps rope_theta in the dict; the v4 one at the top
        for v5_dict, v4_dict in ((v5, dict(v5)), (v5, legacy), (moved, v5)):
            assert rope_config_from_hf(self.both(v5_dict, v4_dict)) == expected

    @pytest.mark.parametrize(
        ("change", "named"),
        [
            ({"factor": 4.0}, r"factor: 4\.0 here, 8\.0 in config\['rope_parameters'\]"),
            ({"high_freq_factor": 2.0}, r"high_freq_factor: 2\.0 here, 4\.0 in"),
            ({"rope_theta": 1e4}, r"rope_theta: 10000\.0 here, 500000\.0 in"),
        ],
    )
    def test_a_disagreement_names_both_keys_and_the_entries(self, change: dict[str, Any], named: str) -> None:
        v5 = load("llama3_1_8b")["rope_scaling"]
        with pytest.raises(
            ValueError, match=r"^config\['rope_scaling'\] must be the same setting as"
        ) as info:
            rope_config_from_hf(self.both(v5, {**v5, **change}))
        assert "config['rope_parameters']" in str(info.value)
        assert re.search(named, str(info.value)), str(info.value)

    def test_a_different_type(self) -> None:
        v5 = load("llama3_1_8b")["rope_scaling"]
        with pytest.raises(
            ValueError, match=r"rope_type: 'linear' here, 'llama3' in config\['rope_parameters'\]"
        ):
            rope_config_from_hf(self.both(v5, {"type": "linear", "factor": 8.0}))

    def test_a_rope_scaling_that_is_not_a_dict(self) -> None:
        with pytest.raises(TypeError, match=r"^config\['rope_scaling'\] must be a mapping or null"):
            rope_config_from_hf(self.both(load("llama3_1_8b")["rope_scaling"], [1]))

    def test_null_is_absent(self) -> None:
        v5 = load("llama3_1_8b")["rope_scaling"]
        assert rope_config_from_hf(self.both(v5, None)) == rope_config_from_hf(load("llama3_1_8b"))
