"""The tolerance page's figure and table (``docs/figures/fig_tolerance.py``, ``docs/_ext/golden_md.py``).

The figure must draw what the suite allows: each value is checked against the product
class's formula ``s u ((2 + e) |m theta| + 8)`` and the stored tolerances, evaluated here
by hand from the raw golden JSON (not through the figure's code or ``compare.product_bound``),
at a few positions, on the lines and markers the figure actually holds.  The table must
leave the position-dependent functions to the figure and show no all-zero tolerance.
Needs matplotlib (the docs extra; skipped without it).
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the docs extra (matplotlib) is not installed", exc_type=ImportError)

ROOT = pathlib.Path(__file__).resolve().parents[1]
VECTORS = ROOT / "posenc_ref_conformance" / "golden" / "vectors"
U = {"float32": 2.0**-24, "float64": 2.0**-53}


def _load(name: str, folder: pathlib.Path):
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(f"_test_{name}", folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"_test_{name}"] = module  # as docs/_ext/posenc_docs.py loads it (dataclasses need it)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


@pytest.fixture(scope="module")
def fig_tolerance():
    return _load("fig_tolerance", ROOT / "docs" / "figures")


@pytest.fixture(scope="module")
def drawn(fig_tolerance):
    fig = fig_tolerance.figure()
    yield dict(zip(fig_tolerance.DTYPES, fig.axes[:2], strict=True))
    fig_tolerance.plt.close(fig)


def _case(function: str, case_id: str) -> dict:
    doc = json.loads((VECTORS / f"{function}.json").read_text())
    return next(c for c in doc["cases"] if c["id"] == case_id)


def _phase(case: dict) -> tuple[np.ndarray, float, float, float]:
    """(|positions|, fastest |frequency|, e, s) read straight from the JSON (hex floats)."""
    ph = case["phase"]
    positions = np.abs(np.asarray(ph["positions"]["values"], dtype=np.float64)).ravel()
    freqs = [abs(float.fromhex(h)) for h in ph["frequencies"]["hex"]]
    return positions, max(freqs), float(ph["frequencyError"]), float(ph["scale"])


def _line(ax, label: str):
    matches = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(matches) == 1, f"{label!r}: {[ln.get_label() for ln in ax.get_lines()]}"
    return np.asarray(matches[0].get_xdata(), float), np.asarray(matches[0].get_ydata(), float)


def _at(line: tuple[np.ndarray, np.ndarray], m: float) -> float:
    xs, ys = line
    assert m in xs, f"position {m} is not drawn"
    return float(ys[list(xs).index(m)])


@pytest.mark.parametrize(
    ("dtype", "function", "label", "positions"),
    [
        (
            "float32",
            "rope_cos_sin",
            "product, reach sweep of rope_cos_sin (e = 1)",
            [1, 1024, 2**20, 2**24 + 1],
        ),
        ("float32", "sinusoidal", "product, reach sweep of sinusoidal (e = 34)", [1, 4097, 2**24 + 1]),
        (
            "float64",
            "rope_cos_sin",
            "product, reach sweep of rope_cos_sin (e = 1)",
            [2, 2**24 + 1, 2**40 + 1],
        ),
        ("float64", "sinusoidal", "product, reach sweep of sinusoidal (e = 34)", [1, 2**32, 2**40 + 1]),
    ],
)
def test_the_product_class_lines_are_its_bound_at_theta_one(drawn, dtype, function, label, positions) -> None:
    sweep = _case(function, f"{function}/{'half' if function == 'rope_cos_sin' else 'vaswani'}/reach-sweep")
    _, theta, e, s = _phase(sweep)
    assert (theta, s) == (1.0, 1.0)
    assert f"(e = {e:g})" in label
    line = _line(drawn[dtype], label)
    for m in positions:
        assert _at(line, m) == pytest.approx(U[dtype] * ((2 + e) * m * theta + 8), rel=1e-12)


def test_the_exact_class_line_is_the_accuracy_claim(drawn) -> None:
    label = "exact, reach sweep of sinusoidal and rope_cos_sin"
    for dtype, claim in (("float32", 2e-6), ("float64", 2.0**-50)):
        xs, ys = _line(drawn[dtype], label)
        assert xs.max() == (2**24 + 1 if dtype == "float32" else 2**40 + 1)
        assert np.all(ys == claim)
        stored = _case("rope_cos_sin", "rope_cos_sin/half/reach-sweep")["tolerances"][dtype]["atol"]
        assert stored == claim


def test_markers_are_the_cases_own_tolerance_and_bound(drawn) -> None:
    # exact class: the stored atol over the scale, at the case's largest position
    case = _case("rope_cos_sin", "rope_cos_sin/half/gpt-oss-yarn")
    positions, _, _, s = _phase(case)
    xs, ys = _line(drawn["float32"], "_exact rope_cos_sin/half/gpt-oss-yarn")
    assert list(xs) == [positions.max()]
    assert ys[0] == pytest.approx(case["tolerances"]["float32"]["atol"] / s, rel=1e-12)
    # product class of a function without a sweep: every position, its own e and scale
    case = _case("rope_from_base", "rope_from_base/half/llama3.1")
    positions, theta, e, s = _phase(case)
    assert e > 34  # a derived frequency error larger than the sweeps'
    line = _line(drawn["float32"], "_product rope_from_base/half/llama3.1")
    for m in positions[positions >= 1]:
        assert _at(line, m) == pytest.approx(U["float32"] * ((2 + e) * m * theta + 8), rel=1e-12)


def test_the_beyond_precision_line_is_where_the_class_stops_judging(drawn) -> None:
    from posenc_ref_conformance.compare import BEYOND_FRACTION

    for ax in drawn.values():
        flat = [ln for ln in ax.get_lines() if len(set(ln.get_ydata())) == 1 and ln.get_xdata()[0] == 0]
        assert [ln.get_ydata()[0] for ln in flat] == [BEYOND_FRACTION]


def test_the_table_leaves_position_dependent_tolerances_to_the_figure(fig_tolerance) -> None:
    golden_md = _load("golden_md", ROOT / "docs" / "_ext")
    text = golden_md.tolerance_table(ROOT)
    table = [line for line in text.splitlines() if line.startswith("| `")]
    plotted = sorted({doc["function"] for doc in fig_tolerance.phase_docs()})
    assert plotted and not any(f"`{f}`" in row for f in plotted for row in table)
    named = text.split("the figure <tolerance-figure>`: ", 1)[1].splitlines()[0]
    assert named == ", ".join(f"`{f}`" for f in plotted) + "."
    assert "0 / 0 / 0" not in text
    assert (
        "| `interpolate_table` | atol 4.44e-16, rtol 4.44e-16, 4 ulp | atol 2.38e-07, rtol 2.38e-07, 4 ulp |"
        in table
    )


def test_the_caption_states_the_frequency_errors_of_the_data() -> None:
    page = (ROOT / "docs" / "guide" / "tolerance.md").read_text()
    caption = page.split("(tolerance-figure)=", 1)[1].split("\n```\n", 1)[0]
    base = json.loads((VECTORS / "rope_from_base.json").read_text())
    top = max(c["phase"]["frequencyError"] for c in base["cases"] if "phase" in c)
    assert f"with $e$ up to {top:g})" in caption
    _, _, e, _ = _phase(_case("sinusoidal", "sinusoidal/vaswani/reach-sweep"))
    assert f"derived ones, $e = {e:g}$" in caption
