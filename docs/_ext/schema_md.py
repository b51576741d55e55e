"""Render a JSON Schema (draft 2020-12 or 07) as MyST Markdown tables.

Used at build time for the golden-file format page, so the page cannot drift from
``posenc_ref_conformance/golden/schema.json``.  Each object definition becomes a section with
one row per property: name, whether it is required, its type, and its description.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["render_schema"]


def render_schema(schema: dict[str, Any], *, source: str) -> str:
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    out: list[str] = []
    title = schema.get("title", "Golden file")
    out.append(f"Rendered from `{source}` at build time")
    if "$id" in schema:
        out[-1] += f" (`$id`: `{schema['$id']}`)"
    if "$schema" in schema:
        out[-1] += f"; dialect `{schema['$schema']}`"
    out.append(".\n")
    if schema.get("description"):
        out.append(_clean(schema["description"]) + "\n")
    out.append(f"(golden-def-root)=\n### `{title}` (the file)\n")
    out.extend(_object_section(schema))
    for name, sub in defs.items():
        out.append(f"(golden-def-{_slug(name)})=\n### `{name}`\n")
        if sub.get("description"):
            out.append(_clean(sub["description"]) + "\n")
        if _is_object(sub):
            out.extend(_object_section(sub))
        else:
            out.append(f"Type: {_type(sub)}\n")
            extra = _constraints(sub)
            if extra:
                out.append(f"Constraints: {extra}\n")
    out.append("#### The schema itself\n")
    out.append("```{code-block} json\n:class: schema-source\n")
    out.append(json.dumps(schema, indent=2, ensure_ascii=False))
    out.append("```\n")
    return "\n".join(out)


def _object_section(node: dict[str, Any]) -> list[str]:
    props = node.get("properties", {})
    required = set(node.get("required", []))
    lines = []
    if not props:
        lines.append(f"Type: {_type(node)}\n")
        return lines
    lines.append("| key | required | type | meaning |")
    lines.append("|---|---|---|---|")
    for key, sub in props.items():
        desc = _clean(sub.get("description", ""))
        extra = _constraints(sub)
        if extra:
            desc = f"{desc} ({extra})" if desc else extra
        lines.append(f"| `{key}` | {'yes' if key in required else 'no'} | {_type(sub)} | {_cell(desc)} |")
    lines.append("")
    add = node.get("additionalProperties")
    if add is False:
        lines.append("No other keys are allowed.\n")
    elif isinstance(add, dict):
        lines.append(f"Other keys map to: {_type(add)}.\n")
    pattern_props = node.get("patternProperties", {})
    for pattern, sub in pattern_props.items():
        lines.append(f"Keys matching `{pattern}` map to: {_type(sub)}.\n")
    return lines


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or "properties" in node


def _type(node: Any) -> str:
    if node is True:
        return "anything"
    if not isinstance(node, dict):
        return "?"
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if node["$ref"] == "#":
            return "{ref}`the file <golden-def-root>`"
        return f"{{ref}}`{name} <golden-def-{_slug(name)}>`"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            return " or ".join(_type(sub) for sub in node[key])
    if "allOf" in node:
        return " and ".join(_type(sub) for sub in node["allOf"])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(_type({**node, "type": k}) for k in kind)
    if kind == "array":
        items = node.get("items")
        inner = _type(items) if items is not None else "anything"
        if "prefixItems" in node:
            inner = "[" + ", ".join(_type(s) for s in node["prefixItems"]) + "]"
            return f"array {inner}"
        return f"array of {inner}"
    if kind == "object" and "properties" not in node:
        add = node.get("additionalProperties")
        if isinstance(add, dict):
            return f"object of {_type(add)}"
        return "object"
    if kind is None:
        return "anything"
    return f"{kind}"


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
            parts.append(f"{label} `{value}`" if key in {"pattern", "format"} else f"{label} {value}")
    if node.get("uniqueItems"):
        parts.append("unique items")
    if "default" in node:
        parts.append(f"default `{json.dumps(node['default'])}`")
    return ", ".join(parts)


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _slug(name: str) -> str:
    return "".join(c.lower() if c.isalnum() else "-" for c in name).strip("-")
