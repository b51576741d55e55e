"""``scripts/census_recount.py`` re-counts the census from rules and the functions that exist."""

from __future__ import annotations

import csv
import io
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import census_recount  # noqa: E402

DETR = (
    "detr-sine-2d: DETR PositionEmbeddingSine: [sin | cos] of the counts [no]"
    " | learned-absolute: DETR learned row/column tables [partial]"
)
ROWS = f"""family,covered,all_schemes
vit,partial,learned-absolute: ViT patch grid (+cls); bicubic interpolate_pos_encoding [partial]
qwen3_vl,partial,"learned-absolute: vision learned table, bilinear resampled per image [partial]"
detr,no,"{DETR}"
llama,yes,rope: half layout [yes]
odd,partial,this row does not parse
"""


def _rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(ROWS)))


def test_a_scheme_is_covered_only_when_its_rule_and_functions_are() -> None:
    everything = {"patch_grid_resize", "grid_resize", "detr_sine_2d", "row_col_embedding"}
    counts, after = census_recount.recount(_rows(), everything)
    assert after == {"vit": "yes", "qwen3_vl": "partial", "detr": "yes", "llama": "yes", "odd": "partial"}
    assert counts == {"yes": 3, "partial": 2}
    # without the DETR sine the family keeps its other, covered, scheme: partial; without both, no
    assert census_recount.recount(_rows(), everything - {"detr_sine_2d"})[1]["detr"] == "partial"
    assert census_recount.recount(_rows(), set())[1]["detr"] == "no"


def test_a_pipe_inside_a_detail_does_not_split_the_scheme() -> None:
    detr = _rows()[2]
    assert [p[0] for p in census_recount.parts(detr)] == ["detr-sine-2d", "learned-absolute"]
    assert census_recount.parts(_rows()[4]) is None


def test_the_script_prints_before_and_after(tmp_path: pathlib.Path, capsys) -> None:
    (tmp_path / "c.csv").write_text(ROWS, encoding="utf-8")
    assert census_recount.main([str(tmp_path / "c.csv"), "--list"]) == 0
    out = capsys.readouterr().out
    assert "yes           1      3" in out and "newly fully covered (2): detr vit" in out
    assert "qwen3_vl: vision learned table, bilinear resampled per image" in out
