"""The argument checks and the one home of every error message (posenc_ref/_validate.py)."""

from __future__ import annotations

import ast
import builtins
import math
import pathlib

import numpy as np
import pytest

from posenc_ref import _validate

LIBRARY = pathlib.Path(_validate.__file__).parent
_EXCEPTIONS = {name for name in dir(builtins) if isinstance(getattr(builtins, name), type)}
_EXCEPTIONS = {n for n in _EXCEPTIONS if issubclass(getattr(builtins, n), BaseException)}


def _modules() -> list[pathlib.Path]:
    return sorted(p for p in LIBRARY.glob("*.py") if p.name != "_validate.py")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_no_exception_is_built_outside_validate(path: pathlib.Path) -> None:
    """Every raise outside _validate.py raises what a _validate builder made (one wording)."""
    tree = ast.parse(path.read_text())
    offenders = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _EXCEPTIONS:
            offenders.append(f"{path.name}:{node.lineno} calls {node.func.id}(...)")
        if isinstance(node, ast.Raise) and node.exc is not None and not isinstance(node.exc, ast.Call):
            offenders.append(f"{path.name}:{node.lineno} raises a prepared object")
    assert not offenders, "build messages with _validate.value_error/type_error: " + "; ".join(offenders)


def _code_strings(path: pathlib.Path) -> list[str]:
    """String literals of a module that are not docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("wording", ["must be", "must have", "float64 here", "even positive integer"])
def test_shared_wordings_live_only_in_validate(wording: str) -> None:
    """ "no float64 here" had three wordings and "dim must be even" three copies before issue 16; the
    "<name> must be <rule>" form is built by _validate alone, and shared rules have one spelling there."""
    places = [p.name for p in _modules() if any(wording in s for s in _code_strings(p))]
    assert not places, f"{wording!r} is spelled outside _validate.py in {places}"
    assert wording in (LIBRARY / "_validate.py").read_text() or wording == "must have"


def test_no_private_helper_of_a_family_module_is_imported_elsewhere() -> None:
    """relative.py's private helpers were imported by six modules; shared code lives in _validate/_compat."""
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("_"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    offenders.append(f"{path.name} imports {private} from {node.module}")
    assert not offenders, offenders


class TestMessages:
    def test_value_error_format(self) -> None:
        err = _validate.value_error(
            "layout", "one of 'half', 'interleaved'", "neox", hint="GPT-NeoX uses 'half'"
        )
        assert isinstance(err, ValueError)
        assert str(err) == "layout must be one of 'half', 'interleaved'; got 'neox' (GPT-NeoX uses 'half')"

    def test_type_error_names_the_type(self) -> None:
        err = _validate.type_error("dim", "an integer", 2.0)
        assert isinstance(err, TypeError)
        assert str(err) == "dim must be an integer; got 2.0 of type float"

    def test_text_is_shown_verbatim(self) -> None:
        err = _validate.value_error("q", "2-dimensional", _validate.text("shape (3,)"))
        assert str(err) == "q must be 2-dimensional; got shape (3,)"

    def test_long_values_are_shortened(self) -> None:
        assert len(str(_validate.value_error("x", "short", list(range(1000))))) < 160


class TestScalars:
    @pytest.mark.parametrize(
        ("value", "kwargs", "error", "pattern"),
        [
            (True, {}, TypeError, r"^n must be an integer; got True of type bool"),
            (1.0, {}, TypeError, r"^n must be an integer; got 1\.0 of type float"),
            (0, {}, ValueError, r"^n must be a positive integer; got 0$"),
            (-1, {"minimum": 0}, ValueError, r"^n must be an integer >= 0; got -1$"),
            (
                2**40,
                {"maximum": 8, "reason": "why"},
                ValueError,
                r"^n must be an integer <= 8; got 1099511627776 \(why\)",
            ),
        ],
    )
    def test_check_int(self, value, kwargs, error, pattern) -> None:
        with pytest.raises(error, match=pattern):
            _validate.check_int(value, "n", **kwargs)

    def test_check_int_accepts_numpy_integers(self) -> None:
        assert _validate.check_int(np.int16(3), "n") == 3

    @pytest.mark.parametrize(
        ("value", "pattern"),
        [
            (math.nan, r"^r must be finite; got nan"),
            (10**400, r"^r must be finite; got 1000"),  # a Python int beyond float range
            ("1", r"^r must be a real number; got '1' of type str"),
            (0.0, r"^r must be > 0\.0; got 0\.0"),
        ],
    )
    def test_check_real(self, value, pattern) -> None:
        with pytest.raises((TypeError, ValueError), match=pattern):
            _validate.check_real(value, "r", exclusive_minimum=0.0)

    def test_check_choice_non_string_is_a_type_error(self) -> None:
        with pytest.raises(TypeError, match=r"^form must be one of 'a', 'b'; got \{1\} of type set"):
            _validate.check_choice({1}, "form", ("a", "b"))

    def test_check_choice_close_match(self) -> None:
        with pytest.raises(
            ValueError, match=r"^form must be one of 'half', 'interleaved'; got 'halff' \(did"
        ):
            _validate.check_choice("halff", "form", ("half", "interleaved"))

    def test_check_sequence_refuses_sets_and_strings(self) -> None:
        for value in ({1.0, 2.0}, "ab", {"a": 1}):
            with pytest.raises(TypeError, match=r"^s must be a list"):
                _validate.check_sequence(value, "s", rule="a list")

    def test_broadcast_shapes_names_the_misfit(self) -> None:
        assert _validate.broadcast_shapes(a=(2, 1), b=(3,)) == (2, 3)
        assert _validate.broadcast_shapes(a=(1,), b=(0,)) == (0,)
        with pytest.raises(
            ValueError, match=r"^b must be broadcastable to the shape \(2, 3\) of a; got shape \(4,\)"
        ):
            _validate.broadcast_shapes(a=(2, 3), b=(4,))
