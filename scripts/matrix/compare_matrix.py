"""Check the committed conformance matrix, and fresh reports against it (for scripts/matrix/ci_check.sh).

    python scripts/matrix/compare_matrix.py validate docs/matrix/matrix.json
    python scripts/matrix/compare_matrix.py compare docs/matrix/matrix.json REPORT.json [REPORT.json ...]
    python scripts/matrix/compare_matrix.py zoo-validate docs/matrix/zoo.json
    python scripts/matrix/compare_matrix.py zoo-compare docs/matrix/zoo.json REPORT.json [REPORT.json ...]

``validate``: the matrix is well-formed (:func:`posenc_ref_conformance.matrix.validate`),
every failure is classified, and every bug's reproduction exists under ``docs/``.
``compare``: each report (``posenc-ref check SPEC --json``) gives every result the status
the committed matrix has in the column of its adapter; a difference names the result.
``zoo-validate`` and ``zoo-compare`` do the same for the zoo (:mod:`posenc_ref_conformance.zoo`):
the results of each family's code, in the columns that run it.
Exit status 0 when all is well, 1 when a problem is found, 2 for unreadable input.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from posenc_ref_conformance import zoo
from posenc_ref_conformance.matrix import column_id, differences, validate

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def _read(path: str) -> Any:
    try:
        return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"compare_matrix: {path} cannot be read: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def missing_reproductions(matrix: dict[str, Any], docs: pathlib.Path = DOCS) -> list[str]:
    """``column: result id: path`` of every bug whose reproduction is not a file under ``docs``."""
    return [
        f"{column}: {rid}: reproduction {cell['class']['repro']} does not exist"
        for column, cells in matrix.get("cells", {}).items()
        for rid, cell in cells.items()
        if cell.get("class", {}).get("repro") and not (docs / cell["class"]["repro"]).is_file()
    ]


def missing_zoo_reproductions(zoo_data: dict[str, Any], docs: pathlib.Path = DOCS) -> list[str]:
    """``family: path`` of every cause whose reproduction is not a file under ``docs``."""
    return [
        f"{row['family']}: reproduction {cause['repro']} does not exist"
        for row in zoo_data.get("families", [])
        for cause in row.get("causes", [])
        if cause.get("repro") and not (docs / cause["repro"]).is_file()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("validate", help="the committed matrix is well-formed and fully classified")
    check.add_argument("matrix")
    against = sub.add_parser("compare", help="fresh reports give the committed statuses")
    against.add_argument("matrix")
    against.add_argument("reports", nargs="+")
    zoo_check = sub.add_parser("zoo-validate", help="the committed zoo is well-formed and fully explained")
    zoo_check.add_argument("matrix", metavar="zoo")
    zoo_against = sub.add_parser("zoo-compare", help="fresh reports give the zoo's committed statuses")
    zoo_against.add_argument("matrix", metavar="zoo")
    zoo_against.add_argument("reports", nargs="+")
    args = parser.parse_args(argv)
    matrix = _read(args.matrix)
    if args.command == "zoo-validate":
        problems = zoo.validate(matrix)
        problems += missing_zoo_reproductions(matrix) if not problems else []
        what = f"{args.matrix}: {len(matrix.get('families', [])) if isinstance(matrix, dict) else 0} families"
    elif args.command == "zoo-compare":
        problems = [p for path in args.reports for p in zoo.differences(matrix, _read(path))]
        what = f"{len(args.reports)} reports against {args.matrix}"
    elif args.command == "validate":
        problems = validate(matrix)
        problems += missing_reproductions(matrix) if not problems else []
        columns = len(matrix.get("columns", [])) if isinstance(matrix, dict) else 0
        what = f"{args.matrix}: {columns} columns"
    else:
        problems = []
        for path in args.reports:
            report = _read(path)
            problems += differences(matrix, report, column_id(report))
        what = f"{len(args.reports)} reports against {args.matrix}"
    for problem in problems:
        print(f"MATRIX: {problem}")
    print(f"{what}: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
