"""The ``posenc-ref`` command: ``info``, ``check`` and ``golden``, a thin shell with no logic of its own.

Exit codes: 0 PASS (or success), 1 FAIL, 2 usage error (one line on stderr:
bad adapter, options or xfail file), 3 NOTHING TESTED (no golden case, or nothing
of a selected scheme, was compared), 4 GOLDEN SET DAMAGED (the golden vectors
failed verification, before or during the run), 5 SUITE ERROR (a bug in
posenc-ref itself, with its traceback on stderr).  ``check`` writes its JSON
report whatever the outcome once its options are read.  ``check`` shows its progress on stderr
when that is a terminal and the run lasts more than two seconds.  Python callers:
:func:`posenc_ref_conformance.runner.run`, :mod:`posenc_ref_conformance.golden.generate`,
:func:`posenc_ref.backends.backend_info`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import sys
import time
import traceback
from collections.abc import Sequence

from posenc_ref import __version__ as library_version
from posenc_ref.backends import backend_info

from . import __version__, golden
from .adapters import AdapterError
from .golden import GoldenError
from .results import EXIT_CODES

# The runner, isolation and matrix load the whole suite (~0.3 s) and the golden generator, lint
# and export need mpmath (and jsonschema): each is imported by the subcommand that uses it, so
# --help and info stay quick and work without the test extras.

__all__ = ["ADAPTER_ENV", "TIMEOUT_ENV", "main"]

ADAPTER_ENV = "POSENC_REF_ADAPTER"
TIMEOUT_ENV = "POSENC_REF_TIMEOUT"
#: Exit code of a bug in posenc-ref itself (never 1, the FAIL code).
EXIT_INTERNAL = EXIT_CODES["SUITE ERROR"]


class UsageError(Exception):
    """A problem with how the command was called: one line, exit 2."""


def _usage(message: str) -> int:
    first = " ".join(str(message).split())  # one line, whatever the message held
    print(f"posenc-ref: error: {first}", file=sys.stderr)
    return 2


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        msg = f"must be a positive number of seconds; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _non_negative(text: str) -> int:
    if not text.isdigit():
        msg = f"must be a non-negative integer; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


# --- info ------------------------------------------------------------------------------------------------


def _run_info(args: argparse.Namespace) -> int:
    print(f"posenc-ref {library_version} (conformance suite {__version__})")
    print(f"{'backend':<18}{'imports':<9}{'version':<14}{'float64 on default device'}")
    for row in backend_info():
        if row["available"]:
            print(
                f"{row['name']:<18}{'yes':<9}{row['version'] or '?':<14}{'yes' if row['float64'] else 'no'}"
            )
        else:
            print(f"{row['name']:<18}{'no':<9}{'-':<14}-   ({row['error']})")
    return 0


# --- check -----------------------------------------------------------------------------------------------


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
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=f"time limit of one adapter call (default ${TIMEOUT_ENV} or 60); a call over it fails its case",
    )
    parser.add_argument(
        "--max-failures",
        type=_non_negative,
        default=20,
        metavar="N",
        help="failing results shown, at most 3 per function (default 20)",
    )
    parser.add_argument(
        "--golden",
        metavar="DIR",
        help="run the golden cases of DIR (from golden export or golden generate --out) instead of the "
        "shipped ones",
    )
    parser.add_argument(
        "--context",
        metavar="N",
        help="the context length (positions) the implementation must serve: a reach below it fails "
        "(default: the adapter's CAPABILITIES['context'])",
    )
    parser.add_argument(
        "--reach-atol",
        metavar="X",
        help="absolute tolerance of the second reach the report states (default 1e-3)",
    )


def _json_target(path: str | None) -> pathlib.Path | None:
    if path is None:
        return None
    target = pathlib.Path(path)
    if target.is_dir():
        msg = f"--json must name a file; {path!r} is a directory"
        raise UsageError(msg)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"--json {path!r}: its folder cannot be created ({exc.strerror or exc})"
        raise UsageError(msg) from exc
    if not os.access(target.parent, os.W_OK):
        msg = f"--json {path!r}: its folder is not writable"
        raise UsageError(msg)
    return target


def _timeout(value: float | None) -> float:
    from .isolation import DEFAULT_TIMEOUT

    if value is not None:
        return value
    text = os.environ.get(TIMEOUT_ENV)
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return _positive_seconds(text)
    except argparse.ArgumentTypeError as exc:
        msg = f"{TIMEOUT_ENV} {exc}"
        raise UsageError(msg) from exc


def _context(text: str | None) -> int | None:
    if text is None:
        return None
    if not (text.strip().isascii() and text.strip().isdigit()) or int(text) <= 0:
        msg = f"--context must be a positive integer (a number of positions); got {text!r}"
        raise UsageError(msg)
    return int(text)


def _reach_atol(text: str | None) -> float:
    if text is None:
        return 1e-3
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        msg = f"--reach-atol must be a positive number; got {text!r}"
        raise UsageError(msg)
    return value


def _xfails(path: str | None) -> list[str]:
    from .runner import load_xfails

    if path is None:
        return []
    try:
        return load_xfails(path)
    except OSError as exc:
        msg = f"--xfails file {path!r} cannot be read ({exc.strerror or exc})"
        raise UsageError(msg) from exc
    except UnicodeDecodeError as exc:
        msg = f"--xfails file {path!r} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise UsageError(msg) from exc


def _run_check(args: argparse.Namespace) -> int:
    from .progress import TerminalProgress
    from .runner import run

    spec = args.adapter or os.environ.get(ADAPTER_ENV, "")
    if not spec.strip():
        return _usage(
            f"check needs an ADAPTER argument or the {ADAPTER_ENV} environment variable "
            "(try: posenc-ref check posenc_ref)"
        )
    only = [s.strip() for item in (args.only or []) for s in item.split(",") if s.strip()]
    progress = TerminalProgress(sys.stderr)
    target = None
    try:
        target = _json_target(args.json)
        xfails = _xfails(args.xfails)
        context, reach_atol = _context(args.context), _reach_atol(args.reach_atol)
        if args.golden is not None and not pathlib.Path(args.golden).is_dir():
            msg = f"--golden must name a golden directory; {args.golden!r} is not a directory"
            raise UsageError(msg)
        report = run(
            spec,
            only=only,
            xfails=xfails,
            invariants=not args.no_invariants,
            progress=progress,
            timeout=_timeout(args.timeout),
            golden_dir=args.golden,
            context=context,
            reach_atol=reach_atol,
        )
    except GoldenError as exc:
        remedy = "export or generate it again" if args.golden else "reinstall posenc-ref"
        progress.close()
        return _stopped(spec, target, "golden", f"golden vectors failed verification: {exc} ({remedy})")
    except (UsageError, AdapterError, ValueError) as exc:
        return _stopped(spec, target, "usage", str(exc))
    except Exception as exc:  # a bug of the suite: exit 5, never 1 (FAIL)
        progress.close()
        return _stopped(spec, target, "internal", f"{type(exc).__name__}: {exc}", traceback.format_exc())
    finally:
        progress.close()
    if target is not None:  # first: a reader that goes away (``| head``) never costs the report
        try:
            report.write_json(target)
        except OSError as exc:
            return _usage(f"--json {args.json!r} cannot be written ({exc.strerror or exc})")
    if report.abort is not None and report.abort["kind"] == "internal":
        print(report.abort["traceback"].rstrip(), file=sys.stderr)
    try:
        print(report.format_table(failures=args.max_failures), flush=True)
        if report.stale_xfails:
            stale = ", ".join(report.stale_xfails)
            print(f"warning: {len(report.stale_xfails)} stale xfail entries: {stale}", file=sys.stderr)
        if target is not None:
            print(f"JSON report written to {target}")
    except BrokenPipeError:  # the verdict stands, whoever stopped reading
        _silence_stdout()
    return report.exit_code


def _stopped(spec: str, target: pathlib.Path | None, kind: str, message: str, trace: str = "") -> int:
    """A check with no verdict: one line (after the traceback, if any) on stderr, the JSON report, its code.

    ``kind``: ``usage`` (exit 2), ``golden`` (4) or ``internal`` (5).  The JSON report
    is written whenever its path was read, so an earlier run's report never stands
    in for this one.
    """
    from .results import Report

    report = Report({"name": spec}, [], abort={"kind": kind, "message": message, "traceback": trace})
    if trace:
        print(trace.rstrip(), file=sys.stderr)
    what = {"usage": "error", "golden": "damaged golden set"}.get(
        kind, "internal error (a bug in posenc-ref, not a verdict)"
    )
    print(f"posenc-ref: {what}: {' '.join(message.split())}", file=sys.stderr)
    if target is not None:
        with contextlib.suppress(OSError):
            report.write_json(target)
    return report.exit_code


# --- matrix ----------------------------------------------------------------------------------------------


def _add_matrix(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("adapters", nargs="*", metavar="ADAPTER", help="adapters to run here (default: none)")
    parser.add_argument(
        "--reports", nargs="*", default=[], metavar="JSON", help="JSON reports of check runs made elsewhere"
    )
    parser.add_argument("--classification", metavar="FILE", help="classified failures (JSON, see matrix.py)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for matrix.json and matrix.html")
    parser.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS", help="per adapter call")
    parser.add_argument(
        "--command",
        metavar="TEXT",
        help="the command that regenerates it, shown on the page (default: this one)",
    )


def _run_matrix(args: argparse.Namespace) -> int:
    from .matrix import build, check_report, load_classification, render_html, run_columns, unexplained

    if not args.adapters and not args.reports:
        return _usage(
            "matrix needs ADAPTER arguments or --reports (try: posenc-ref matrix posenc_ref mlx --out m)"
        )
    try:
        reports = [
            check_report(json.loads(pathlib.Path(p).read_text(encoding="utf-8")), p) for p in args.reports
        ]
        classification = load_classification(args.classification) if args.classification else {}
    except (OSError, ValueError, RecursionError) as exc:
        return _usage(f"matrix input cannot be read: {exc}")
    try:
        ran, unavailable = run_columns(args.adapters, timeout=_timeout(args.timeout))
    except GoldenError as exc:
        print(
            f"posenc-ref: damaged golden set: {' '.join(str(exc).split())} (reinstall posenc-ref)",
            file=sys.stderr,
        )
        return EXIT_CODES["GOLDEN SET DAMAGED"]
    command = args.command or "posenc-ref matrix " + " ".join(
        [*args.adapters, *(["--reports", *args.reports] if args.reports else [])]
    )
    matrix = build([*reports, *ran], classification, unavailable=unavailable, command=command)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.json").write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    docs = golden.load()
    notes = {k: v for doc in docs for k, v in doc["notes"].items()}
    comments = {case["id"]: case["comment"] for doc in docs for case in doc["cases"]}
    (out / "matrix.html").write_text(render_html(matrix, notes, comments), encoding="utf-8")
    for spec, reason in unavailable.items():
        print(f"not available here: {spec}: {reason}")
    missing = unexplained(matrix)
    for line in missing:
        print(f"UNEXPLAINED: {line}")
    columns = len(matrix["columns"])
    print(f"matrix of {columns} implementations written to {out}; {len(missing)} unexplained failures")
    return 1 if missing else 0


# --- golden ----------------------------------------------------------------------------------------------


def _add_golden(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="golden_command", metavar="ACTION")
    gen = sub.add_parser("generate", help="regenerate the golden files from the oracle (needs mpmath)")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    gen.add_argument(
        "--out", metavar="DIR", help="write the shipped set into DIR (default: the installed package)"
    )
    lint = sub.add_parser(
        "lint", help="validate golden files (schema, ids, counts, checksums, reproducibility)"
    )
    lint.add_argument("directory", nargs="?", metavar="DIR", help="a golden directory (default: the shipped)")
    lint.add_argument("--no-reproduce", action="store_true", help="skip regenerating and comparing the bytes")
    lint.add_argument(
        "--no-precision",
        action="store_true",
        help="skip recomputing at higher precision to prove the float64 rounding",
    )
    _add_export(sub.add_parser("export", help="golden vectors for one model's config (needs mpmath)"))


def _add_export(exp: argparse.ArgumentParser) -> None:
    source = exp.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="FILE", help="the model's config.json (transformers v4 or v5)")
    source.add_argument(
        "--scaling", metavar="JSON", help="a rope-parameters dict, as JSON text or a file (with --head-dim)"
    )
    exp.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder to write: new, empty or an earlier export, replaced only once the new one is complete",
    )
    exp.add_argument(
        "--positions",
        metavar="LIST",
        help="positions, comma-separated, with start:stop[:step] ranges (0,1,4095,0:131072); "
        "the default set around the context edges is added",
    )
    exp.add_argument(
        "--no-default-positions", action="store_true", help="only the positions given, not the default set"
    )
    exp.add_argument(
        "--layout", action="append", choices=("half", "interleaved"), help="RoPE layout (default: both)"
    )
    exp.add_argument(
        "--form", action="append", choices=("symmetric", "causal"), help="ALiBi form (default: both)"
    )
    exp.add_argument("--seed", type=_non_negative, default=0, metavar="N", help="seed of the q/k inputs")
    exp.add_argument(
        "--binary",
        choices=("auto", "always", "never"),
        default="auto",
        help="write arrays as .npy beside the JSON: auto (over 65536 elements), always, never",
    )
    exp.add_argument("--head-dim", type=_non_negative, metavar="N", help="with --scaling: head size")
    exp.add_argument("--base", type=float, metavar="THETA", help="with --scaling: rope_theta")
    exp.add_argument(
        "--max-position-embeddings", type=_non_negative, metavar="N", help="with --scaling: context length"
    )
    exp.add_argument(
        "--partial-rotary-factor", type=float, metavar="F", help="with --scaling: fraction rotated"
    )


def _scaling_source(args: argparse.Namespace) -> dict[str, object]:
    from .golden import export

    scaling = export.parse_scaling(args.scaling)
    if scaling is not None and not isinstance(scaling, dict):
        msg = f"--scaling must be a JSON object (a rope-parameters dict); got {type(scaling).__name__}"
        raise UsageError(msg)
    base = args.base if args.base is not None else (scaling or {}).get("rope_theta")
    if args.head_dim is None or base is None:
        msg = "--scaling needs --head-dim and --base (or rope_theta in the dict)"
        raise UsageError(msg)
    return export.source_from_scaling(
        scaling,
        head_dim=args.head_dim,
        base=base,
        max_position_embeddings=args.max_position_embeddings,
        partial_rotary_factor=args.partial_rotary_factor,
    )


def _run_export(args: argparse.Namespace) -> int:
    from .golden import export

    start = time.perf_counter()
    try:
        if args.hf_config is not None:
            extras = [
                f
                for f in ("head_dim", "base", "max_position_embeddings", "partial_rotary_factor")
                if getattr(args, f) is not None
            ]
            if extras:
                msg = f"--{extras[0].replace('_', '-')} goes with --scaling; a config.json states its own"
                raise UsageError(msg)
            source = export.source_from_config(args.hf_config)
        else:
            source = _scaling_source(args)
        options = export.ExportOptions(
            positions=tuple(export.parse_positions(args.positions)) if args.positions else (),
            default_positions=not args.no_default_positions,
            layouts=tuple(dict.fromkeys(args.layout or export.LAYOUTS)),
            forms=tuple(dict.fromkeys(args.form or export.FORMS)),
            seed=args.seed,
            binary=args.binary,
        )
        names = export.export(args.out, source, options)
    except (UsageError, ValueError) as exc:
        return _usage(str(exc))
    except export.ExportError as exc:  # named, and an earlier export is kept
        if exc.filesystem:  # a file that cannot be written (full disk, permissions): exit 2, one line
            return _usage(str(exc))
        print(f"posenc-ref: error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL  # the export itself failed (a bug in posenc-ref)
    for line in export.summary(args.out, names, time.perf_counter() - start):
        print(line)
    print(f"check against them: posenc-ref check ADAPTER --golden {args.out}")
    return 0


def _run_golden(args: argparse.Namespace) -> int:
    action = getattr(args, "golden_command", None)
    if action is None:
        return _usage("golden needs an action: generate, lint or export")
    try:
        if action == "generate":
            from .golden import generate
        elif action == "lint":
            # lint imports these where it validates and reproduces; ask for them here, by name
            import jsonschema  # noqa: F401
            import mpmath  # noqa: F401

            from .golden import lint
        else:
            return _run_export(args)
    except ImportError as exc:
        return _usage(f"golden {action} needs the test extras (pip install 'posenc-ref[test]'): {exc}")
    if action == "generate":
        target = pathlib.Path(args.out) if args.out else generate.VECTORS_DIR
        if args.check:
            problems = generate.check(target)
            for name in problems:
                print(f"would change: {name}")
            print(
                "golden files are up to date" if not problems else f"{len(problems)} golden files out of date"
            )
            return 1 if problems else 0
        if target.exists() and not target.is_dir():
            return _usage(f"--out {args.out!r} is a file, not a directory")
        changed = generate.write(target)
        print(f"wrote {len(changed)} changed files" + (f": {', '.join(changed)}" if changed else ""))
        return 0
    directory = pathlib.Path(args.directory) if args.directory else None
    if directory is not None and not (directory / "index.json").is_file():
        return _usage(f"lint DIR must be a golden directory with an index.json; got {args.directory!r}")
    try:
        problems = lint.lint(
            directory or lint.VECTORS_DIR,
            reproduce=not args.no_reproduce,
            precision=not args.no_precision,
            log=print,
        )
    except (GoldenError, ValueError, KeyError) as exc:
        problems = [f"cannot be linted: {type(exc).__name__}: {exc}"]
    for problem in problems:
        print(f"LINT: {problem}")
    plural = "s" if len(problems) > 1 else ""
    print("golden lint: OK" if not problems else f"golden lint: {len(problems)} problem{plural}")
    return 1 if problems else 0


# --- the parser ------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="posenc-ref",
        description="posenc-ref: reference positional encodings and their conformance suite",
    )
    parser.add_argument("--version", action="version", version=f"posenc-ref {library_version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = {
        "info": ("list backends, versions and float64 availability", None, _run_info),
        "check": ("run the conformance suite against an adapter", _add_check, _run_check),
        "golden": ("generate, lint or export golden vectors", _add_golden, _run_golden),
        "matrix": ("a table of how several implementations conform", _add_matrix, _run_matrix),
    }
    for name, (help_text, add_arguments, run) in commands.items():
        sp = sub.add_parser(name, help=help_text)
        if add_arguments is not None:
            add_arguments(sp)
        sp.set_defaults(run=run)
    return parser


def _silence_stdout() -> None:
    """Point standard output at /dev/null (its reader went away), so Python's exit flush cannot fail."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args))
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other CLIs do
        _silence_stdout()
        return 1
    except Exception as exc:  # a bug of the tool: its own exit code, never 1 (FAIL)
        print(traceback.format_exc().rstrip(), file=sys.stderr)
        print(f"posenc-ref: internal error (a bug in posenc-ref, not a verdict): {exc!r}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
