"""The shared ``--write`` / ``--check`` driver of zoo_rope_table.py and zoo_learned_table.py.

A table module holds its generated rows between two marker lines and a hand-written dict of the
families it does not run, with why.  The driver prints the rows (no option), rewrites them
(``--write``), or checks them (``--check``: exit 1 when the rows are stale, when a family that is
not run has no reason, when a family that runs has one, or when an expected family is in neither).
"""

from __future__ import annotations

import argparse
import pathlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

BEGIN = "    # --- BEGIN ROWS (scripts/{script} --write) ---"
END = "    # --- END ROWS ---"


def main(
    argv: list[str] | None,
    *,
    description: str,
    script: str,
    table: pathlib.Path,
    rows: Callable[[], tuple[dict[str, Any], dict[str, str]]],
    literal: Callable[[str, Any], str],
    not_run: Callable[[], Mapping[str, str]],
    not_run_name: str,
    expected: Iterable[str] = (),
) -> int:
    parser = argparse.ArgumentParser(description=description)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite the rows in the table module")
    group.add_argument("--check", action="store_true", help="exit 1 when the module's rows are stale")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    found, without = rows()
    reasons = not_run()
    lines = [literal(family, row) for family, row in found.items()]
    begin = BEGIN.format(script=script)
    text = table.read_text()
    head, rest = text.split(begin + "\n")
    _, tail = rest.split(END)
    new = f"{head}{begin}\n" + "\n".join(lines) + f"\n{END}{tail}"
    if args.write:
        table.write_text(new)
        print(f"{table.name}: {len(found)} families")
        return 0
    if args.check:
        problems = [f"{table.name} is stale: run scripts/{script} --write"] if new != text else []
        problems += [
            f"{f}: not run ({without[f]}) and not in {not_run_name}"
            for f in sorted(set(without) - set(reasons))
        ]
        problems += [f"{f}: runs, yet {not_run_name} lists it" for f in sorted(set(found) & set(reasons))]
        problems += [f"{f}: in neither table" for f in sorted(set(expected) - set(found) - set(reasons))]
        print("\n".join(problems) or f"ok: {len(found)} families run, {len(reasons)} not run")
        return 1 if problems else 0
    print("\n".join(lines))
    for family, why in sorted(without.items()):
        mark = "" if family in reasons else f"   <- needs a {not_run_name} reason"
        print(f"# not run: {family}: {why}{mark}")
    return 0
