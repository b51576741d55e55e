"""The allowed error against position, per precision class and dtype, from the golden vectors.

Every function whose golden cases carry ``phase`` data (the cos/sin of angles that grow with
the position) is drawn; everything plotted is read from the golden files
(:func:`posenc_ref_conformance.golden.load`) and put through the suite's own tolerance model:

- the exact class: each case's stored tolerance (``atol + rtol |e|``, or ``maxUlp`` ulp of
  the expected value ``e``, whichever is larger), as ``compare.compare_output`` allows it;
  the reach sweeps as a line over their positions, every other case as one marker at its
  largest position; and, dotted, the float32 model that set those tolerances
  (:func:`~posenc_ref_conformance.golden.functions.angle_tolerance` at ``theta = 1``);
- the product class: :func:`~posenc_ref_conformance.compare.product_bound` of each case's
  phase record, at its fastest column;
- the line above which the product class no longer judges (``BEYOND_FRACTION``).

Values are divided by the element's scale ``s`` (the phase record's ``scale``: 1 for a
cos/sin table, the attention factor or ``2 max|x|`` for a rotation), so cases of different
sizes share one axis.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
from _style import COLORS, main, plt, save

from posenc_ref_conformance import compare, golden
from posenc_ref_conformance.golden import _format
from posenc_ref_conformance.golden.functions import angle_tolerance

DTYPES = ("float32", "float64")
MARKERS = {"rope_cos_sin": "o", "rope": "s", "rope_heads": "D", "rope_from_base": "^", "sinusoidal": "v"}
EXACT, PRODUCT, BEYOND = COLORS[0], COLORS[1], "0.45"


@dataclasses.dataclass(frozen=True)
class Series:
    """One thing drawn: ``allowed[i]`` (divided by the scale) at ``positions[i]``."""

    dtype: str
    klass: str  # "exact" or "product"
    function: str
    case: str  # a case id, or "" for a reach sweep (one or two cases joined)
    positions: np.ndarray
    allowed: np.ndarray
    sweep: bool  # a reach sweep (drawn as a line) rather than one case (a marker)
    frequency_error: float = 0.0


def phase_docs() -> list[dict[str, Any]]:
    """The golden files whose cases carry phase data (position-dependent accuracy)."""
    return [doc for doc in golden.load() if any("phase" in c for c in doc.get("cases", []))]


def _cases(doc: dict[str, Any], dtype: str) -> list[dict[str, Any]]:
    return [
        c
        for c in doc["cases"]
        if "phase" in c and c.get("result") != "invalid" and dtype in c.get("dtypes", doc["dtypes"])
    ]


def _exact_allowed(case: dict[str, Any], doc: dict[str, Any], dtype: str) -> np.ndarray:
    """Per element, the exact class's allowance: max(atol + rtol |e|, maxUlp ulp of e in dtype)."""
    tol = (case.get("tolerances") or doc["tolerances"])[dtype]
    allowed = []
    for obj in case["expected"].values():
        e = np.abs(np.asarray(_format.decode(obj), dtype=np.float64))
        a = tol["atol"] + tol["rtol"] * e
        if tol["maxUlp"]:
            a = np.maximum(a, tol["maxUlp"] * np.spacing(e.astype(dtype)).astype(np.float64))
        allowed.append(a)
    return np.maximum.reduce(allowed)


def _at_fastest(
    values: np.ndarray, bound: compare.PhaseBound, phase: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct |position|, the max of ``values`` over the elements of the fastest column there."""
    frequencies = np.abs(np.asarray(_format.decode(phase["frequencies"]), dtype=np.float64))
    column = int(np.argmax(frequencies))
    at = bound.positions[..., column].ravel()
    val = np.broadcast_to(values, bound.positions.shape)[..., column].ravel()
    unique = np.unique(at)
    return unique, np.array([val[at == p].max() for p in unique])


def series(docs: list[dict[str, Any]] | None = None) -> list[Series]:
    """Everything the figure draws, in drawing order."""
    docs = phase_docs() if docs is None else docs
    out: list[Series] = []
    for dtype in DTYPES:
        for doc in docs:
            function = doc["function"]
            # Reach sweeps of one function and dtype are one line (float64 has two: the
            # sweep to 2**24 + 1 and its continuation to 2**40 + 1).
            sweep: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"exact": [], "product": []}
            sweep_e = 0.0
            for case in _cases(doc, dtype):
                phase = case["phase"]
                scale = float(phase["scale"])
                exact = _exact_allowed(case, doc, dtype) / scale
                bound = compare.product_bound(phase, exact.shape, dtype)
                product = bound.bound / scale
                is_sweep = "Reach" in case.get("flags", [])
                for klass, values in (("exact", exact), ("product", product)):
                    pos, val = _at_fastest(values, bound, phase)
                    if is_sweep:
                        sweep[klass].append((pos, val))
                        sweep_e = float(phase["frequencyError"])
                    elif klass == "exact":  # one tolerance per case: a marker at its largest position
                        out.append(Series(dtype, klass, function, case["id"], pos[-1:], val[-1:], False))
                    else:
                        out.append(
                            Series(
                                dtype,
                                klass,
                                function,
                                case["id"],
                                pos,
                                val,
                                False,
                                float(phase["frequencyError"]),
                            )
                        )
            for klass, parts in sweep.items():
                if parts:
                    pos = np.concatenate([p for p, _ in parts])
                    val = np.concatenate([v for _, v in parts])
                    order = np.argsort(pos, kind="stable")
                    pos, val = pos[order], val[order]
                    keep = np.concatenate([[True], pos[1:] != pos[:-1]])
                    out.append(Series(dtype, klass, function, "", pos[keep], val[keep], True, sweep_e))
    return out


def model_line(positions: np.ndarray) -> np.ndarray:
    """angle_tolerance's float32 atol (not strict) for a case whose largest angle is ``positions``, scale 1.

    The float32 formula does not depend on ``freq_ulps`` (the float64 one does, per case module,
    so float64 gets no model line).
    """
    return np.array(
        [angle_tolerance(float(m), 1.0, False, freq_ulps=0)["float32"]["atol"] for m in positions]
    )


def _same(a: Series, b: Series) -> bool:
    return np.array_equal(a.positions, b.positions) and np.array_equal(a.allowed, b.allowed)


def figure(all_series: list[Series] | None = None) -> plt.Figure:
    """Two panels (float32, float64); each :class:`Series` drawn as a line (a sweep) or markers."""
    all_series = series() if all_series is None else all_series
    swept = {s.function for s in all_series if s.sweep}
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 4.9), sharey=True)
    handles: dict[str, Any] = {}
    for ax, dtype in zip(axes, DTYPES, strict=True):
        mine = [s for s in all_series if s.dtype == dtype]
        top = max(float(s.positions.max()) for s in mine)
        if dtype == "float32":
            grid = np.unique(np.round(np.logspace(0, np.log10(top), 60)))
            (handles["exact, model of the other cases' tolerance (θ = 1)"],) = ax.loglog(
                grid, model_line(grid), color=EXACT, lw=0.9, ls=":"
            )
        for klass, color in (("exact", EXACT), ("product", PRODUCT)):
            # Sweeps that give the same values (the exact class's strict tolerance) are one line.
            lines: list[tuple[Series, list[str]]] = []
            for s in mine:
                if s.klass == klass and s.sweep:
                    same = next((names for line, names in lines if _same(line, s)), None)
                    if same is None:
                        lines.append((s, [s.function]))
                    else:
                        same.append(s.function)
            for i, (s, names) in enumerate(lines):
                keep = s.positions >= 1
                label = f"{klass}, reach sweep of {' and '.join(names)}"
                if klass == "product":
                    label += f" (e = {s.frequency_error:g})"
                (handles[label],) = ax.loglog(
                    s.positions[keep],
                    s.allowed[keep],
                    color=color,
                    lw=1.6,
                    ls=("-", "--")[i % 2],
                    label=label,
                )
            for s in mine:
                # Markers: every exact-class case; product-class cases of functions without a sweep.
                if s.klass != klass or s.sweep or (klass == "product" and s.function in swept):
                    continue
                keep = s.positions >= 1
                style = {"color": color, "ms": 4.5, "ls": "none", "marker": MARKERS.get(s.function, "x")}
                if klass == "product":
                    style.update(mfc="none", mew=0.9)
                ax.loglog(s.positions[keep], s.allowed[keep], alpha=0.85, label=f"_{klass} {s.case}", **style)
        ax.axhline(compare.BEYOND_FRACTION, color=BEYOND, lw=1.0, ls="--")
        ax.axhspan(compare.BEYOND_FRACTION, 10.0, color=BEYOND, alpha=0.12, lw=0)
        ax.text(
            1.3,
            compare.BEYOND_FRACTION * 1.5,
            "beyond precision: the product class does not judge",
            color="0.3",
            fontsize=8.5,
            va="bottom",
        )
        ax.set_ylim(2e-17, 3.0)
        ax.set_xlim(0.8, top * 1.5)
        ax.set_xlabel("position |m|")
        ax.set_title(f"{dtype}: allowed |error| against position (fastest column)")
    axes[0].set_ylabel("allowed |error| / element scale s")
    (handles["exact class: one case's tolerance, at its largest position"],) = axes[0].plot(
        [], [], ls="none", marker="o", color=EXACT, ms=5
    )
    (handles["product class: a case's bound at each of its positions"],) = axes[0].plot(
        [], [], ls="none", marker="o", color=PRODUCT, mfc="none", mew=0.9, ms=5
    )
    for f, marker in MARKERS.items():
        if any(s.function == f for s in all_series):
            (handles[f"{f} case"],) = axes[0].plot([], [], ls="none", marker=marker, color="0.3", ms=5)
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="upper center",
        ncol=3,
        bbox_to_anchor=(0.5, 0.0),
        fontsize=8,
    )
    return fig


def make(outdir: Path) -> list[Path]:
    return [save(figure(), outdir, "tolerance_against_position")]


if __name__ == "__main__":
    main(make)
