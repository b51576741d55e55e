"""The JSON Schema of the golden files, built from the function specs so the two cannot drift.

``posenc-ref golden generate`` writes it to ``golden_schema_v1.json`` (draft 2020-12): every object
lists ``required`` and sets ``additionalProperties: false``; each canonical function gets its own
``Inputs_*`` / ``Outputs_*`` definitions.  Lint validates every file against it.
"""

from __future__ import annotations

import json
from typing import Any

from .functions import FUNCTIONS, KINDS

__all__ = ["build_schema", "schema_bytes"]


def ref(n: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{n}"}


INT = {"type": "integer"}
NUM = {"type": "number"}
NULL_INT = {"type": ["integer", "null"]}


def _value_defs() -> dict[str, Any]:
    """Arrays, tolerances, notes, errors and RoPE scaling dicts."""
    defs = {}
    defs["Shape"] = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    defs["FloatArray"] = {
        "description": "float64 values, row-major: exact hex (C99 %a) and the shortest round-trip "
        "decimal of each",
        "type": "object",
        "required": ["dtype", "shape", "hex", "decimal"],
        "additionalProperties": False,
        "properties": {
            "dtype": {"const": "float64"},
            "shape": ref("Shape"),
            "hex": {
                "type": "array",
                "items": {"type": "string", "pattern": "^-?0x[01]\\.[0-9a-f]+p[+-][0-9]+$"},
            },
            "decimal": {"type": "array", "items": NUM},
        },
    }
    defs["IntArray"] = {
        "type": "object",
        "required": ["dtype", "shape", "values"],
        "additionalProperties": False,
        "properties": {
            "dtype": {"const": "int64"},
            "shape": ref("Shape"),
            "values": {"type": "array", "items": INT},
        },
    }
    defs["BoolArray"] = {
        "type": "object",
        "required": ["dtype", "shape", "values"],
        "additionalProperties": False,
        "properties": {
            "dtype": {"const": "bool"},
            "shape": ref("Shape"),
            "values": {"type": "array", "items": {"type": "boolean"}},
        },
    }
    defs["Positions"] = {
        "description": "int64 positions; a float array only in invalid-input cases",
        "oneOf": [ref("IntArray"), ref("FloatArray")],
    }
    defs["Tolerance"] = {
        "type": "object",
        "required": ["atol", "rtol", "maxUlp"],
        "additionalProperties": False,
        "properties": {
            "atol": {"type": "number", "minimum": 0},
            "rtol": {"type": "number", "minimum": 0},
            "maxUlp": {"type": "integer", "minimum": 0},
        },
    }
    defs["Tolerances"] = {
        "description": "per run dtype",
        "type": "object",
        "required": ["float64", "float32"],
        "additionalProperties": False,
        "properties": {"float64": ref("Tolerance"), "float32": ref("Tolerance")},
    }
    defs["Phase"] = {
        "description": "what the 'product' precision class bounds each element with: the element's "
        "angle is |positions[..]| * |frequencies[column]| (positions have the output's shape without "
        "its last axis); frequencyError is the relative error of the frequencies in unit roundoffs; "
        "scale the largest factor on an element",
        "type": "object",
        "required": ["positions", "frequencies", "frequencyError", "scale"],
        "additionalProperties": False,
        "properties": {
            "positions": ref("IntArray"),
            "frequencies": ref("FloatArray"),
            "frequencyError": {"type": "number", "minimum": 0},
            "scale": {"type": "number", "minimum": 0},
        },
    }
    defs["Note"] = {
        "type": "object",
        "required": ["bugType", "description", "links"],
        "additionalProperties": False,
        "properties": {
            "bugType": {
                "enum": [
                    "Functionality",
                    "ConventionMismatch",
                    "NumericalPrecision",
                    "EdgeCase",
                    "InvalidInput",
                    "KnownBug",
                ]
            },
            "description": {"type": "string"},
            "links": {"type": "array", "items": {"type": "string", "pattern": "^https://"}},
        },
    }
    defs["Error"] = {
        "type": "object",
        "required": ["error", "parameter"],
        "additionalProperties": False,
        "properties": {
            "error": {"enum": ["ValueError", "TypeError", "IndexError"]},
            "parameter": {"type": "string"},
        },
    }
    defs["RopeScaling"] = {
        "description": "HF rope_parameters / rope_scaling keys",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rope_type": {"type": "string"},
            "type": {"type": "string"},
            "factor": NUM,
            "original_max_position_embeddings": INT,
            "max_position_embeddings": INT,
            "beta_fast": NUM,
            "beta_slow": NUM,
            "mscale": NUM,
            "mscale_all_dim": NUM,
            "attention_factor": NUM,
            "truncate": {"type": "boolean"},
            "low_freq_factor": NUM,
            "high_freq_factor": NUM,
            "short_factor": {"type": "array", "items": NUM},
            "long_factor": {"type": "array", "items": NUM},
            "partial_rotary_factor": NUM,
            "rope_theta": NUM,
        },
    }
    return defs


def _kind_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one input kind (``functions.KINDS``)."""
    return {
        "positions": ref("Positions"),
        "float": ref("FloatArray"),
        "scalar": ref("FloatArray"),
        "float|null": {"oneOf": [ref("FloatArray"), {"type": "null"}]},
        "bool|null": {"oneOf": [ref("BoolArray"), {"type": "null"}]},
        "int": INT,
        "int|null": NULL_INT,
        "int|pair": {"oneOf": [INT, {"type": "array", "items": INT, "minItems": 2, "maxItems": 2}]},
        "number": NUM,
        "number|null": {"type": ["number", "null"]},
        "bool": {"type": "boolean"},
        "string": {"type": "string"},
        "options": {
            "type": "object",
            "additionalProperties": {"type": ["number", "boolean", "null", "integer"]},
        },
        "scaling|null": {"oneOf": [ref("RopeScaling"), {"type": "null"}]},
    }[kind]


def _signature_def() -> dict[str, Any]:
    """The call of a canonical function, as each golden file and index.json state it."""
    names = {"type": "array", "items": {"type": "string"}}
    return {
        "description": "how to call the canonical function: positional then keyword parameters "
        "(then dtype, the run's float dtype, when takesDtype), its outputs, the capability "
        "that gates each option, the kind of every input",
        "type": "object",
        "additionalProperties": False,
        "required": ["positional", "keyword", "takesDtype", "outputs", "options", "kinds"],
        "properties": {
            "positional": names,
            "keyword": names,
            "takesDtype": {"type": "boolean"},
            "outputs": names,
            "options": {"type": "object", "additionalProperties": {"type": "string"}},
            "kinds": {"type": "object", "additionalProperties": {"enum": list(KINDS)}},
        },
    }


_KINDS = {"float": "FloatArray", "int": "IntArray", "bool": "BoolArray"}


def _function_defs(defs: dict[str, Any]) -> list[dict[str, Any]]:
    """Inputs_/Outputs_/Acceptable_ definitions per function; returns the if/then rules of GoldenFile."""
    per_function = []
    for name, spec in FUNCTIONS.items():
        iname, oname = f"Inputs_{name}", f"Outputs_{name}"
        defs[iname] = {
            "type": "object",
            "required": list(spec.inputs),
            "additionalProperties": False,
            "properties": {param: _kind_schema(kind) for param, (kind, _) in spec.inputs.items()},
        }
        arr = ref(_KINDS[spec.output_kind])
        defs[oname] = {
            "type": "object",
            "required": list(spec.outputs),
            "additionalProperties": False,
            "properties": {o: arr for o in spec.outputs},
        }
        defs[f"Acceptable_{name}"] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {o: arr for o in spec.outputs},
        }
        per_function.append(
            {
                "if": {"properties": {"function": {"const": name}}},
                "then": {
                    "properties": {
                        "cases": {
                            "items": {
                                "properties": {"inputs": ref(iname), "acceptable": ref(f"Acceptable_{name}")},
                                "if": {"properties": {"result": {"const": "valid"}}},
                                "then": {"properties": {"expected": ref(oname)}},
                            }
                        }
                    }
                },
            }
        )
    return per_function


def _case_def() -> dict[str, Any]:
    """One case: id, comment, flags, result, inputs, expected (and optional extras)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "comment", "flags", "result", "inputs", "expected"],
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9_]+(/[A-Za-z0-9_.+-]+)+$"},
            "comment": {"type": "string"},
            "flags": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$"},
                "uniqueItems": True,
            },
            "result": {"enum": ["valid", "invalid"]},
            "inputs": {"type": "object"},
            "expected": {"type": "object"},
            "acceptable": {"type": "object"},
            "compare": {"enum": ["allclose", "exact", "causal_rowshift"]},
            "tolerances": ref("Tolerances"),
            "phase": ref("Phase"),
        },
        "allOf": [
            {"if": {"properties": {"result": {"const": "valid"}}}, "then": {"required": ["compare"]}},
            {
                "if": {"properties": {"result": {"const": "invalid"}}},
                "then": {
                    "properties": {"expected": ref("Error")},
                    "not": {
                        "anyOf": [
                            {"required": ["compare"]},
                            {"required": ["tolerances"]},
                            {"required": ["acceptable"]},
                            {"required": ["phase"]},
                        ]
                    },
                },
            },
        ],
    }


def _file_def(per_function: list[dict[str, Any]]) -> dict[str, Any]:
    """A golden file: header, provenance, notes, cases, checksum."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "schema",
            "formatVersion",
            "function",
            "scheme",
            "call",
            "signature",
            "inputTypes",
            "outputTypes",
            "castInputs",
            "dtypes",
            "header",
            "provenance",
            "notes",
            "numberOfCases",
            "cases",
            "checksum",
        ],
        "properties": {
            "schema": {"const": "golden_schema_v1.json"},
            "formatVersion": {"const": 1},
            "function": {"enum": list(FUNCTIONS)},
            "scheme": {"enum": sorted({s.scheme for s in FUNCTIONS.values()})},
            "call": {"type": "string"},
            "signature": ref("Signature"),
            "inputTypes": {"type": "object", "additionalProperties": {"type": "string"}},
            "outputTypes": {"type": "object", "additionalProperties": {"enum": ["float", "int", "bool"]}},
            "castInputs": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "dtypes": {
                "type": "array",
                "items": {"enum": ["float64", "float32", "int", "bool"]},
                "minItems": 1,
            },
            "header": {"type": "array", "items": {"type": "string"}},
            "provenance": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "generator",
                    "generatorVersion",
                    "oracle",
                    "oraclePrecisionDigits",
                    "checkPrecisionDigits",
                    "rounding",
                ],
                "properties": {
                    "generator": {"type": "string"},
                    "generatorVersion": {"type": "string"},
                    "oracle": {"type": "string"},
                    "oraclePrecisionDigits": {"type": "integer", "minimum": 60},
                    "checkPrecisionDigits": {"type": "integer", "minimum": 60},
                    "rounding": {"type": "string"},
                },
            },
            "tolerances": ref("Tolerances"),
            "notes": {"type": "object", "additionalProperties": ref("Note")},
            "numberOfCases": {"type": "integer", "minimum": 0},
            "cases": {"type": "array", "items": ref("Case")},
            "checksum": {
                "type": "object",
                "additionalProperties": False,
                "required": ["algorithm", "scope", "value"],
                "properties": {
                    "algorithm": {"const": "sha256"},
                    "scope": {"type": "string"},
                    "value": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                },
            },
        },
        "allOf": per_function,
    }


def _index_def() -> dict[str, Any]:
    """The manifest index.json."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["schema", "formatVersion", "generatorVersion", "totalCases", "casesPerScheme", "files"],
        "properties": {
            "schema": {"const": "golden_schema_v1.json"},
            "formatVersion": {"const": 1},
            "generatorVersion": {"type": "string"},
            "totalCases": {"type": "integer", "minimum": 0},
            "casesPerScheme": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "file",
                        "function",
                        "scheme",
                        "numberOfCases",
                        "sha256",
                        "call",
                        "signature",
                        "outputType",
                    ],
                    "properties": {
                        "file": {"type": "string", "pattern": "^[a-z0-9_]+\\.json$"},
                        "function": {"enum": list(FUNCTIONS)},
                        "scheme": {"type": "string"},
                        "numberOfCases": {"type": "integer", "minimum": 0},
                        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        "call": {"type": "string"},
                        "signature": ref("Signature"),
                        "outputType": {"enum": ["float", "int", "bool"]},
                    },
                },
            },
        },
    }


def build_schema() -> dict[str, Any]:
    """The schema as a dict."""
    defs = _value_defs()
    per_function = _function_defs(defs)
    defs["Signature"] = _signature_def()
    defs["Case"] = _case_def()
    defs["GoldenFile"] = _file_def(per_function)
    defs["Index"] = _index_def()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "golden_schema_v1.json",
        "title": "posenc-ref golden vectors, format version 1",
        "description": "One canonical function per file (GoldenFile) plus the manifest index.json (Index). "
        "See each file's header for the comparison rules.",
        "oneOf": [ref("GoldenFile"), ref("Index")],
        "$defs": defs,
    }
    return schema


def schema_bytes() -> bytes:
    """Canonical bytes of the schema file."""
    return (json.dumps(build_schema(), indent=1) + "\n").encode("ascii")
