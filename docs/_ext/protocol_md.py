"""Fragments of the adapter-protocol pages, made from the suite's own data (Markdown).

- :func:`variants_page`: every variant axis, its values, formulas, and who computes each, from
  the axes (``posenc_ref_conformance/variants.py``), the golden cases that assume each value
  (their ``assumes``, found by the generator) and the built-in adapters that declare each value
  (their ``Capabilities.variants``);
- :func:`invalid_inputs_table`: every invalid-input golden case, the error it expects and about
  which parameter.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from mdtext import md_escape, md_literal

__all__ = ["invalid_inputs_table", "variants_page"]


def _golden_docs(root: Path) -> list[dict]:
    paths = sorted((root / "posenc_ref_conformance" / "golden" / "vectors").glob("*.json"))
    return [doc for doc in (json.loads(path.read_bytes()) for path in paths) if "cases" in doc]


def _cases_assuming(root: Path) -> dict[tuple[str, str], list[str]]:
    """(axis, value) -> the ids of the golden cases that assume it."""
    out: dict[tuple[str, str], list[str]] = {}
    for doc in _golden_docs(root):
        for case in doc["cases"]:
            for axis, value in case.get("assumes", {}).items():
                out.setdefault((axis, value), []).append(case["id"])
    return out


def _adapters_declaring() -> dict[tuple[str, str], list[str]]:
    """(axis, value) -> the built-in adapter specs whose declaration differs from canonical there."""
    from posenc_ref_conformance.adapters import LIBRARIES
    from posenc_ref_conformance.adapters.base import CANONICAL_FUNCTIONS, VARIANTS

    out: dict[tuple[str, str], list[str]] = {}
    for name, module_name in LIBRARIES.items():
        module = importlib.import_module(f"posenc_ref_conformance.adapters.{module_name}")
        for variant, cls in module.ADAPTERS.items():
            spec = name if variant == "default" else f"{name}:{variant}"
            caps = cls.capabilities
            functions = [f for f in CANONICAL_FUNCTIONS if caps.functions is None or f in caps.functions]
            for axis, values in VARIANTS.items():
                chosen = {caps.variants_of(f)[axis] for f in functions}
                for value in sorted(chosen - {values[0]}):
                    out.setdefault((axis, value), []).append(spec)
    return out


def variants_page(root: Path) -> str:
    """Per topic, per axis: a table of values (meaning, formula, used by, adapters, cases)."""
    from posenc_ref_conformance import variants

    cases, adapters = _cases_assuming(root), _adapters_declaring()
    lines: list[str] = []
    topics = list(dict.fromkeys(axis.topic for axis in variants.AXES.values()))
    for topic in topics:
        lines += [f"## Topic `{topic}`", ""]
        presets = variants.PRESETS.get(topic, {})
        for name, choice in presets.items():
            spelled = ", ".join(f"`{a}: {v}`" for a, v in choice.items())
            lines += [f'Preset `{{"{topic}": "{name}"}}`: the same as {spelled}.', ""]
        for axis in variants.axes_of(topic):
            spec = variants.AXES[axis]
            lines += [f"### Axis `{axis}`", "", md_escape(spec.what), ""]
            lines += [
                "| value | what it computes | formula | used by | built-in adapters declaring it | cases |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            for index, (value, meaning) in enumerate(spec.values.items()):
                label = f"`{value}`" + (" (canonical)" if index == 0 else "")
                declared = "every adapter that declares nothing" if index == 0 else ""
                declared = declared or ", ".join(f"`{s}`" for s in adapters.get((axis, value), [])) or "none"
                assumed = cases.get((axis, value), [])
                formula = md_literal(meaning.formula, in_table=True)
                lines.append(
                    f"| {label} | {md_escape(meaning.meaning)} | {formula} "
                    f"| {md_escape(', '.join(meaning.used_by))} | {declared} | {len(assumed)} |"
                )
            lines.append("")
            for value in spec.values:
                assumed = cases.get((axis, value), [])
                if assumed:
                    shown = ", ".join(f"`{c}`" for c in assumed)
                    lines += [f"Cases assuming `{axis}: {value}`: {shown}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def invalid_inputs_table(root: Path) -> str:
    """One row per function: its invalid-input cases, each with the error and the parameter it names."""
    lines = ["| function | case | expects | about | data-dependent |", "| --- | --- | --- | --- | --- |"]
    for doc in _golden_docs(root):
        for case in doc["cases"]:
            if case["result"] != "invalid":
                continue
            expected = case["expected"]
            dependent = "yes" if "DataDependentCheck" in case["flags"] else ""
            lines.append(
                f"| `{doc['function']}` | `{case['id']}` | `{expected['error']}` "
                f"| `{expected['parameter']}` | {dependent} |"
            )
    return "\n".join(lines) + "\n"
