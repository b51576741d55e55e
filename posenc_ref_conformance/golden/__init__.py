"""Golden vectors: language-neutral JSON files of exact expected values, and their tooling.

``vectors/*.json`` are the data (one canonical function per file, described by
``golden_schema_v1.json``); :func:`load` reads them for the runner.  The
generator and lint live in :mod:`.generate` and :mod:`.lint`; they need mpmath
(and jsonschema for lint) and are imported only when used.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

__all__ = ["SCHEMA_PATH", "VECTORS_DIR", "load", "load_index"]

VECTORS_DIR = pathlib.Path(__file__).with_name("vectors")
SCHEMA_PATH = pathlib.Path(__file__).with_name("golden_schema_v1.json")


def load_index(directory: pathlib.Path = VECTORS_DIR) -> dict[str, Any]:
    """The manifest ``index.json``."""
    return json.loads((directory / "index.json").read_text(encoding="ascii"))


def load(directory: pathlib.Path = VECTORS_DIR) -> list[dict[str, Any]]:
    """Every golden file listed in the manifest, parsed, in manifest order."""
    index = load_index(directory)
    return [json.loads((directory / entry["file"]).read_text(encoding="ascii")) for entry in index["files"]]
