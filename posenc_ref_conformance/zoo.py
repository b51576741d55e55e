"""The zoo: every model family of transformers, its positional code run in its own module, one verdict each.

The matrix (:mod:`.matrix`) is one column per implementation; the zoo is one *row per model
family* of the installed transformers.  Its inputs:

* the family table (``docs/matrix/zoo_families.csv``, :func:`load_families`): each family's
  primary scheme class and the scheme classes it computes (written from the census by
  ``scripts/zoo_families.py``);
* the families the installed transformers has (``transformers/models/*``, listed by
  ``scripts/matrix/build_zoo.sh`` in its venv): a family missing from the table is still a row,
  "not classified", never dropped;
* the JSON reports of the transformers adapter's columns (``posenc-ref check transformers:FAMILY
  --json``): the default column and one per family variant of
  :data:`posenc_ref_conformance.adapters.transformers.ADAPTERS`;
* the classification of failures (``docs/matrix/classification.json``, the matrix's).

A family's verdict (:func:`family_rows`), from the results of the columns that run its code:

* ``fail``: a result on a valid input failed (``xfail`` too: a known failure is still one)
  and a bug explains it, or nothing does; the row names each cause (its class, note and
  reproduction), as the matrix's failures by cause do;
* ``fail: validation``: the values are right, but an invalid input was accepted (a bug);
* ``known difference``: every failure is an explained convention or precision class;
* ``beyond-precision``: nothing failed, but some result is beyond the declared precision class;
* ``pass``: every compared result passed;
* ``not run``: the family computes positions but no column runs its code; the row says why
  (the adapter's :data:`~posenc_ref_conformance.adapters.transformers.NOT_RUN` reason, else
  the scheme class's :data:`SCHEME_REASONS`);
* ``no positions``: a model without positional code (``none``), a composite whose positional
  code lives in its sub-models (``delegated``, each sub-model its own row) or a directory
  without modeling code (``n/a``).

A scheme of a run family that none of its columns compared is listed as *not run* in the
row (with its reason), so a pass on the text RoPE never hides an unrun vision table.
:func:`render_html` writes the page: the headline counts, a filter, one row per family.
"""

from __future__ import annotations

import csv
import datetime
import html
import json
import os
import pathlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import __version__
from .matrix import COLOURS, _classify, breakable, column_id, entries_for

__all__ = [
    "SCHEME_FUNCTIONS",
    "SCHEME_REASONS",
    "VERDICTS",
    "build",
    "differences",
    "family_rows",
    "headline",
    "load_families",
    "render_html",
    "run_here",
    "transformers_columns",
    "validate",
    "write",
]

ZOO_VERSION = 1

#: Census scheme class -> the canonical functions that compute it (a scheme counts as run in a
#: family when one of its columns compared a result of one of these).
SCHEME_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "rope": (
        "rope_frequencies",
        "rope_cos_sin",
        "apply_rope",
        "rope",
        "rope_heads",
        "rope_from_base",
        "mrope_position_ids",
        "vision_position_ids",
        "mrope_angles",
        "rope_2d_cos_sin",
    ),
    "nope-hybrid": ("llama4_attn_scale", "causal_mask"),
    "learned-absolute": (
        "learned",
        "token_positions",
        "interpolate_table",
        "patch_grid_resize",
        "grid_resize",
        "bbox_embedding",
        "row_col_embedding",
        "navit_position_ids",
    ),
    "sinusoidal": ("sinusoidal",),
    "alibi": ("alibi_slopes", "alibi_bias", "alibi_bias_from_heads", "alibi_bias_from_mask"),
    "t5-buckets": ("t5_bucket", "t5_bias"),
    "shaw": ("shaw_index", "shaw_table_rows", "shaw_logits", "shaw_values"),
    "detr-sine-2d": ("detr_sine_2d", "detr_coord_sine"),
    "2d-sincos": ("sincos_2d",),
    "window-rel-bias-table": ("window_bias", "swinv2_log_coords"),
    "fourier-features": ("fourier_features", "fourier_grid"),
    "other:decomposed-2d-rel-pos": ("decomposed_rel_pos", "grid_resize"),
    "other:continuous-2d-rope": ("rope_2d_cos_sin",),
    "other:bbox-sinusoid": ("sinusoidal",),
    "deberta-log-buckets": ("deberta_bucket", "deberta_relative_index"),
    "transformer-xl-rel-sinusoid": (
        "rel_sinusoid_positions",
        "rel_sinusoid_table",
        "rel_shift",
        "rel_attention_scores",
    ),
}

#: Why a scheme class is not run where the adapter gives no reason of its own.
SCHEME_REASONS: dict[str, str] = {
    "conv-positional": "a learned convolution over the hidden states: no position-only values to compare",
    "reformer-axial": "Reformer's axial embedding: no posenc-ref function yet",
    "other:mlp-keypoint-encoder": "an MLP of keypoint coordinates: learned, no position-only values",
    "nope-hybrid": "its NoPE layers compute no positions; which layers rotate (the layer pattern) "
    "is not checked",
    "other:content-conditioned-rel-logits": "a relative bias read from each query's own hidden states "
    "(content-conditioned): no posenc-ref function yet",
    "other:neighborhood-attn-rpb": "neighborhood attention's relative position bias: no posenc-ref "
    "function yet",
    "other:levit-attention-bias": "LeViT's learned bias over |dx|, |dy| offsets: no posenc-ref function yet",
    "other:learned-fourier-rope": "RoPE frequencies projected from keypoints by a learned layer: "
    "no fixed values",
    "other:timestamp-rope": "RoPE at real-valued timestamps: no posenc-ref function yet",
    "other:box-relation-embedding": "a box-relation embedding between detections: no posenc-ref function yet",
}

#: The verdicts, worst first, with what each means (the page's legend).
VERDICTS: dict[str, str] = {
    "fail": "its code computes a wrong value (the cause and a reproduction are linked)",
    "fail: validation": "its values are right, but it accepts an input it must reject (linked)",
    "known difference": "every difference is a named convention or precision class, explained",
    "beyond-precision": "compared, but its declared precision class is too loose to tell",
    "pass": "every result its code gave matches the golden values",
    "not run": "it computes positions, but no column runs its code (the reason is given)",
    "no positions": "no positional code of its own (none, a composite, or no modeling file)",
}
#: Cell colours of the verdicts (the matrix's status colours).
VERDICT_COLOURS = {
    "fail": COLOURS["fail"],
    "fail: validation": COLOURS["fail"],
    "known difference": COLOURS["xfail"],
    "beyond-precision": COLOURS["beyond-precision"],
    "pass": COLOURS["pass"],
    "not run": COLOURS["absent"],
    "no positions": COLOURS["skip"],
}
#: The verdicts of a family whose code was compared.
RUN_VERDICTS = ("fail", "fail: validation", "known difference", "beyond-precision", "pass")
#: Primary classes of a family without positional code of its own (``zoo_families.csv``).
WITHOUT_POSITIONS = {
    "none": "no positional code (a CNN, SSM, RNN or codec)",
    "delegated": "a composite: its positional code lives in its sub-models, each a row of its own",
    "n/a": "no modeling code (a tokenizer, processor or config only)",
}


def load_families(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """``{family: {"primary": class, "schemes": [class, ...]}}`` from ``zoo_families.csv``, checked."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != ["family", "primary", "schemes"]:
            msg = f"{path}: the header must be family,primary,schemes; got {reader.fieldnames}"
            raise ValueError(msg)
        families = {}
        for n, row in enumerate(reader, 2):
            if not row["family"] or not row["primary"] or row["family"] in families:
                msg = f"{path}:{n}: a row needs a new family and a primary class; got {row}"
                raise ValueError(msg)
            schemes = [s for s in row["schemes"].split(";") if s]
            if (row["primary"] in WITHOUT_POSITIONS) == bool(schemes):
                msg = (
                    f"{path}:{n}: {row['family']}: schemes must be empty exactly when the primary "
                    f"is one of {list(WITHOUT_POSITIONS)}; got {row}"
                )
                raise ValueError(msg)
            families[row["family"]] = {"primary": row["primary"], "schemes": schemes}
    return families


def _counts(results: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(r["status"] for r in results)
    return {s: counts.get(s, 0) for s in ("pass", "fail", "xfail", "xpass", "beyond-precision", "skip")}


def _verdict(counts: Mapping[str, int], failures: Sequence[tuple[dict[str, Any], dict[str, str]]]) -> str:
    """The worst verdict the results earn: a wrong value (a bug, or a failure nobody explained,
    on a valid input), then only invalid inputs accepted, then only explained conventions or
    precision classes, then beyond-precision, pass; ``not run`` when nothing was compared."""
    wrong = [r for r, cause in failures if cause["class"] in ("bug", "unexplained")]
    if any("InvalidInput" not in r["flags"] for r in wrong):
        return "fail"
    if wrong:
        return "fail: validation"
    if failures:
        return "known difference"
    if counts["beyond-precision"]:
        return "beyond-precision"
    if counts["pass"] or counts["xpass"]:
        return "pass"
    return "not run"


def family_rows(
    families: Mapping[str, Mapping[str, Any]],
    installed: Sequence[str],
    reports: Sequence[dict[str, Any]],
    classification: dict[str, list[dict[str, str]]],
    *,
    columns_of: Mapping[str, Mapping[str, Sequence[str]]],
    not_run: Mapping[str, Mapping[str, str]],
) -> list[dict[str, Any]]:
    """One row per family of ``installed`` (and of ``families``), with its verdict.

    ``columns_of``: family -> {column id: selectors of the results that are the family's code}
    (a selector is a canonical function, or with a ``/`` a result-id prefix; a variant's are
    the functions it declares, the default column serves a few families with some of its
    results).  ``not_run``: scheme class -> {family: why no column runs that scheme of that
    family}.  A row: ``{"family", "primary", "schemes", "verdict", "columns", "counts",
    "statuses", "selectors", "causes", "run", "not_run", "installed", "classified"}``:
    ``statuses`` is column -> {result id: status} of every compared result of the family's
    ``selectors`` (what CI re-checks, :func:`differences`), ``causes`` one
    per classification entry explaining a failure (``match``, ``class``, ``note``, ``repro``,
    ``issue``, ``results``: how many, ``columns``), ``run`` the scheme classes compared
    (``functions``: each one's canonical functions compared), ``not_run`` ``{scheme: reason}``.
    """
    by_column = {column_id(r): r for r in reports}
    rows = []
    for family in sorted(set(installed) | set(families)):
        entry = families.get(family)
        primary = entry["primary"] if entry else "unclassified"
        schemes = list(entry["schemes"]) if entry else []
        results, causes, columns, statuses, failures = [], {}, [], {}, []
        for column, functions in columns_of.get(family, {}).items():
            report = by_column.get(column)
            if report is None:
                continue
            columns.append(column)
            entries = entries_for(classification, column)
            for r in report["results"]:
                if not _selected(r, functions):
                    continue
                results.append(r)
                if r["status"] != "skip":
                    statuses.setdefault(column, {})[r["resultId"]] = r["status"]
                if r["status"] in ("fail", "xfail"):
                    cause = _cause(entries, r["resultId"])
                    failures.append((r, cause))
                    key = (cause["class"], cause["note"], cause.get("repro", ""), cause.get("match", ""))
                    causes.setdefault(key, {**cause, "results": 0, "columns": set()})
                    causes[key]["results"] += 1
                    causes[key]["columns"].add(column)
        counts = _counts(results)
        compared = {r["function"] for r in results if r["status"] != "skip"}
        functions = {s: sorted(compared & set(SCHEME_FUNCTIONS.get(s, ()))) for s in schemes}
        run = [s for s in schemes if functions[s]]
        reasons = {
            s: not_run.get(s, {}).get(family) or SCHEME_REASONS.get(s) or _default_reason(s, columns)
            for s in schemes
            if s not in run
        }
        if entry is None:
            verdict = _verdict(counts, failures) if compared else "not run"
            reasons = reasons or {"?": "not in docs/matrix/zoo_families.csv (a family newer than the table)"}
        elif primary in WITHOUT_POSITIONS:
            verdict = "no positions"
            reasons = {primary: WITHOUT_POSITIONS[primary]}
        else:
            verdict = _verdict(counts, failures) if compared else "not run"
        rows.append(
            {
                "family": family,
                "primary": primary,
                "schemes": schemes,
                "verdict": verdict,
                "columns": columns,
                "counts": counts,
                "statuses": statuses,
                "selectors": {c: list(columns_of[family][c]) for c in columns},
                "causes": [
                    {**c, "columns": sorted(c["columns"])}
                    for c in sorted(causes.values(), key=lambda c: (-c["results"], c["note"]))
                ],
                "run": run,
                "functions": {s: f for s, f in functions.items() if f},
                "not_run": reasons,
                "installed": family in installed,
                "classified": entry is not None,
            }
        )
    return rows


def _selected(result: Mapping[str, Any], selectors: Sequence[str]) -> bool:
    return any(result["resultId"].startswith(s) if "/" in s else result["function"] == s for s in selectors)


def _cause(entries: Sequence[dict[str, str]], result_id: str) -> dict[str, str]:
    entry = _classify(entries, result_id)
    if entry is None:
        return {"class": "unexplained", "note": f"no classification entry explains {result_id}"}
    return {k: entry[k] for k in ("match", "class", "note", "repro", "issue") if k in entry}


def _default_reason(scheme: str, columns: Sequence[str]) -> str:
    functions = SCHEME_FUNCTIONS.get(scheme)
    if functions is None:
        return f"posenc-ref has no function for the scheme class {scheme!r} yet"
    if columns:
        return f"its column does not map this scheme onto {', '.join(functions[:3])}, ... yet"
    return "the transformers adapter has no column for this family's code yet"


def headline(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The counts at the top of the page: families installed, with positional code, run (and the
    share of those with positional code), per verdict, failures per cause class."""
    installed = [r for r in rows if r["installed"]]
    positional = [r for r in installed if r["verdict"] != "no positions"]
    run = [r for r in positional if r["verdict"] in RUN_VERDICTS]
    verdicts = Counter(r["verdict"] for r in installed)
    classes = Counter(c["class"] for r in installed for c in r["causes"])
    return {
        "installed": len(installed),
        "positional": len(positional),
        "run": len(run),
        "runShare": round(len(run) / len(positional), 4) if positional else 0.0,
        "fullyRun": sum(not r["not_run"] for r in run),
        "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
        "causeClasses": dict(sorted(classes.items())),
        "unclassified": sorted(r["family"] for r in installed if not r["classified"]),
    }


def build(
    rows: Sequence[dict[str, Any]],
    *,
    transformers_version: str,
    command: str = "",
    wall_s: float | None = None,
) -> dict[str, Any]:
    """The zoo as data (written to ``zoo.json``)."""
    return {
        "zooVersion": ZOO_VERSION,
        "suiteVersion": __version__,
        "transformers": transformers_version,
        "generated": datetime.date.today().isoformat(),
        "command": command,
        "wallSeconds": wall_s,
        "headline": headline(rows),
        "families": list(rows),
    }


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1a1a1a;max-width:80em}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left;overflow-wrap:break-word}
th{background:#f4f4f4;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
#zoo{table-layout:fixed}
#zoo td{overflow-wrap:anywhere}
#zoo th:nth-child(1){width:11%}
#zoo th:nth-child(2){width:17%}
#zoo th:nth-child(3){width:15%}
#zoo th:nth-child(4){width:10%}
#zoo th:nth-child(5){width:9%}
.filters{margin:1em 0;display:flex;gap:1em;flex-wrap:wrap;align-items:center}
.filters input{min-width:18em}
ul.causes{margin:0;padding-left:1.1em}
small{color:#4d4d4d}
"""

_SCRIPT = """
const text = document.getElementById('zoo-text'), verdict = document.getElementById('zoo-verdict');
const shown = document.getElementById('zoo-shown');
function filterRows() {
  const words = text.value.toLowerCase().split(/\\s+/).filter(Boolean), want = verdict.value;
  let n = 0;
  for (const row of document.querySelectorAll('#zoo tbody tr')) {
    const hay = row.dataset.search, ok = (!want || row.dataset.verdict === want)
      && words.every(w => hay.includes(w));
    row.hidden = !ok; if (ok) n++;
  }
  shown.textContent = n + ' of ' + document.querySelectorAll('#zoo tbody tr').length + ' families shown';
}
text.addEventListener('input', filterRows); verdict.addEventListener('change', filterRows); filterRows();
"""


def _verdict_style(verdict: str) -> str:
    background, colour = VERDICT_COLOURS[verdict]
    return f"background:{background};color:{colour}"


def render_html(zoo: dict[str, Any], *, repro_base: str = "") -> str:
    """A static page: the headline counts, the legend, a filter (text and verdict), one row per
    family (schemes, the posenc-ref functions compared, verdict and counts, causes with their
    reproductions, the schemes not run with why).  ``repro_base``: the prefix of a reproduction's
    link (its path is relative to ``docs/``: ``matrix/repro/...``; the page is served beside it)."""
    e = html.escape
    head = zoo["headline"]
    share = f"{100 * head['runShare']:.1f}%"
    counts = "".join(
        f'<tr><td style="{_verdict_style(v)}">{e(v)}</td><td class="num">{head["verdicts"][v]}</td>'
        f"<td>{e(VERDICTS[v])}</td></tr>"
        for v in VERDICTS
    )
    classes = ", ".join(f"{n} {e(c)}" for c, n in head["causeClasses"].items()) or "none"
    body = []
    for row in zoo["families"]:
        c = row["counts"]
        compared = f"{c['pass']} pass<br>{c['fail'] + c['xfail']} fail<br>{c['beyond-precision']} beyond"
        causes = "".join(
            f"<li>[{e(k['class'])}] {e(k['note'])} <small>({k['results']} results)</small>"
            + (
                f' <a href="{e(repro_base + k["repro"].removeprefix("matrix/"))}">reproduction</a>'
                if k.get("repro")
                else ""
            )
            + (
                f"<details><summary>upstream issue text</summary>{e(k['issue'])}</details>"
                if k.get("issue")
                else ""
            )
            + "</li>"
            for k in row["causes"]
        )
        missing = "".join(f"<li>{e(s)}: {e(why)}</li>" for s, why in row["not_run"].items())
        detail = (f'<ul class="causes">{causes}</ul>' if causes else "") + (
            f'<small>not run:</small><ul class="causes">{missing}</ul>' if missing else ""
        )
        columns = "<br>".join(f"<code>{breakable(col)}</code>" for col in row["columns"]) or "-"
        schemes = "<br>".join(
            e(s) + (f": <small>{e(', '.join(row['functions'][s]))}</small>" if s in row["functions"] else "")
            for s in row["schemes"]
        )
        search = " ".join([row["family"], *row["schemes"], row["verdict"], *row["columns"]]).lower()
        body.append(
            f'<tr id="family-{e(row["family"])}" data-verdict="{e(row["verdict"])}" '
            f'data-search="{e(search)}"><td class="family"><code>{breakable(row["family"])}</code></td>'
            f'<td class="schemes">{schemes or e(row["primary"])}</td>'
            f'<td class="columns">{columns}</td>'
            f'<td class="verdict" style="{_verdict_style(row["verdict"])}">{e(row["verdict"])}</td>'
            f'<td class="num">{compared if row["columns"] else "-"}</td><td>{detail}</td></tr>'
        )
    options = "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in VERDICTS)
    wall = f", {zoo['wallSeconds']:.0f} s" if zoo.get("wallSeconds") else ""
    command = zoo["command"] or "python -m posenc_ref_conformance.zoo"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>posenc-ref zoo: transformers {e(zoo['transformers'])}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<h1>Every model family of transformers {e(zoo['transformers'])}, checked in its own code</h1>"
        f"<p>posenc-ref conformance suite {e(zoo['suiteVersion'])}, {e(zoo['generated'])}: "
        f"<code>{e(command)}</code>{e(wall)}. Each family's positional code is imported from its own "
        "module, built from a tiny configuration (no weights) and run on the golden cases; the conformance "
        'matrix (<a href="matrix.html">matrix.html</a>) has every result of the other libraries.</p>'
        f"<p><strong>{head['installed']}</strong> families installed, <strong>{head['positional']}</strong> "
        f"with positional code, <strong>{head['run']}</strong> run in their own code ({share}; "
        f"{head['fullyRun']} with every scheme run). Causes of failures, by class: {classes}.</p>"
        f'<table style="width:auto"><thead><tr><th>verdict</th><th class="num">families</th><th>meaning</th>'
        f"</tr></thead><tbody>{counts}</tbody></table>"
        '<div class="filters"><label>Filter <input id="zoo-text" type="search" '
        'placeholder="family, scheme or column"></label><label>Verdict <select id="zoo-verdict">'
        f'<option value="">any</option>{options}</select></label>'
        '<span id="zoo-shown" aria-live="polite"></span></div>'
        '<table id="zoo"><thead><tr><th>family</th><th>schemes</th><th>columns</th><th>verdict</th>'
        '<th class="num">results</th><th>causes / not run</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write(zoo: dict[str, Any], out: str | os.PathLike[str]) -> None:
    """``zoo.json`` and ``zoo.html`` into ``out``."""
    directory = pathlib.Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "zoo.json").write_text(json.dumps(zoo, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (directory / "zoo.html").write_text(render_html(zoo), encoding="utf-8")


def validate(zoo: Any) -> list[str]:
    """Problems of a zoo as data (empty when well-formed and every failure is explained)."""
    if not isinstance(zoo, dict) or zoo.get("zooVersion") != ZOO_VERSION:
        return [f"a zoo is a JSON object of zooVersion {ZOO_VERSION}"]
    problems = []
    for row in zoo.get("families", []):
        if row.get("verdict") not in VERDICTS:
            problems.append(
                f"{row.get('family')}: verdict {row.get('verdict')!r} is not one of {list(VERDICTS)}"
            )
        problems += [
            f"{row['family']}: unexplained failure: {c['note']}"
            for c in row.get("causes", [])
            if c["class"] == "unexplained"
        ]
    if zoo.get("headline") != headline(zoo.get("families", [])):
        problems.append("the headline counts are not those of the rows")
    return problems


def differences(zoo: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """Results of the families' code whose status in ``report`` (a fresh ``check --json`` of one
    column) is not the committed one."""
    column = column_id(report)
    rows = [r for r in zoo["families"] if column in r.get("selectors", {})]
    if not rows:
        return [f"{column}: no family of the zoo is run by this column"]
    committed = {rid: st for r in rows for rid, st in r["statuses"].get(column, {}).items()}
    fresh = {
        r["resultId"]: r["status"]
        for r in report["results"]
        if r["status"] != "skip" and any(_selected(r, row["selectors"][column]) for row in rows)
    }
    return [
        f"{column}: {rid}: {committed.get(rid, 'not compared')} in the zoo, "
        f"{fresh.get(rid, 'not compared')} now"
        for rid in sorted(committed.keys() | fresh.keys())
        if committed.get(rid) != fresh.get(rid)
    ]


def transformers_columns() -> dict[str, dict[str, tuple[str, ...]]]:
    """family -> {column: selectors}, from the transformers adapter's tables (no torch needed):
    the default column's :data:`~.adapters.transformers.DEFAULT_FAMILIES`, and each variant's
    column with the functions it declares and its invariants, under its family (the variant's name)."""
    from .adapters import transformers as hf

    columns: dict[str, dict[str, tuple[str, ...]]] = {}
    for family, selectors in hf.DEFAULT_FAMILIES.items():
        columns.setdefault(family, {})["transformers"] = tuple(selectors)
    for name, adapter in hf.ADAPTERS.items():
        if name != "default":
            # a variant's column is its family's alone: its invariants too
            functions = (*adapter.capabilities.functions, "invariant/")
            columns.setdefault(name, {})[f"transformers:{name}"] = functions
    return columns


def run_here(specs: Sequence[str], out: str | os.PathLike[str], *, echo: Any = print) -> list[str]:
    """Check each built-in adapter spec in this process (one import of torch and transformers for
    all), writing ``out/<spec>.json`` as ``posenc-ref check SPEC --json`` does; the specs that
    would not load, with why.  In this process, so without the worker's time limit: for the
    built-in transformers variants, whose code the suite already trusts to return."""
    from .adapters import AdapterError, load_adapter
    from .runner import run

    directory = pathlib.Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    failed = []
    for n, spec in enumerate(specs, 1):
        started = datetime.datetime.now()
        try:
            report = run(load_adapter(spec))
        except AdapterError as exc:
            failed.append(f"{spec}: {exc}")
            continue
        data = report.to_json()
        data["spec"] = spec
        path = (
            directory / f"{re.sub(r'[^A-Za-z0-9_.]+', '-', spec).strip('-')}.json"
        )  # transformers-FAMILY.json
        path.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
        seconds = (datetime.datetime.now() - started).total_seconds()
        echo(f"[{n}/{len(specs)}] {spec}: {report.verdict} ({seconds:.1f} s)", flush=True)
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m posenc_ref_conformance.zoo run --out DIR SPEC ...`` checks the columns here;
    ``... merge --reports ... --installed FILE --out DIR`` writes ``zoo.json`` and ``zoo.html``."""
    import argparse

    from .matrix import check_report, load_classification

    parser = argparse.ArgumentParser(
        prog="python -m posenc_ref_conformance.zoo", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    runner = sub.add_parser("run", help="check built-in adapter specs in this process, one report each")
    runner.add_argument("specs", nargs="+", metavar="SPEC")
    runner.add_argument("--out", required=True, metavar="DIR", help="folder for the JSON reports")
    merge = sub.add_parser("merge", help="write zoo.json and zoo.html from the reports")
    merge.add_argument(
        "--reports", nargs="+", required=True, metavar="JSON", help="check reports of the columns"
    )
    merge.add_argument(
        "--installed",
        required=True,
        metavar="FILE",
        help="the installed transformers' families, one per line",
    )
    merge.add_argument("--transformers-version", required=True, metavar="VERSION")
    merge.add_argument("--families", default="docs/matrix/zoo_families.csv", metavar="CSV")
    merge.add_argument("--classification", default="docs/matrix/classification.json", metavar="FILE")
    merge.add_argument("--out", required=True, metavar="DIR", help="folder for zoo.json and zoo.html")
    merge.add_argument("--command", default="", metavar="TEXT", help="the command that rebuilt it")
    merge.add_argument("--wall-s", type=float, metavar="SECONDS", help="the rebuild's wall time")
    args = parser.parse_args(argv)
    if args.command == "run":
        failed = run_here(args.specs, args.out)
        for line in failed:
            print(f"not loaded: {line}")
        return 1 if failed else 0
    try:
        reports = [
            check_report(json.loads(pathlib.Path(p).read_text(encoding="utf-8")), p) for p in args.reports
        ]
        installed = [
            line.strip() for line in pathlib.Path(args.installed).read_text(encoding="utf-8").split()
        ]
        families = load_families(args.families)
        classification = load_classification(args.classification)
    except (OSError, ValueError) as exc:
        parser.error(f"zoo input cannot be read: {exc}")
    columns = transformers_columns()
    from .adapters import transformers as hf

    strays = sorted(set(columns) - set(installed) - set(families))
    if strays:
        parser.error(f"adapter variants name no family of the installed transformers: {strays}")
    rows = family_rows(families, installed, reports, classification, columns_of=columns, not_run=hf.NOT_RUN)
    zoo = build(
        rows, transformers_version=args.transformers_version, command=args.command, wall_s=args.wall_s
    )
    write(zoo, args.out)
    head = zoo["headline"]
    unexplained = [(r["family"], c["note"]) for r in rows for c in r["causes"] if c["class"] == "unexplained"]
    for family, note in unexplained:
        print(f"UNEXPLAINED: {family}: {note}")
    print(
        f"zoo of {head['installed']} families written to {args.out}: "
        f"{head['positional']} with positional code, "
        f"{head['run']} run ({100 * head['runShare']:.1f}%), verdicts {head['verdicts']}; "
        f"{len(unexplained)} unexplained failures"
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    raise SystemExit(main())
