"""Write the zoo's family table (``docs/matrix/zoo_families.csv``) from the transformers census.

    python scripts/zoo_families.py CENSUS_CSV [--out docs/matrix/zoo_families.csv] [--check]

The census (``census.csv``: one row per directory of ``transformers/models`` in 5.24.0, read by
hand) lists each family's positional schemes as ``class: detail [coverage]``.  The zoo page needs
only the facts: which scheme classes a family computes (default path first, options after), and
its primary class.  Coverage is not copied: the zoo page computes it from the matrix runs, never
from a hand-written verdict.  Columns: ``family``, ``primary`` (the census's class of the family's
main positional code: ``none`` for a model without positions, ``delegated`` for a composite whose
positional code lives in its sub-models, ``n/a`` for a directory without modeling code) and
``schemes`` (``;``-separated scheme classes, each once, in the census's order, those a config
option selects included; empty for the three kinds above).  ``--check`` writes nothing and exits
1 if the file would change.
"""

from __future__ import annotations

import argparse
import csv
import io
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from census_recount import parts

#: Census primary classes of a family without positional code of its own.
WITHOUT_POSITIONS = {"none": "none", "delegated": "delegated", "n/a (no modeling file)": "n/a"}


def table(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """One zoo row per census row: family, primary class, scheme classes."""
    out = []
    for row in sorted(rows, key=lambda r: r["family"]):
        primary = WITHOUT_POSITIONS.get(row["scheme_class"], row["scheme_class"])
        schemes: list[str] = []
        if primary not in WITHOUT_POSITIONS.values():
            found = parts(row)
            if found is None:
                msg = f"census row {row['family']}: all_schemes does not parse: {row['all_schemes']!r}"
                raise ValueError(msg)
            for scheme, _detail, _status in found:
                if scheme not in ("none", "delegated") and scheme not in schemes:
                    schemes.append(scheme)
        out.append({"family": row["family"], "primary": primary, "schemes": ";".join(schemes)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("census", help="the census's census.csv")
    parser.add_argument("--out", default="docs/matrix/zoo_families.csv", help="the table to write")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    args = parser.parse_args(argv)
    with open(args.census, encoding="utf-8", newline="") as f:
        rows = table(list(csv.DictReader(f)))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=["family", "primary", "schemes"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out = pathlib.Path(args.out)
    if args.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text.getvalue()
        print(f"{out}: {'up to date' if same else 'would change'}")
        return 0 if same else 1
    out.write_text(text.getvalue(), encoding="utf-8")
    print(f"{out}: {len(rows)} families")
    return 0


if __name__ == "__main__":
    sys.exit(main())
