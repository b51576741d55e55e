"""Re-count the transformers census against the functions posenc-ref has now.

    python scripts/census_recount.py CENSUS_CSV [--list]

The census (``census.csv``: one row per model family of transformers 5.24.0) lists each family's
schemes as ``class: detail [yes|partial|no|n/a]`` (column ``all_schemes``) and whether posenc-ref
covers the family's default path (``covered``).  A scheme marked ``partial`` or ``no`` counts as
covered now when one of :data:`RULES` matches it (its class, and a pattern of its detail) and every
function the rule needs is in ``posenc_ref.__all__``: a rule names what must exist, so the count
follows the library, never a hand-written verdict.  A family the census counts as covered stays
so; any other is fully covered now when every scheme it lists is (options included: the census's
``partial`` does not say which scheme is off the default path).  ``--list`` prints, per
scheme class, the families that stay uncovered and the detail that keeps them there.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable

import posenc_ref


@dataclasses.dataclass(frozen=True)
class Rule:
    """Schemes of class ``scheme`` whose detail matches ``pattern`` (and not ``unless``) are covered
    when every function of ``needs`` exists."""

    scheme: str
    pattern: str
    needs: tuple[str, ...]
    unless: str | None = None


_PER_IMAGE = r"per image|resampled|grid_sample|embedding_bag|NaFlex|fast_pos_embed|interpolation_indices"
_PER_IMAGE += r"|tiled|crop"
RULES = (
    # ViT interpolate_pos_encoding and its bicubic / bilinear / nearest / antialias / scale_factor kin
    Rule(
        "learned-absolute",
        r"interpolat|bicubic|bilinear|nearest-resized|resiz|resampl",
        ("patch_grid_resize", "grid_resize"),
        unless=_PER_IMAGE + r"|row/col",
    ),
    Rule("window-rel-bias-table", r"Swin|BEiT|HTSAT", ("window_bias",), unless=r"V2|continuous"),
    Rule("window-rel-bias-table", r"V2|continuous", ("swinv2_log_coords",)),
    Rule("other:decomposed-2d-rel-pos", r"get_rel_pos", ("decomposed_rel_pos", "grid_resize")),
    # DETR's sine, its coordinate sinusoid and Deformable's proposal embedding
    Rule(
        "detr-sine-2d",
        r"SinePositionEmbedding|PositionEmbeddingSine|DETR sine",
        ("detr_sine_2d",),
        r"1d_sine",
    ),
    Rule(
        "detr-sine-2d", r"encode_sinusoidal_position_embedding|get_proposal_pos_embed", ("detr_coord_sine",)
    ),
    Rule("2d-sincos", r".", ("sincos_2d",)),
    Rule("fourier-features", r"SAM random Fourier", ("fourier_features", "fourier_grid")),
    Rule("learned-absolute", r"NaViT", ("navit_position_ids",)),
    Rule("learned-absolute", r"bbox", ("bbox_embedding",)),
    Rule("learned-absolute", r"row/col", ("row_col_embedding",), unless=r"interpolat|resiz"),
    Rule("learned-absolute", r"row/col.*(interpolat|resiz)", ("row_col_embedding", "grid_resize")),
    # the vision RoPE layouts rope_2d_cos_sin names (Pixtral, Gemma 4, Llama 4, Kimi-K2.5, SAM 2, DINOv3)
    Rule("rope", r"inv_freq\[0::2\]|\[h,h,w,w\]|x/y frequencies interleaved", ("rope_2d_cos_sin",)),
    Rule("rope", r"\(w, h\) slot pairs|memory attention 2-D axial RoPE", ("rope_2d_cos_sin",)),
    Rule("other:continuous-2d-rope", r"^DINOv3 RoPE", ("rope_2d_cos_sin",)),
    # T5-bucket variants: LayoutLM's 1-D + 2-D, UDOP's aggregated, WavLM's gate, ProphetNet's streams, CPM-Ant
    Rule("t5-buckets", r"1-D \+ 2-D|1-D/2-D", ("t5_layout_bias",)),
    Rule("t5-buckets", r"RelativePositionBiasAggregated", ("t5_udop_bias",)),
    Rule("t5-buckets", r"gated relative position bias", ("t5_gated_bias",)),
    Rule("t5-buckets", r"n-stream relative buckets", ("t5_stream_buckets",)),
    Rule("t5-buckets", r"segment-pair relative buckets", ("t5_segment_bias",)),
)

_PART = re.compile(r"^(?P<scheme>[\w:-]+):\s*(?P<detail>.*?)\s*\[(?P<status>[\w/]+)\]\s*$")


#: Schemes are joined by " | "; a detail may hold one too (``[sin | cos]``), never before "class: ".
_SPLIT = re.compile(r" \| (?=[\w:-]+: )")


def parts(row: dict[str, str]) -> list[tuple[str, str, str]] | None:
    """``(scheme, detail, status)`` of each scheme of a census row; None when one does not parse."""
    found = []
    for text in _SPLIT.split(row["all_schemes"]):
        match = _PART.match(text.strip())
        if match is None:
            return None
        found.append((match["scheme"], match["detail"], match["status"]))
    return found


def covered_now(scheme: str, detail: str, available: set[str]) -> bool:
    """Whether a rule covers this scheme with the functions ``available``."""
    return any(
        rule.scheme == scheme
        and re.search(rule.pattern, detail)
        and not (rule.unless and re.search(rule.unless, detail))
        and set(rule.needs) <= available
        for rule in RULES
    )


def recount(rows: Iterable[dict[str, str]], available: set[str]) -> tuple[Counter[str], dict[str, str]]:
    """The families per coverage after the rules, and each family's new coverage."""
    after: dict[str, str] = {}
    for row in rows:
        before, schemes = row["covered"], parts(row)
        if before in ("yes", "n/a") or not schemes:
            after[row["family"]] = before  # nothing to re-count (or a row that does not parse)
            continue
        default = [p for p in schemes if p[2] != "n/a"]
        open_ = [p for p in default if p[2] != "yes" and not covered_now(*p[:2], available)]
        if len(open_) == sum(p[2] != "yes" for p in default):
            after[row["family"]] = before  # nothing newly covered: the census's own verdict stands
        elif not open_:
            after[row["family"]] = "yes"
        elif len(open_) < len(default) or any(p[2] == "partial" for p in open_):
            after[row["family"]] = "partial"
        else:
            after[row["family"]] = "no"
    return Counter(after.values()), after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("census", help="census.csv")
    parser.add_argument("--list", action="store_true", help="the families that stay uncovered, per scheme")
    args = parser.parse_args(argv)
    with open(args.census, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    available = set(posenc_ref.__all__)
    counts, after = recount(rows, available)
    before = Counter(row["covered"] for row in rows)
    print(f"{'covered':<8} {'before':>6} {'after':>6}")
    for status in ("yes", "partial", "no", "n/a"):
        print(f"{status:<8} {before[status]:>6} {counts[status]:>6}")
    print(f"{'total':<8} {sum(before.values()):>6} {sum(counts.values()):>6}")
    moved = sorted(
        f
        for f in after
        if after[f] == "yes" and f not in {r["family"] for r in rows if r["covered"] == "yes"}
    )
    print(f"\nnewly fully covered ({len(moved)}): {' '.join(moved)}")
    if args.list:
        open_by_scheme: dict[str, list[str]] = defaultdict(list)
        for row in rows:
            if after[row["family"]] in ("partial", "no"):
                for scheme, detail, status in parts(row) or []:
                    if status not in ("yes", "n/a") and not covered_now(scheme, detail, available):
                        open_by_scheme[scheme].append(f"{row['family']}: {detail}")
        for scheme, lines in sorted(open_by_scheme.items(), key=lambda kv: -len(kv[1])):
            print(f"\n{scheme} ({len(lines)})")
            for line in lines:
                print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
