"""``posenc-ref golden export``: vectors for one model's config, checked against the oracle and the library.

For every real config snippet in ``tests/data/hf_configs`` (and the ALiBi/T5 ones
in ``hf_configs_bias``): the suite's own reading of the config agrees with
``posenc_ref.rope_config_from_hf``; the export verifies, lints and passes
against posenc_ref; planted bugs (YaRN without its attention factor, LongRoPE
switching at ``>=``, the old ALiBi slopes) fail against it.  The fast cos/sin
tables equal the mpmath oracle's roundings bit for bit, on the fast path and on
its mpmath fallback.  Expected values come from the oracle, never from posenc_ref.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import random
from typing import Any

import numpy as np
import pytest

from posenc_ref import rope_config_from_hf
from posenc_ref_conformance import golden, oracle
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.golden import GoldenError, _export_cases, _format, export
from posenc_ref_conformance.golden.hf_config import ConfigError, read_config
from posenc_ref_conformance.oracle import _fast
from posenc_ref_conformance.runner import run

DATA = pathlib.Path(__file__).parent / "data"
ROPE_CONFIGS = sorted(p.stem for p in (DATA / "hf_configs").glob("*.json"))
BIAS_CONFIGS = sorted(p.stem for p in (DATA / "hf_configs_bias").glob("*.json"))


def config(name: str) -> dict[str, Any]:
    folder = "hf_configs" if name in ROPE_CONFIGS else "hf_configs_bias"
    return json.loads((DATA / folder / f"{name}.json").read_text())


def config_path(name: str) -> pathlib.Path:
    return DATA / ("hf_configs" if name in ROPE_CONFIGS else "hf_configs_bias") / f"{name}.json"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """name -> the directory of its default export (made once per module)."""
    made: dict[str, pathlib.Path] = {}

    def get(name: str) -> pathlib.Path:
        if name not in made:
            made[name] = tmp_path_factory.mktemp("export") / name
            export.export(made[name], export.source_from_config(config_path(name)), export.ExportOptions())
        return made[name]

    return get


def failing(report: Any) -> set[str]:
    return {r.id for r in report.results if r.status == "fail"}


class TestReadConfig:
    def test_eleven_snippets(self) -> None:
        assert len(ROPE_CONFIGS) == 11

    @pytest.mark.parametrize("name", ROPE_CONFIGS)
    def test_agrees_with_the_library(self, name: str) -> None:
        plan = read_config(config(name))
        assert plan.rope and plan.alibi is None and plan.t5 is None
        for layer in plan.rope:
            lib = rope_config_from_hf(config(name), layer_type=None if layer.name == "model" else layer.name)
            assert (layer.dim, layer.head_dim, layer.base) == (lib.dim, lib.head_dim, lib.base)
            assert (layer.scaling, layer.max_position_embeddings) == (
                lib.scaling,
                lib.max_position_embeddings,
            )

    def test_layer_types_and_edges(self) -> None:
        gemma = read_config(config("gemma3_4b_v5"))
        assert [(r.name, r.rope_type, r.base) for r in gemma.rope] == [
            ("full_attention", "linear", 1e6),
            ("sliding_attention", "default", 1e4),
        ]
        assert read_config(config("qwen2_5_7b_instruct_yarn")).rope[0].edges() == [32768, 131072]
        assert read_config(config("llama3_1_8b")).rope[0].edges() == [8192, 65536, 131072]

    def test_gemma3_v4_local_base(self) -> None:
        v4 = {"head_dim": 256, "rope_theta": 1e6, "rope_local_base_freq": 1e4}
        v4 |= {"rope_scaling": {"rope_type": "linear", "factor": 8.0}, "layer_types": ["sliding_attention"]}
        layers = read_config(v4).rope
        assert [(r.name, r.base, r.scaling) for r in layers] == [
            ("full_attention", 1e6, {"rope_type": "linear", "factor": 8.0}),
            ("sliding_attention", 1e4, {"rope_type": "default"}),
        ]

    def test_bias_configs(self) -> None:
        bloom, mpt = read_config(config("bloom")).alibi, read_config(config("mpt_7b")).alibi
        assert (bloom.num_heads, bloom.max_bias, mpt.num_heads, mpt.max_bias) == (112, 8.0, 32, 8)
        t5 = read_config(config("t5_small")).t5
        assert (t5.num_buckets, t5.max_distance, t5.bidirectional) == (32, 128, (True, False))

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (
                lambda c: c["rope_scaling"].update(rope_type="ntk-aware"),
                r"config\['rope_scaling'\]\['rope_type'\]",
            ),
            (lambda c: c["rope_scaling"].pop("low_freq_factor"), r"must contain \['low_freq_factor'\]"),
            (
                lambda c: c["rope_scaling"].update(factor="8"),
                r"config\['rope_scaling'\]\['factor'\] must be a",
            ),
            (
                lambda c: c["rope_scaling"].update(finetuned=True),
                r"keys the export does not know: \['finetuned'\]",
            ),
            (lambda c: c.update(hidden_size=4100), r"config\['hidden_size'\] = 4100 is not a multiple"),
            (lambda c: c.update(partial_rotary_factor=0.29), r"rotated width must be even .* got 37"),
            (lambda c: c.update(rope_scaling=[1]), r"config\['rope_scaling'\] must be an object"),
        ],
    )
    def test_errors_name_the_key(self, edit: Any, message: str) -> None:
        broken = config("llama3_1_8b")
        edit(broken)
        with pytest.raises(ConfigError, match=message):
            read_config(broken)

    def test_errors_for_other_encodings(self) -> None:
        with pytest.raises(ConfigError, match=r"model_type 'gpt2'.* declares no positional encoding"):
            read_config({"model_type": "gpt2", "n_positions": 1024, "n_embd": 768, "n_head": 12})
        mpt = config("mpt_7b")
        mpt["attn_config"]["alibi"] = False
        with pytest.raises(ConfigError, match=r"config\['attn_config'\]\['alibi'\] is false"):
            read_config(mpt)
        phi = config("phi3_5_mini_instruct")
        phi["rope_scaling"]["short_factor"] = [1.0, 2.0]
        with pytest.raises(
            ConfigError, match=r"\['short_factor'\] must be a list of dim/2 = 48 numbers; got 2"
        ):
            read_config(phi)


class TestPositions:
    def test_lists_and_ranges(self) -> None:
        assert export.parse_positions("4095, 0,1,131071,1") == [0, 1, 4095, 131071]
        assert export.parse_positions("0:4,10:20:5") == [0, 1, 2, 3, 10, 15]
        assert _export_cases.ranges([0, 1, 2, 3, 10, 15, 16]) == "0:4,10,15,16"

    @pytest.mark.parametrize("text", ["a", "-1", "1:2:3:4", "5:1:0", "", "1,,2", str(2**53)])
    def test_bad(self, text: str) -> None:
        with pytest.raises(ValueError, match=r"^positions must"):
            export.parse_positions(text)

    def test_default_positions_cover_the_edges(self) -> None:
        defaults = _export_cases.default_positions([4096, 131072])
        assert {4095, 4096, 4097, 131071, 131072, 131073, 0, 1} <= set(defaults)


class TestFastTable:
    """rope_cos_sin_table against oracle.rope.rope_cos_sin rounded once, bit for bit."""

    @staticmethod
    def oracle_table(positions: list[int], inv: list[float], factor: float) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = oracle.rope.rope_cos_sin(positions, inv, attention_factor=factor, layout="half")
        n = len(inv)
        return (
            np.array([[oracle.round_float64(v) for v in row[:n]] for row in cos]).reshape(len(positions), n),
            np.array([[oracle.round_float64(v) for v in row[:n]] for row in sin]).reshape(len(positions), n),
        )

    def frequencies(self) -> list[float]:
        layer = read_config(config("gpt_oss_20b")).rope[0]
        with oracle.working_precision():
            inv, _ = oracle.rope.rope_frequencies(layer.dim, base=layer.base, scaling=layer.scaling)
            return [oracle.round_float64(t) for t in inv[::4]] + [1.0, 0.0]

    def test_equals_the_oracle(self) -> None:
        rng = random.Random(14)
        positions = [0, 1, 2, 4095, 4096, 131071, 2**24 + 1, 2**40 + 3, -7, -131071]
        positions += [rng.randrange(2**31) for _ in range(30)]
        inv = self.frequencies()
        with oracle.working_precision():
            stats = _fast.TableStats()
            fast = _fast.rope_cos_sin_table(positions, inv, 1.3465735902799727, stats=stats)
            slow = self.oracle_table(positions, inv, 1.3465735902799727)
        assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
        assert stats.elements == len(positions) * len(inv) and stats.exact == len(inv) + len(positions) - 1

    def test_the_fallback_equals_the_oracle(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With an error bound too wide to prove anything, every element goes to mpmath: same values."""
        monkeypatch.setattr(_fast, "_BOUND", 1.0)
        positions, inv = [3, 77, 4097, 2**20], [*self.frequencies()[:5], 0.0]
        with oracle.working_precision():
            stats = _fast.TableStats()
            fast = _fast.rope_cos_sin_table(positions, inv, 1.0, stats=stats)
            slow = self.oracle_table(positions, inv, 1.0)
        assert stats.recomputed == len(positions) * (len(inv) - 1)  # all but the zero frequency
        assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])

    def test_contiguous_block(self) -> None:
        """A contiguous range (several digit levels), sampled rows against the oracle."""
        inv = self.frequencies()
        with oracle.working_precision():
            cos, sin = _fast.rope_cos_sin_table(np.arange(5000), inv)
            rows = [0, 1, 255, 256, 4095, 4999]
            slow = self.oracle_table(rows, inv, 1.0)
        assert np.array_equal(cos[rows], slow[0]) and np.array_equal(sin[rows], slow[1])


class TestNpy:
    def test_bytes_are_numpys(self, tmp_path: pathlib.Path) -> None:
        for array in (np.arange(5), np.linspace(-1, 1, 12).reshape(3, 4), np.array(2.5)):
            np.save(tmp_path / "a.npy", array)
            assert _format.npy_bytes(array) == (tmp_path / "a.npy").read_bytes()

    def test_read_checks_what_the_reference_says(self) -> None:
        obj, data = _format.binary_array(np.arange(6.0).reshape(2, 3), "arrays/a.npy")
        assert np.array_equal(_format.read_npy(data, obj), np.arange(6.0).reshape(2, 3))
        for bad, message in [
            ({**obj, "sha256": "0" * 64}, "SHA-256 differs"),
            ({**obj, "shape": [3, 2]}, r"holds <f8 \[2, 3\]; the reference says <f8 \[3, 2\]"),
            ({**obj, "dtype": "int64"}, "the reference says <i8"),
        ]:
            with pytest.raises(ValueError, match=message):
                _format.read_npy(data, bad)
        with pytest.raises(ValueError, match="finite"):
            _format.npy_bytes(np.array([1.0, np.inf]))


class TestExport:
    @pytest.mark.parametrize("name", ROPE_CONFIGS + BIAS_CONFIGS)
    def test_passes_against_posenc_ref(self, name: str, exported: Any) -> None:
        report = run(PosencRefAdapter(), golden_dir=exported(name), invariants=False)
        statuses = {r.status for r in report.results}
        assert report.exit_code == 0 and statuses == {"pass"}, failing(report)
        index = golden.load_index(exported(name))
        assert len(report.results) >= index["totalCases"] and index["export"]["sourceSha256"]

    def test_what_a_rope_export_holds(self, exported: Any) -> None:
        docs = {d["function"]: d for d in golden.verify(exported("phi3_5_mini_instruct"))}
        assert set(docs) == {"rope_frequencies", "rope_cos_sin", "apply_rope", "rope"}
        ids = [c["id"] for c in docs["rope_frequencies"]["cases"]]
        assert ids == [
            "rope_frequencies/model/seq-len-none",
            "rope_frequencies/model/seq-len-4096",
            "rope_frequencies/model/seq-len-4097",
            "rope_frequencies/model/seq-len-131074",
        ]
        cos_sin = {c["id"]: c for c in docs["rope_cos_sin"]["cases"]}
        short = cos_sin["rope_cos_sin/model/half/seq-len-none/positions-0-4095"]
        long = cos_sin["rope_cos_sin/model/interleaved/seq-len-131074/positions-0-131073"]
        assert _format.decode(short["inputs"]["positions"]).max() == 4095
        assert _format.decode(long["inputs"]["positions"]).tolist()[-4:] == [4097, 131071, 131072, 131073]
        assert long["expected"]["cos"]["shape"] == [14, 96] and "phase" in long and "tolerances" in long
        provenance = docs["rope"]["provenance"]
        assert provenance["generator"] == "posenc_ref_conformance.golden.export"
        assert provenance["export"]["sourceName"] == "phi3_5_mini_instruct.json"
        x = _format.decode(docs["rope"]["cases"][0]["inputs"]["x"])
        assert x.shape == (2, 9, 96) and np.all(x * 64 == np.round(x * 64))  # the 9 short positions

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("qwen2_5_7b_instruct_yarn", {"rope_frequencies/model/seq-len-none"}),
            ("gpt_oss_20b", {"rope_frequencies/model/seq-len-none"}),
            ("mistral_7b_v0_3", set()),  # no YaRN: the mutant is right there
        ],
    )
    def test_planted_bug_yarn_without_attention_factor(
        self, name: str, expected: set[str], exported: Any
    ) -> None:
        report = run(YarnWithoutAttentionFactor(), golden_dir=exported(name), invariants=False)
        fails = failing(report)
        assert expected <= fails
        if expected:
            assert any(i.startswith("rope_cos_sin/") for i in fails) and any(
                i.startswith("rope/") for i in fails
            )
            assert report.exit_code == 1
        else:
            assert not fails and report.exit_code == 0

    def test_planted_bug_longrope_switch(self, exported: Any) -> None:
        report = run(
            LongRopeSwitchAtOriginal(), golden_dir=exported("phi3_5_mini_instruct"), invariants=False
        )
        assert failing(report) == {"rope_frequencies/model/seq-len-4096"}

    def test_planted_bug_alibi_slopes(self, exported: Any) -> None:
        report = run(OldAlibiSlopes(), golden_dir=exported("bloom"), invariants=False)
        assert "alibi_slopes/model/heads-112" in failing(report)

    def test_lint_reproduces_and_rechecks(self, exported: Any) -> None:
        from posenc_ref_conformance.golden.lint import lint

        assert lint(exported("phi3_5_mini_instruct")) == []

    def test_lint_finds_a_changed_value(self, tmp_path: pathlib.Path) -> None:
        from posenc_ref_conformance.golden.lint import lint

        source = export.source_from_config(config_path("phi_2"))
        export.export(tmp_path, source, export.ExportOptions(layouts=("half",)))
        path = tmp_path / "rope_frequencies.json"
        doc = json.loads(path.read_text())
        inv = doc["cases"][0]["expected"]["inv_freq"]
        value = np.nextafter(inv["decimal"][3], 1.0)
        inv["hex"][3], inv["decimal"][3] = float(value).hex(), float(value)
        path.write_bytes(_format.dumps(doc))
        problems = lint(tmp_path, reproduce=False)
        assert problems == ["index.json: sha256 of rope_frequencies.json is wrong"]
        index = json.loads((tmp_path / "index.json").read_text())
        index["files"][0]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        (tmp_path / "index.json").write_bytes(_format.dumps(index))
        problems = lint(tmp_path)
        assert "rope_frequencies.json: differs from a fresh export" in problems
        assert (
            "rope_frequencies.json: rope_frequencies/model/seq-len-none: inv_freq differs at 120 digits"
            in problems
        )

    def test_the_scaling_source(self, tmp_path: pathlib.Path) -> None:
        source = export.source_from_scaling(
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            head_dim=128,
            base=1e6,
        )
        export.export(tmp_path, source, export.ExportOptions(positions=(7, 70000), layouts=("half",)))
        report = run(PosencRefAdapter(), golden_dir=tmp_path, invariants=False)
        assert report.exit_code == 0
        assert failing(run(YarnWithoutAttentionFactor(), golden_dir=tmp_path, invariants=False))
        with pytest.raises(
            ConfigError, match=r"scaling\['rope_theta'\] = 10000.0 differs from base = 1000000.0"
        ):
            export.source_from_scaling({"rope_theta": 1e4}, head_dim=64, base=1e6)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """phi-2 (16 frequencies) at 0..19999: two chunks, cos/sin as .npy."""
    out = tmp_path_factory.mktemp("binary") / "phi2"
    options = export.ExportOptions(positions=tuple(range(20000)), layouts=("half",), binary="auto")
    export.export(out, export.source_from_config(config_path("phi_2")), options)
    return out


class TestBinary:
    def test_layout_and_verify(self, big: pathlib.Path) -> None:
        npy = sorted(p.name for p in (big / "arrays").iterdir())
        assert "rope_cos_sin.model.half.seq-len-none.positions-0-16383.expected.cos.npy" in npy
        docs = {d["function"]: d for d in golden.verify(big)}
        case = docs["rope_cos_sin"]["cases"][0]
        assert _format.is_binary(case["expected"]["cos"]) and case["expected"]["cos"]["shape"] == [16384, 32]
        cos = np.load(big / case["expected"]["cos"]["file"])
        assert cos.dtype == np.float64 and cos[0].tolist() == [1.0] * 32

    def test_passes_and_lints(self, big: pathlib.Path) -> None:
        from posenc_ref_conformance.golden.lint import lint

        assert run(PosencRefAdapter(), golden_dir=big, invariants=False).exit_code == 0
        assert lint(big) == []
        report = run(CosSinOffByOneUlp(), golden_dir=big, invariants=False, only=["rope_cos_sin"])
        assert report.exit_code == 0  # one ulp is within the tolerance: the arrays are compared, not skipped
        report = run(SwappedHalves(), golden_dir=big, invariants=False, only=["rope_cos_sin"])
        assert failing(report) == {c for c in _ids(big, "rope_cos_sin")}

    @pytest.mark.parametrize(
        ("damage", "message"),
        [
            (lambda f: f.write_bytes(f.read_bytes()[:-8]), "SHA-256 differs"),
            (lambda f: f.unlink(), "cannot be read"),
            (lambda f: (f.parent / "extra.npy").write_bytes(b"x"), r"holds \['extra.npy'\], which no golden"),
        ],
    )
    def test_damage_is_refused(
        self, big: pathlib.Path, tmp_path: pathlib.Path, damage: Any, message: str
    ) -> None:
        import shutil

        copy = tmp_path / "copy"
        shutil.copytree(big, copy)
        damage(next((copy / "arrays").glob("rope_cos_sin.*.expected.sin.npy")))
        with pytest.raises(GoldenError, match=message):
            golden.verify(copy)

    def test_a_file_changed_after_verify_changes_nothing(
        self, big: pathlib.Path, tmp_path: pathlib.Path
    ) -> None:
        import shutil

        copy = tmp_path / "copy"
        shutil.copytree(big, copy)
        docs = golden.verify(copy)
        ref = golden.binary_references(docs[1]["cases"])[0]
        before = _format.decode(ref)
        path = copy / ref["file"]
        array = np.load(path)
        array.flat[0] += 1.0
        np.save(path, array)
        assert np.array_equal(_format.decode(ref), before)  # read once: decode opens no file
        with pytest.raises(GoldenError, match="SHA-256 differs"):
            golden.verify(copy)  # the next verification sees the edit


def _ids(directory: pathlib.Path, function: str) -> set[str]:
    return {c["id"] for d in golden.verify(directory) if d["function"] == function for c in d["cases"]}


class TestCli:
    def test_export_check_lint(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        out = tmp_path / "qwen"
        argv = [
            "golden",
            "export",
            "--hf-config",
            str(config_path("qwen2_5_7b_instruct_yarn")),
            "--out",
            str(out),
        ]
        assert main([*argv, "--positions", "0,1,131071", "--layout", "half"]) == 0
        text = capsys.readouterr().out
        assert "rope_cos_sin.json" in text and f"posenc-ref check ADAPTER --golden {out}" in text
        assert main(["check", "posenc_ref", "--golden", str(out), "--no-invariants"]) == 0
        assert "RESULT: PASS" in capsys.readouterr().out
        assert main(["golden", "lint", str(out), "--no-precision"]) == 0
        assert main([*argv, "--positions", "5"]) == 0  # a previous export is replaced

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (
                ["--scaling", '{"rope_type": "linear", "factor": 2.0}'],
                "--scaling needs --head-dim and --base",
            ),
            (["--scaling", '{"rope_type": "linear"}', "--head-dim", "64", "--base", "1e4"], "must contain"),
            (["--scaling", "{nope"], "scaling is not valid JSON"),
            (["--hf-config", "missing.json"], "cannot be read"),
            (["--hf-config", "CFG", "--positions", "1:x"], "positions must be integers"),
            (["--hf-config", "CFG", "--head-dim", "64"], "--head-dim goes with --scaling"),
        ],
    )
    def test_export_usage_errors(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
    ) -> None:
        args = [str(config_path("llama3_1_8b")) if a == "CFG" else a for a in args]
        assert main(["golden", "export", *args, "--out", str(tmp_path / "x")]) == 2
        assert message in capsys.readouterr().err

    def test_export_refuses_a_foreign_directory(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (tmp_path / "notes.txt").write_text("mine")
        argv = ["golden", "export", "--hf-config", str(config_path("phi_2")), "--out", str(tmp_path)]
        assert main(argv) == 2
        assert "holds files that are not a previous export: ['notes.txt']" in capsys.readouterr().err
        assert (tmp_path / "notes.txt").read_text() == "mine"

    def test_check_golden_errors(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["check", "posenc_ref", "--golden", str(tmp_path / "none")]) == 2
        assert "--golden must name a golden directory" in capsys.readouterr().err

    def test_generate_out(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        package = {p.name: p.read_bytes() for p in golden.VECTORS_DIR.glob("*.json")}
        pin = (golden.VECTORS_DIR.parent / "_pin.py").read_bytes()
        assert main(["golden", "generate", "--out", str(tmp_path)]) == 0
        for name, data in package.items():
            assert (tmp_path / name).read_bytes() == data, name
        assert (tmp_path / "golden_schema_v1.json").read_bytes() == golden.SCHEMA_PATH.read_bytes()
        assert {p.name: p.read_bytes() for p in golden.VECTORS_DIR.glob("*.json")} == package
        assert (golden.VECTORS_DIR.parent / "_pin.py").read_bytes() == pin
        from posenc_ref_conformance.golden.lint import lint

        quick = {"reproduce": False, "precision": False}
        assert lint(tmp_path, **quick) == lint(golden.VECTORS_DIR, **quick)
        assert len(golden.verify(tmp_path)) == len(package) - 1


# --- planted bugs ----------------------------------------------------------------------------------------


class YarnWithoutAttentionFactor(PosencRefAdapter):
    """YaRN's attention factor dropped: 1.0 from rope_frequencies, and cos/sin left unscaled."""

    def rope_frequencies(self, dim: int, *, scaling: Any, **kw: Any) -> Any:
        inv, factor = super().rope_frequencies(dim, scaling=scaling, **kw)
        return inv, (1.0 if scaling and scaling.get("rope_type") == "yarn" else factor)

    def rope_cos_sin(self, positions: Any, inv_freq: Any, *, attention_factor: float, **kw: Any) -> Any:
        return super().rope_cos_sin(positions, inv_freq, attention_factor=1.0, **kw)


class LongRopeSwitchAtOriginal(PosencRefAdapter):
    """LongRoPE's long factors from seq_len >= original_max, not > (unsloth PR #10681)."""

    def rope_frequencies(self, dim: int, *, scaling: Any, seq_len: Any, **kw: Any) -> Any:
        if scaling and scaling.get("rope_type") == "longrope" and seq_len is not None:
            if seq_len == scaling["original_max_position_embeddings"]:
                seq_len += 1
        return super().rope_frequencies(dim, scaling=scaling, seq_len=seq_len, **kw)


class OldAlibiSlopes(PosencRefAdapter):
    """2**(-8 (h + 1) / n) for every head count: wrong for non-powers of two (MLX before PR #3071)."""

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        return (2.0 ** (-max_bias * np.arange(1, num_heads + 1) / num_heads)).astype(dtype)


class CosSinOffByOneUlp(PosencRefAdapter):
    def rope_cos_sin(self, *args: Any, **kw: Any) -> Any:
        cos, sin = super().rope_cos_sin(*args, **kw)
        return np.nextafter(np.asarray(cos), np.inf), np.asarray(sin)


class SwappedHalves(PosencRefAdapter):
    """cos and sin exchanged."""

    def rope_cos_sin(self, *args: Any, **kw: Any) -> Any:
        cos, sin = super().rope_cos_sin(*args, **kw)
        return sin, cos


def test_the_docs_page_commands_parse() -> None:
    """Every command on docs/guide/export.md is one the CLI accepts (its options exist, its JSON parses).

    The worked examples' commands are not on the page: the docs build runs them
    (``docs/_ext/doc_runs.py``) and shows their output.
    """
    import re
    import shlex

    from posenc_ref_conformance.cli import build_parser

    page = (pathlib.Path(__file__).parents[1] / "docs" / "guide" / "export.md").read_text()
    # the generated blocks are the sessions' output (scripts/docs_generate.py), not commands to parse
    page = re.sub(r"<!-- generated by .*?<!-- end generated: [^>]* -->", "", page, flags=re.S)
    commands = [m.strip() for m in re.findall(r"^(?:\$ )?(posenc-ref [^\n]+)$", page, flags=re.M)]
    assert len(commands) >= 6
    parser = build_parser()
    for command in commands:
        args = parser.parse_args(shlex.split(command)[1:])
        if getattr(args, "scaling", None):
            export.source_from_scaling(json.loads(args.scaling), head_dim=args.head_dim, base=args.base)
