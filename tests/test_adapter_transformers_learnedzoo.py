"""The learned-absolute zoo of the ``transformers`` adapter: one column per family, its own code.

Without torch the table still imports (it is data); with transformers installed every row's classes
exist and build through the adapter, each family's variant declares exactly its row's functions and
offset, and chosen families reproduce the canonical values (their own position-id logic where a case
allows it: a range from the cache offset, fairseq's numbering of a padded batch).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from posenc_ref_conformance.adapters import _transformers_learned_families as zoo
from posenc_ref_conformance.adapters import transformers as hf

MISSING = hf.missing()
needs_transformers = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
TABLE = np.arange(40.0).reshape(10, 4)


def test_every_census_family_is_run_or_explained() -> None:
    assert not set(zoo.LEARNED_FAMILIES) & set(zoo.LEARNED_NOT_RUN)
    assert all(reason.strip() for reason in zoo.LEARNED_NOT_RUN.values())
    for family, row in zoo.LEARNED_FAMILIES.items():
        assert row.functions(), family
        assert row.offset in ("plain", "opt", "roberta"), family
        assert row.kind in ("embeddings", "positional", "model"), family


def test_every_row_is_a_variant_declaring_its_functions() -> None:
    for family, row in zoo.LEARNED_FAMILIES.items():
        cls = hf.ADAPTERS[family]
        declared = set(cls.capabilities.functions or ())
        assert set(row.functions()) <= declared, family
        assert cls.capabilities.learned_offsets == (row.offset,)
    # a family with another variant keeps its other sources (united, not overwritten)
    assert "window_source" in hf.ADAPTERS["clap"].overrides
    assert "token_positions_source" in hf.ADAPTERS["clap"].overrides


def _module(row: zoo.LearnedFamily, family: str) -> object:
    return importlib.import_module(row.module_path(family))


@needs_transformers
@pytest.mark.parametrize("family", sorted(zoo.LEARNED_FAMILIES))
def test_row_classes_exist_and_build(family: str) -> None:
    row = zoo.LEARNED_FAMILIES[family]
    module = _module(row, family)
    adapter = hf.ADAPTERS[family]()
    if row.learned:
        assert hasattr(module, row.learned)
        offset = row.offset
        pad = 1 if offset == "roberta" else None
        shift = {"plain": 0, "opt": 2, "roberta": 2}[offset]
        got = adapter.learned(TABLE, np.array([0, 1, 2]), offset=offset, padding_idx=pad)
        np.testing.assert_array_equal(got.numpy(), TABLE[shift : shift + 3])
    if row.token_positions:
        owner = row.token_positions.split(".")[0]
        assert hasattr(module, owner)
        got = adapter.token_positions(np.array([[True, True, False]]), cache_length=0)
        np.testing.assert_array_equal(got.numpy(), [[0, 1, -1]])
    if row.patch:
        assert hasattr(module, row.patch)
        _, weight = adapter._vision_module(family, 3, 4, adapter.torch.float64)
        assert weight.numel() == (9 + row.prefix) * 4


@needs_transformers
@pytest.mark.parametrize(
    ("family", "positions", "offset", "padding_idx", "rows"),
    [
        # BERT numbers arange(cache, cache + L) itself (cache_length = 3)
        ("bert", [[3, 4, 5], [3, 4, 5]], "plain", None, [[3, 4, 5], [3, 4, 5]]),
        # RoBERTa numbers a left-padded batch itself (pads -> row padding_idx)
        ("roberta", [[-1, 0, 1], [0, 1, 2]], "roberta", 1, [[1, 2, 3], [2, 3, 4]]),
        # XLM-R with padding_idx 0 (its config's pad_token_id)
        ("xlm_roberta", [[-1, 0, 1]], "roberta", 0, [[0, 1, 2]]),
        # OPT counts the attention mask (cache_length = 2 keeps its last tokens)
        ("opt", [[2, 3, -1]], "opt", None, [[4, 5, 1]]),
        # BART: arange from the cache offset, + 2
        ("bart", [[1, 2]], "opt", None, [[3, 4]]),
        # arbitrary positions go in as position_ids (GPT-2's model forward, its hidden_states[0])
        ("gpt2", [5, 0, 2], "plain", None, [5, 0, 2]),
    ],
)
def test_learned_positions_through_the_family(family, positions, offset, padding_idx, rows) -> None:
    adapter = hf.ADAPTERS[family]()
    got = adapter.learned(TABLE, np.array(positions), offset=offset, padding_idx=padding_idx)
    np.testing.assert_array_equal(got.numpy(), TABLE[np.array(rows)])


@needs_transformers
def test_a_family_refuses_another_offset() -> None:
    from posenc_ref_conformance.adapters.base import Unsupported

    with pytest.raises(Unsupported, match="offset 'plain'"):
        hf.ADAPTERS["bert"]().learned(TABLE, np.array([0]), offset="opt", padding_idx=None)
    with pytest.raises(Unsupported, match="interpolate_pos_encoding"):
        hf.ADAPTERS["deit"]().patch_grid_resize(
            np.zeros((1, 10, 2)),
            [3, 3],
            [4, 4],
            prefix_tokens=1,
            mode="bicubic",
            align_corners=False,
            scale_factor=None,
            antialias=False,
            skip_same_grid=False,
        )


@needs_transformers
def test_vivit_square_frame_keeps_its_table_is_detected() -> None:
    """bug: ViViT's early return reads the configured patch count (transformers_vivit_square_resize.py)."""
    from posenc_ref_conformance.adapters import load_adapter
    from posenc_ref_conformance.runner import run

    report = run(load_adapter("transformers:vivit"), only=["patch_grid_resize"])
    statuses = {r.result_id: r.status for r in report.results}
    assert statuses["patch_grid_resize/vit/cls-4x4-to-6x6[float64]"] == "fail"
    assert statuses["patch_grid_resize/vit/cls-4x4-to-3x5[float64]"] == "pass"  # non-square: resized
