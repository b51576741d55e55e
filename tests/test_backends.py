"""The one backend table (posenc_ref/backends.py): ids, aliases and every place that reads it."""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

from posenc_ref import backends
from posenc_ref_conformance.adapters import AdapterError, load_adapter
from tests.conftest import Backend, _marked_backends

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ids_are_unique_and_every_alias_names_one_backend() -> None:
    ids = [b.id for b in backends.BACKENDS]
    names = ids + [a for b in backends.BACKENDS for a in b.aliases]
    assert len(set(names)) == len(names)
    assert backends.resolve("jax").id == "jax.numpy" and backends.resolve("jax:x32").id == "jax.numpy:x32"
    assert backends.resolve("dask").id == "dask.array"
    assert all(backends.resolve(b.id) is b for b in backends.BACKENDS)


def test_jax_rows_say_how_x64_is_set() -> None:
    jax_rows = {b.id: b.jax_x64 for b in backends.BACKENDS if b.namespace_module == "jax.numpy"}
    assert jax_rows == {"jax.numpy": True, "jax.numpy:x32": False}
    assert all(b.jax_x64 is None for b in backends.BACKENDS if b.namespace_module != "jax.numpy")


@pytest.mark.parametrize(
    ("name", "error", "pattern"),
    [
        ("jaxx", ValueError, r"^backend must be one of 'numpy', .*'jax\.numpy'.*; got 'jaxx'"),
        ("torhc", ValueError, r"^backend must be one of .*; got 'torhc' \(did you mean 'torch'\?\)"),
        (3, TypeError, r"^backend must be one of .*; got 3"),
    ],
)
def test_unknown_names_are_refused(name: object, error: type, pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        backends.resolve(name)  # type: ignore[arg-type]
    with pytest.raises(error, match=pattern):
        backends.namespace(name)  # type: ignore[arg-type]


def test_namespace_imports_the_table_module() -> None:
    assert backends.namespace("numpy").__name__ == "array_api_compat.numpy"
    assert backends.namespace("np") is backends.namespace("numpy")
    assert backends.namespace("array-api-strict").__name__ == "array_api_strict"


def test_the_test_fixture_has_one_member_per_row() -> None:
    assert [b.value for b in Backend] == [b.id for b in backends.BACKENDS]
    assert Backend.JAX.value == "jax.numpy" and Backend.JAX_X32.value == "jax.numpy:x32"


@pytest.mark.parametrize("alias", ["np", "dask", "jax"])
def test_the_adapter_accepts_aliases(alias: str) -> None:
    canonical = backends.resolve(alias).id
    try:
        importlib.import_module(backends.resolve(alias).namespace_module)
    except ImportError:
        with pytest.raises(AdapterError, match=rf"backend {canonical} is not installed"):
            load_adapter(f"posenc_ref:{alias}")
        return
    adapter = load_adapter(f"posenc_ref:{alias}")
    assert adapter.backend == canonical
    assert adapter.name == ("posenc_ref" if canonical == "numpy" else f"posenc_ref:{canonical}")


def test_the_adapter_refuses_unknown_backends() -> None:
    with pytest.raises(AdapterError, match=r"^adapter 'posenc_ref:jaxx': backend must be one of"):
        load_adapter("posenc_ref:jaxx")


def test_every_benchmark_backend_is_in_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "asv_benchmarks"))
    common = importlib.import_module("benchmarks.common")
    try:
        assert all(backends.resolve(name) for name in common.BACKENDS)
        assert common._load("numpy").xp is backends.namespace("numpy")
    finally:
        sys.modules.pop("benchmarks.common", None)
        sys.modules.pop("benchmarks", None)


@pytest.mark.parametrize(
    "mark",
    [
        pytest.mark.skip_xp_backend("dask.array", reason="a string is not a Backend"),
        pytest.mark.skip_xp_backend(Backend.DASK),
        pytest.mark.xp_backends(reason="no backend named"),
    ],
)
def test_backend_marks_refuse_misuse(mark: pytest.MarkDecorator) -> None:
    with pytest.raises(TypeError, match=r"takes Backend members and reason="):
        _marked_backends(mark.mark)


@pytest.mark.skip_xp_backend(Backend.NUMPY, reason="checks the mark itself")
def test_a_skip_mark_skips_its_backend(library: Backend) -> None:
    assert library is not Backend.NUMPY


@pytest.mark.xp_backends(Backend.NUMPY, Backend.TORCH, reason="checks the mark itself")
def test_an_only_mark_keeps_its_backends(library: Backend) -> None:
    assert library in (Backend.NUMPY, Backend.TORCH)
