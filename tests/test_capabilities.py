"""Capabilities: per-function dtypes and precision classes, and every malformed declaration rejected."""

from __future__ import annotations

import pytest

from posenc_ref_conformance.adapters.base import Capabilities


def test_per_function_dtypes_and_phase() -> None:
    caps = Capabilities.from_any(
        {
            "dtypes": {"rope_frequencies": ["float32"], "default": ["float64", "float32"]},
            "phase": {"rope_cos_sin": "product", "default": "exact"},
        }
    )
    assert caps.dtypes_of("rope_frequencies") == ("float32",)
    assert caps.dtypes_of("apply_rope") == ("float64", "float32")
    assert caps.phase_of("rope_cos_sin") == "product" and caps.phase_of("sinusoidal") == "exact"


def test_defaults() -> None:
    caps = Capabilities()
    assert caps.phase_of("rope") == "exact"  # undeclared is exact: no precision class is assumed
    assert caps.dtypes_of("rope") == ("float64", "float32")
    partial = Capabilities(dtypes={"rope": ["float32"]})
    assert partial.dtypes_of("rope") == ("float32",) and partial.dtypes_of("t5_bucket") == (
        "float64",
        "float32",
    )


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"phase": "approximate"}, ValueError, r"^phase must be one of \['exact', 'product'\]"),
        ({"phase": {"ropes": "exact"}}, ValueError, "^phase keys must be canonical functions"),
        ({"dtypes": {"rope": []}}, ValueError, r"^dtypes\['rope'\] must name at least one"),
        ({"dtypes": {"rope": ["float16"]}}, ValueError, r"^dtypes\['rope'\] must be chosen from"),
        ({"dtypes": "float32"}, TypeError, "^dtypes must be a list of strings"),
        ({"layouts": ["neox"]}, ValueError, "^layouts must be chosen from"),
        ({"functions": ["rope_cos_sins"]}, ValueError, "^functions must be chosen from"),
        ({"invalid_inputs": "yes"}, TypeError, "^invalid_inputs must be True or False"),
        ({"error_types": "KeyError"}, TypeError, "^error_types must be a list of strings"),
        ({"notes": {"rope": 3}}, TypeError, "^notes must be a dict"),
    ],
)
def test_malformed(fields: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        Capabilities.from_any(fields)


def test_option_qualified_and_per_function_declarations() -> None:
    caps = Capabilities.from_any(
        {
            "phase": {"sinusoidal:fairseq": "product", "sinusoidal": "exact", "default": "product"},
            "error_types": {"rope_frequencies": ["KeyError"]},
            "invalid_inputs": {"t5_bucket": False},
        }
    )
    assert (
        caps.phase_of("sinusoidal", "fairseq") == "product"
        and caps.phase_of("sinusoidal", "vaswani") == "exact"
    )
    assert caps.error_types_of("rope_frequencies") == ("KeyError",) and caps.error_types_of("t5_bucket") == ()
    assert caps.invalid_inputs_of("t5_bucket") is False and caps.invalid_inputs_of("alibi_slopes") is True
    with pytest.raises(ValueError, match=r"^phase keys must be canonical functions \(or function:option\)"):
        Capabilities(phase={"sinus:fairseq": "exact"})
