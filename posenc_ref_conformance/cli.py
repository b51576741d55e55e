"""``posenc-ref check`` and ``posenc-ref golden``: a thin shell over the runner and the golden tools.

Registered into ``posenc_ref.cli`` through :data:`SUBCOMMANDS` (name -> (help,
add_arguments, run)).  Exit codes: 0 success, 1 failures found, 2 usage error.
Python callers: :func:`posenc_ref_conformance.runner.run` and :mod:`posenc_ref_conformance.golden.generate`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

__all__ = ["ADAPTER_ENV", "SUBCOMMANDS"]

ADAPTER_ENV = "POSENC_REF_ADAPTER"


def _usage(message: str) -> int:
    print(f"posenc-ref: error: {message}", file=sys.stderr)
    return 2


def _add_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "adapter",
        nargs="?",
        metavar="ADAPTER",
        help="posenc_ref[:BACKEND], mlx, transformers[:VARIANT], a module[:NAME] or a file.py[:NAME] "
        f"(default: ${ADAPTER_ENV})",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the full report as JSON")
    parser.add_argument("--xfails", metavar="FILE", help="known failures: one case id or id prefix per line")
    parser.add_argument(
        "--only",
        metavar="SCHEME",
        action="append",
        help="run only this scheme or canonical function (repeatable, or comma-separated)",
    )
    parser.add_argument("--no-invariants", action="store_true", help="run the golden cases only")
    parser.add_argument(
        "--max-failures", type=int, default=20, metavar="N", help="failures listed (default 20)"
    )


def _run_check(args: argparse.Namespace) -> int:
    from .adapters import AdapterError, load_adapter
    from .runner import SCHEMES, load_xfails, run

    spec = args.adapter or os.environ.get(ADAPTER_ENV, "")
    if not spec:
        return _usage(
            f"check needs an ADAPTER argument or the {ADAPTER_ENV} environment variable "
            "(try: posenc-ref check posenc_ref)"
        )
    only = [s for item in (args.only or []) for s in item.split(",") if s]
    from .golden.functions_index import FUNCTION_NAMES

    unknown = [s for s in only if s not in SCHEMES and s not in FUNCTION_NAMES]
    if unknown:
        return _usage(f"--only must name schemes {list(SCHEMES)} or functions; got {unknown}")
    xfails: list[str] = []
    if args.xfails:
        try:
            xfails = load_xfails(args.xfails)
        except OSError as exc:
            return _usage(f"--xfails file cannot be read: {exc}")
    try:
        adapter = load_adapter(spec)
    except AdapterError as exc:
        return _usage(str(exc))
    report = run(adapter, only=only or None, xfails=xfails, invariants=not args.no_invariants)
    print(report.format_table(failures=args.max_failures))
    if report.stale_xfails:
        print(
            f"warning: {len(report.stale_xfails)} stale xfail entries: {', '.join(report.stale_xfails)}",
            file=sys.stderr,
        )
    if args.json:
        report.write_json(args.json)
        print(f"JSON report written to {args.json}")
    return 1 if report.failed else 0


def _add_golden(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="golden_command", metavar="ACTION")
    gen = sub.add_parser("generate", help="regenerate the golden files from the oracle (needs mpmath)")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    lint = sub.add_parser(
        "lint", help="validate the golden files (schema, ids, counts, checksums, reproducibility)"
    )
    lint.add_argument("--no-reproduce", action="store_true", help="skip regenerating and comparing the bytes")
    lint.add_argument(
        "--no-precision",
        action="store_true",
        help="skip recomputing at higher precision to prove the float64 rounding",
    )


def _run_golden(args: argparse.Namespace) -> int:
    action = getattr(args, "golden_command", None)
    if action is None:
        return _usage("golden needs an action: generate or lint")
    try:
        if action == "generate":
            from .golden import generate
        else:
            from .golden import lint
    except ImportError as exc:
        return _usage(f"golden {action} needs the test extras (pip install 'posenc-ref[test]'): {exc}")
    if action == "generate":
        if args.check:
            problems = generate.check()
            for name in problems:
                print(f"would change: {name}")
            print(
                "golden files are up to date" if not problems else f"{len(problems)} golden files out of date"
            )
            return 1 if problems else 0
        changed = generate.write()
        print(f"wrote {len(changed)} changed files" + (f": {', '.join(changed)}" if changed else ""))
        return 0
    problems = lint.lint(reproduce=not args.no_reproduce, precision=not args.no_precision, log=print)
    for problem in problems:
        print(f"LINT: {problem}")
    print("golden lint: OK" if not problems else f"golden lint: {len(problems)} problems")
    return 1 if problems else 0


#: Subcommand name -> (help, function adding arguments, function running it).
SUBCOMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {
    "check": ("run the conformance suite against an adapter", _add_check, _run_check),
    "golden": ("generate or lint the golden vectors", _add_golden, _run_golden),
}
