"""Render the golden files' JSON Schema (draft 2020-12) as compact MyST Markdown.

Used at build time for the golden-format page, so the page cannot drift from
``posenc_ref_conformance/golden/golden_schema_v1.json``.  One table per object: a row per
key with whether it is required, its type (linked to the definition it refers to) and its
meaning (the schema's ``description``, plus constraints).  Nested anonymous objects
(``provenance``, ``checksum``, the items of ``files``) are rows of their parent with dotted
keys (``provenance.oracle``, ``files[].sha256``).  The
``Inputs_f`` / ``Outputs_f`` / ``Acceptable_f`` definitions of each canonical function
share one table.  That objects are closed (``additionalProperties: false``) is said once.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mdtext import md_escape, md_literal

__all__ = ["render_schema"]

_PER_FUNCTION = re.compile(r"^(Inputs|Outputs|Acceptable)_(\w+)$")
#: Top-level definitions first, then value types; the rest (per function) after them.
_MAIN = ("GoldenFile", "Case", "Index")
#: The definitions of the schema being rendered (a key that only refers to a definition
#: takes that definition's description as its meaning).
_DEFS: dict[str, Any] = {}


def render_schema(schema: dict[str, Any], *, source: str, download: str) -> str:
    """The schema page's Markdown; ``download`` is the schema file's path for ``{download}``."""
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    _DEFS.clear()
    _DEFS.update(defs)
    closed = all(node.get("additionalProperties") is False for node in _objects(defs))
    out = [
        f"Rendered from {md_literal(source)} at build time "
        f"({{download}}`download it <{download}>`; dialect {md_literal(schema.get('$schema', '?'))}).",
        "",
    ]
    if schema.get("description"):
        out += [md_escape(schema["description"]), ""]
    if "oneOf" in schema:
        out += [f"A file is {_type(schema)}.", ""]
    if closed:
        out += [
            "Every object below is closed: a key it does not list is an error "
            '(`"additionalProperties": false`). **req.** marks the keys that must be present.',
            "",
        ]
    functions: dict[str, dict[str, dict[str, Any]]] = {}
    values = []
    for name, node in defs.items():
        match = _PER_FUNCTION.match(name)
        if match:
            functions.setdefault(match.group(2), {})[match.group(1)] = node
        elif name not in _MAIN:
            values.append(name)
    for name in [n for n in _MAIN if n in defs]:
        out += _section(name, defs[name], closed=closed)
    out += ["### Values", ""]
    for name in values:
        if _is_object(defs[name]):
            out += _section(name, defs[name], closed=closed, level="####")
        else:
            out += [f"({_label(name)})=", f"#### {md_literal(name)}", ""]
            out += [f"{_meaning(defs[name]) or 'A value'}: {_type(defs[name])}.", ""]
    if functions:
        out += ["### Inputs and outputs of each function", ""]
        out += [
            "The `inputs`, `expected` and `acceptable` objects of a case, per canonical function. "
            "`acceptable` may hold any of the `expected` keys, with the same types.",
            "",
        ]
        for function, parts in functions.items():
            out += _function_section(function, parts, closed=closed)
    return "\n".join(out) + "\n"


def _objects(defs: dict[str, Any]) -> list[dict[str, Any]]:
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                found.append(node)
            for key in ("properties", "items", "additionalProperties"):
                sub = node.get(key)
                if isinstance(sub, dict):
                    for value in sub.values() if key == "properties" else [sub]:
                        walk(value)

    for node in defs.values():
        walk(node)
    return found


def _label(name: str) -> str:
    return f"golden-def-{_slug(name)}"


def _section(name: str, node: dict[str, Any], *, closed: bool, level: str = "###") -> list[str]:
    lines = [f"({_label(name)})=", f"{level} {md_literal(name)}", ""]
    if node.get("description"):
        lines += [md_escape(node["description"]) + ".", ""]
    lines += ["| key | req. | meaning | type |", "|---|---|---|---|"]
    lines += _rows(node, prefix="")
    lines += ["", *_open_note(node, closed)]
    return lines


def _function_section(function: str, parts: dict[str, dict[str, Any]], *, closed: bool) -> list[str]:
    """One table for the ``inputs`` and ``expected`` keys of ``function``, under a bold line."""
    inputs = parts.get("Inputs", {})
    lines = [f"({_label('Inputs_' + function)})="]
    summary = f": {md_escape(inputs['description'])}." if inputs.get("description") else ""
    lines += [f"**{md_literal(function)}**{summary}", ""]
    lines += ["| key | req. | meaning | type |", "|---|---|---|---|"]
    if inputs:
        lines += _rows(inputs, prefix="inputs.")
    if "Outputs" in parts:
        lines += _rows(parts["Outputs"], prefix="expected.")
    lines.append("")
    for part in parts.values():
        lines += _open_note(part, closed)
    return lines


def _rows(node: dict[str, Any], *, prefix: str) -> list[str]:
    required = set(node.get("required", []))
    rows = []
    for key, sub in node.get("properties", {}).items():
        name = md_literal(prefix + key, in_table=True)
        req = "yes" if key in required else ""
        if _is_object(sub) and "$ref" not in sub:
            rows.append(f"| {name} | {req} | {_meaning(sub)} | object |")
            rows += _rows(sub, prefix=f"{prefix}{key}.")
            continue
        items = sub.get("items") if isinstance(sub, dict) else None
        if sub.get("type") == "array" and _is_object(items) and "$ref" not in items:
            rows.append(f"| {name} | {req} | {_meaning(sub)} | array of objects |")
            rows += _rows(items, prefix=f"{prefix}{key}[].")
            continue
        rows.append(f"| {name} | {req} | {_meaning(sub)} | {_type(sub)} |")
    return rows


def _open_note(node: dict[str, Any], closed: bool) -> list[str]:
    add = node.get("additionalProperties")
    if add is False and closed:
        return []
    if add is False:
        return ["No other keys are allowed.", ""]
    if isinstance(add, dict):
        return [f"Other keys map to: {_type(add)}.", ""]
    return []


def _meaning(node: Any) -> str:
    if not isinstance(node, dict):
        return ""
    text = node.get("description", "")
    if not text and "$ref" in node:
        text = _DEFS.get(node["$ref"].rsplit("/", 1)[-1], {}).get("description", "")
    desc = md_escape(text)
    extra = _constraints(node)
    if extra:
        desc = f"{desc} ({extra})" if desc else extra
    return desc


def _is_object(node: Any) -> bool:
    return isinstance(node, dict) and (node.get("type") == "object" or "properties" in node)


def _type(node: Any) -> str:
    if node is True:
        return "anything"
    if not isinstance(node, dict):
        return "?"
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"{{ref}}`{name} <{_label(name)}>`"
    if "const" in node:
        return md_literal(json.dumps(node["const"]), in_table=True)
    if "enum" in node:
        return "one of " + ", ".join(md_literal(json.dumps(v), in_table=True) for v in node["enum"])
    for key, word in (("oneOf", " or "), ("anyOf", " or "), ("allOf", " and ")):
        if key in node:
            return word.join(_type(sub) for sub in node[key])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(_type({**node, "type": k}) for k in kind)
    if kind == "array":
        if "prefixItems" in node:
            return "array [" + ", ".join(_type(s) for s in node["prefixItems"]) + "]"
        items = node.get("items")
        return f"array of {_type(items) if items is not None else 'anything'}"
    if kind == "object" and "properties" not in node:
        add = node.get("additionalProperties")
        return f"object of {_type(add)}" if isinstance(add, dict) else "object"
    return "anything" if kind is None else str(kind)


def _constraints(node: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("pattern", "pattern"),
        ("format", "format"),
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ):
        if key in node:
            value = node[key]
            text = md_literal(value, in_table=True) if key in {"pattern", "format"} else str(value)
            parts.append(f"{label} {text}")
    if node.get("uniqueItems"):
        parts.append("unique items")
    if "default" in node:
        parts.append(f"default {md_literal(json.dumps(node['default']), in_table=True)}")
    return ", ".join(parts)


def _slug(name: str) -> str:
    return "".join(c.lower() if c.isalnum() else "-" for c in name).strip("-")
