"""The ``posenc-ref`` command line: a thin shell over library functions.

``posenc-ref --version`` prints the version; ``posenc-ref info`` lists each
array backend, whether it imports, its version, and whether float64 exists on
its default device.  Subcommands of the conformance suite register themselves
through :data:`SUBCOMMANDS` in :mod:`posenc_ref.cli`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from ._compat import has_float64

__all__ = ["BACKEND_MODULES", "backend_info", "main"]

#: Backend id -> (module to import for the version, namespace module to test).
BACKEND_MODULES: dict[str, tuple[str, str]] = {
    "numpy": ("numpy", "array_api_compat.numpy"),
    "array_api_strict": ("array_api_strict", "array_api_strict"),
    "mlx": ("mlx.core", "mlx.core"),
    "torch": ("torch", "array_api_compat.torch"),
    "jax.numpy": ("jax", "jax.numpy"),
    "dask.array": ("dask", "array_api_compat.dask.array"),
    "cupy": ("cupy", "array_api_compat.cupy"),
}


def backend_info() -> list[dict[str, Any]]:
    """One row per backend: ``name``, ``available``, ``version``, ``float64``, ``error``."""
    rows = []
    for name, (version_module, namespace_module) in BACKEND_MODULES.items():
        row: dict[str, Any] = {
            "name": name,
            "available": False,
            "version": None,
            "float64": None,
            "error": None,
        }
        try:
            module = importlib.import_module(version_module)
            xp = importlib.import_module(namespace_module)
            row["version"] = getattr(module, "__version__", None) or _mlx_version(module)
            row["float64"] = has_float64(xp)
            row["available"] = True
        except Exception as exc:  # an absent or broken backend is a row, not a crash
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:80]
        rows.append(row)
    return rows


def _mlx_version(module: Any) -> str | None:
    try:
        from importlib.metadata import version

        return version("mlx") if module.__name__.startswith("mlx") else None
    except Exception:
        return None


def _cmd_info(args: argparse.Namespace) -> int:
    print(f"posenc-ref {__version__}")
    print(f"{'backend':<18}{'imports':<9}{'version':<14}{'float64 on default device'}")
    for row in backend_info():
        if row["available"]:
            print(
                f"{row['name']:<18}{'yes':<9}{row['version'] or '?':<14}{'yes' if row['float64'] else 'no'}"
            )
        else:
            print(f"{row['name']:<18}{'no':<9}{'-':<14}-   ({row['error']})")
    return 0


#: Subcommand name -> (help, function adding arguments, function running it).
SUBCOMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {
    "info": ("list backends, versions and float64 availability", lambda p: None, _cmd_info),
}


def _register_conformance() -> None:
    try:
        from posenc_ref_conformance import cli as conformance_cli
    except ImportError:
        return
    SUBCOMMANDS.update(conformance_cli.SUBCOMMANDS)


def build_parser() -> argparse.ArgumentParser:
    _register_conformance()
    parser = argparse.ArgumentParser(prog="posenc-ref", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"posenc-ref {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments, run) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text)
        add_arguments(sp)
        sp.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
