"""The adapter-protocol pages' generated parts (``docs/_ext/protocol_md.py``) say what the data says.

- the variants page has a row for every value of every axis, names each built-in adapter that
  declares a non-canonical value in that value's row, and counts the golden cases assuming it;
- the invalid-inputs table has one row per invalid-input golden case, with its error and parameter.
"""

from __future__ import annotations

import importlib
import pathlib
import re
import sys

from posenc_ref_conformance import golden, variants
from posenc_ref_conformance.adapters import LIBRARIES

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import protocol_md  # noqa: E402


def _rows(text: str, axis: str) -> dict[str, list[str]]:
    """The value rows of ``axis``'s table: value -> its cells."""
    section = re.split(r"^#{2,3} ", text.split(f"### Axis `{axis}`", 1)[1], maxsplit=1, flags=re.M)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        match = re.match(r"`([\w-]+)`", cells[0]) if line.startswith("| `") else None
        if match:
            rows[match.group(1)] = cells
    return rows


def test_every_axis_value_has_a_row_with_its_adapters_and_case_count() -> None:
    text = protocol_md.variants_page(ROOT)
    assumed: dict[tuple[str, str], int] = {}
    for doc in golden.load():
        for case in doc["cases"]:
            for axis, value in case.get("assumes", {}).items():
                assumed[axis, value] = assumed.get((axis, value), 0) + 1
    for axis, spec in variants.AXES.items():
        rows = _rows(text, axis)
        assert list(rows) == list(spec.values), axis
        for value, cells in rows.items():
            assert cells[-1] == str(assumed.get((axis, value), 0)), (axis, value)
    declaring = _rows(text, "yarn-attention-factor")["deepseek"][4]
    assert "`megatron_core`" in declaring and "`vllm:deepseek`" in declaring
    assert "`megatron_core`" not in _rows(text, "yarn-truncate")["ignored"][4]


def test_the_adapters_named_are_exactly_those_declaring_the_value() -> None:
    text = protocol_md.variants_page(ROOT)
    for name, module_name in LIBRARIES.items():
        module = importlib.import_module(f"posenc_ref_conformance.adapters.{module_name}")
        for variant, cls in module.ADAPTERS.items():
            spec = name if variant == "default" else f"{name}:{variant}"
            declared = cls.capabilities.variants_of("rope_frequencies")
            for axis, values in variants.AXES.items():
                rows = _rows(text, axis)
                for value in list(values.values)[1:]:
                    shown = f"`{spec}`" in rows[value][4].split(", ")
                    if declared[axis] == value:
                        assert shown, (spec, axis, value)


def test_the_invalid_inputs_table_lists_every_invalid_case() -> None:
    text = protocol_md.invalid_inputs_table(ROOT)
    invalid = [(d["function"], c) for d in golden.load() for c in d["cases"] if c["result"] == "invalid"]
    assert len(text.strip().splitlines()) == 2 + len(invalid)
    for function, case in invalid:
        expected = case["expected"]
        row = f"| `{function}` | `{case['id']}` | `{expected['error']}` | `{expected['parameter']}` |"
        assert row in text, case["id"]
