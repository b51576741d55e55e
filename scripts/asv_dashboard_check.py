#!/usr/bin/env python
"""Publish the asv dashboard, prepare it for offline use, and check every tab in headless Chromium.

    python scripts/asv_dashboard_check.py [--publish] [--prepare-only] [--html-dir .asv/html]
                                          [--out .asv/dashboard] [--expect-regressions none|REGEX]

1. **Publishing** (``--publish``).  ``asv publish`` lists every benchmark its last run
   discovered, measured or not, so the grid would show empty tiles.  asv's own benchmark
   list (``results/benchmarks.json``) is narrowed to the benchmarks that have results for
   the time of the publish and restored afterwards: asv's pages then read files asv wrote,
   consistent with each other (parameter values a short run skips show as asv's n/a).
2. **Vendoring.**  ``asv publish`` writes an ``index.html`` that loads jQuery, Flot,
   Bootstrap, stupidtable and blueimp-md5 from public CDNs, so with no network the
   page is blank.  This script replaces every such URL with a local copy under
   ``<html-dir>/vendor/`` (fetched once with ``npm pack`` into ``--vendor-cache``;
   the jsDelivr URLs name npm packages directly, the cdnjs ones are mapped below)
   and drops the ``integrity`` attributes, which only fit the CDN's exact bytes.
   ``--no-vendor`` skips this step (e.g. to prove the unvendored page fails).
3. **Labels and values.**  Each benchmarked commit becomes an asv tag of ``index.json``
   (asv draws tags as labels over its graphs, and labels nothing else on the commit
   axis), and ``summary-values.js`` writes the latest value under each tile of the grid.
4. **Serving.**  asv's pages fetch JSON with XHR, so they need HTTP: a
   ``http.server`` on 127.0.0.1 serves ``--html-dir``.
5. **Rendering.**  Playwright drives the system Chromium (``/usr/bin/chromium``; it never
   downloads a browser) with background networking off and every host name except
   127.0.0.1 unresolvable, so nothing outside the machine is reached.  It drives every
   tab and records console errors, uncaught exceptions and failed requests: the grid (a
   sparkline and a value on every tile, one name per benchmark), the Benchmark list (rows
   with values), the Regressions tab (the benchmarks of ``regressions.json``; with
   ``--expect-regressions``, none, or only those matching REGEX) and one benchmark's graph
   (at least ``--min-commits`` commits with a value, labelled axes, labelled commits).
   Screenshots: ``summary.png``, ``list.png``, ``regressions.png``, ``graph.png`` and
   ``graph-plot.png`` in ``--out``.

``--prepare-only`` does steps 1 (with ``--publish``) to 3 and stops (``scripts/asv_history.sh``
calls it to publish).  Exit status: 0 when every tab renders with no error recorded; 1
otherwise, listing what went wrong; 2 for a usage problem (no dashboard, no Chromium, no
Playwright, asv publish failed).  Needs: ``chromium`` (Debian: ``apt-get install chromium``),
the ``docs`` extra (Playwright), and ``npm`` for the first vendoring run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import math
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: CDN URL prefix -> (npm package spec, path inside the package's ``package/`` folder).
#: cdnjs serves minified builds of the same releases; stupidtable 1.0.1 is not on npm
#: and 1.1.3 has the same API.
CDNJS = {
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery@3.3.1", "dist/jquery.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": ("flot@0.8.3", "jquery.flot.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js": (
        "flot@0.8.3",
        "jquery.flot.time.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js": (
        "flot@0.8.3",
        "jquery.flot.selection.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js": (
        "flot@0.8.3",
        "jquery.flot.categories.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js": (
        "stupid-table-plugin@1.1.3",
        "stupidtable.min.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js": (
        "blueimp-md5@2.19.0",
        "js/md5.min.js",
    ),
}
JSDELIVR = re.compile(r"^https://cdn\.jsdelivr\.net/npm/(?P<spec>(?:@[^/]+/)?[^/@]+@[^/]+)/(?P<path>.+)$")
#: A <script src> or <link href> pointing off the machine.
EXTERNAL = re.compile(r"""(<(?:script|link)\b[^>]*?\b(?:src|href)=")(https?://[^"]+)("[^>]*>)""")
SRI = re.compile(r"""\s+(?:integrity|crossorigin|referrerpolicy)="[^"]*\"""")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
VIEWPORT = {"width": 1400, "height": 1000}


class UsageError(Exception):
    """A missing tool or dashboard: exit 2."""


# --- vendoring -----------------------------------------------------------------------------------


def resolve(url: str) -> tuple[str, str]:
    """(npm spec, file inside the package) for a CDN URL asv uses."""
    if url in CDNJS:
        return CDNJS[url]
    match = JSDELIVR.match(url)
    if match:
        return match["spec"], match["path"]
    msg = f"no offline copy known for {url}: add it to CDNJS in {__file__}"
    raise UsageError(msg)


def npm_tarball(spec: str, cache: pathlib.Path) -> pathlib.Path:
    """The ``npm pack`` tarball of ``spec`` in ``cache``, fetched once."""
    name, version = spec.rsplit("@", 1)
    stem = f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    path = cache / stem
    if not path.exists():
        npm = shutil.which("npm")
        if npm is None:
            msg = f"npm is needed once to fetch {spec} (or put {stem} in {cache})"
            raise UsageError(msg)
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "pack", spec, "--pack-destination", str(cache)], check=True, capture_output=True)
    return path


def extract(tarball: pathlib.Path, member: str, dest: pathlib.Path) -> None:
    """``package/<member>`` (and, for a stylesheet, its ``../fonts``) into ``dest``."""
    wanted = [f"package/{member}"]
    if member.endswith(".css"):
        fonts = f"package/{posix_parent(posix_parent(member))}/fonts/".replace("package//", "package/")
        wanted.append(fonts)
    with tarfile.open(tarball) as tar:
        for info in tar.getmembers():
            if info.isfile() and any(
                info.name == w or (w.endswith("/") and info.name.startswith(w)) for w in wanted
            ):
                target = dest / info.name.removeprefix("package/")
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(info) as src:  # type: ignore[union-attr]
                    target.write_bytes(src.read())


def posix_parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _localise(
    match: re.Match[str], *, html_dir: pathlib.Path, cache: pathlib.Path, log: list[str], page: str
) -> str:
    """The tag of ``match`` pointing at a local copy of its CDN file, without SRI attributes."""
    url = match[2]
    spec, member = resolve(url)
    package = spec.rsplit("@", 1)[0].lstrip("@").replace("/", "-")
    dest = html_dir / "vendor" / package
    if not (dest / member).exists():
        extract(npm_tarball(spec, cache), member, dest)
    log.append(f"{page}: {url} -> vendor/{package}/{member}")
    return SRI.sub("", f"{match[1]}vendor/{package}/{member}{match[3]}")


def vendor(html_dir: pathlib.Path, cache: pathlib.Path) -> list[str]:
    """Point every CDN URL in the dashboard's HTML at a local copy; returns what changed."""
    changed: list[str] = []
    for page in sorted(html_dir.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        local = functools.partial(_localise, html_dir=html_dir, cache=cache, log=changed, page=page.name)
        new = EXTERNAL.sub(local, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return changed


# --- publishing and preparing -------------------------------------------------------------------


def measured_benchmarks(results_dir: pathlib.Path) -> set[str]:
    """Names of the benchmarks with at least one finite value in any stored result file."""
    measured: set[str] = set()
    for path in results_dir.glob("*/*.json"):
        if path.name == "machine.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        column = doc.get("result_columns", ["result"]).index("result")
        for name, row in doc.get("results", {}).items():
            values = row[column] if isinstance(row, list) else row
            flat = values if isinstance(values, list) else [values]
            if any(isinstance(v, (int, float)) and math.isfinite(v) for v in flat):
                measured.add(name)
    return measured


def publish(asv_dir: pathlib.Path, results_dir: pathlib.Path) -> list[str]:
    """``asv publish`` of the benchmarks that have results; returns the names left out.

    asv lists every benchmark its last run discovered, measured or not (the short run
    measures a selection), so the grid would show empty tiles.  The benchmark list
    (``results/benchmarks.json``) is narrowed to the measured benchmarks for the time
    of the publish and restored afterwards: asv's pages then read files asv wrote
    itself, consistent with each other (parameter values a short run skips stay, as
    asv's ``n/a``).
    """
    listing = results_dir / "benchmarks.json"
    original = listing.read_text(encoding="utf-8")
    benchmarks = json.loads(original)
    measured = measured_benchmarks(results_dir)
    left_out = sorted(n for n in benchmarks if n != "version" and n not in measured)
    narrowed = {n: b for n, b in benchmarks.items() if n == "version" or n in measured}
    try:
        listing.write_text(json.dumps(narrowed), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "asv", "publish"], cwd=asv_dir, capture_output=True, text=True, check=False
        )
    finally:
        listing.write_text(original, encoding="utf-8")
    if done.returncode != 0:
        msg = f"asv publish failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
        raise UsageError(msg)
    return left_out


#: At most this many commits are labelled on the graphs (evenly spaced, the newest always).
MAX_LABELS = 16


def label_commits(html_dir: pathlib.Path) -> list[str]:
    """Label benchmarked commits on every graph with their short hash; returns the labels.

    asv's graphs draw the tags of ``index.json`` (``tags``: name -> revision) as labelled
    vertical lines, and label nothing else on the commit axis.  Each benchmarked commit
    (at most :data:`MAX_LABELS`, evenly spaced, the newest always) becomes such a tag,
    named by its hash as asv abbreviates it (``hash_length``).
    """
    index_path = html_dir / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    revisions = sorted(index["revision_to_hash"], key=int)
    step = max(1, math.ceil(len(revisions) / MAX_LABELS))
    chosen = revisions[::-1][::step][::-1]
    width = int(index.get("hash_length", 8))
    tags = dict(index.get("tags") or {})
    for rev in chosen:
        tags.setdefault(index["revision_to_hash"][rev][:width], int(rev))
    index["tags"] = tags
    index_path.write_text(json.dumps(index), encoding="utf-8")
    return [index["revision_to_hash"][rev][:width] for rev in chosen]


#: Added to index.html: under each tile of the summary grid, the last value of its sparkline.
SUMMARY_VALUES_JS = """// posenc-ref: the latest value under each tile of asv's summary grid (read from
// the graphs/summary/*.json file the sparkline draws).  Added by scripts/asv_dashboard_check.py.
$(function () {
  function fmt(v) { return Math.abs(v) >= 100 || Math.abs(v) < 0.01 ? v.toPrecision(3) : v.toFixed(2); }
  function label(tile) {
    if (tile.dataset.valueShown) return;
    var name = tile.getAttribute('href').slice(1);
    tile.dataset.valueShown = '1';
    $.getJSON('graphs/summary/' + name + '.json', function (rows) {
      var last = null;
      for (var i = rows.length - 1; i >= 0; i--) { if (rows[i][1] !== null) { last = rows[i][1]; break; } }
      var unit = ($.asv.main_json.benchmarks[name] || {}).unit || '';
      var text = last === null ? 'no value' : 'last: ' + fmt(last) + ' ' + unit;
      tile.style.height = 'auto';  // asv's tiles are 116 px high, room for the name and the plot only
      $('<div class="benchmark-value" style="font-size:smaller;color:#444"></div>').text(text).appendTo(tile);
    });
  }
  setInterval(function () {
    document.querySelectorAll('#summarygrid-display .benchmark-container').forEach(label);
  }, 500);
});
"""
SUMMARY_VALUES_FILE = "summary-values.js"


def add_summary_values(html_dir: pathlib.Path) -> bool:
    """Write :data:`SUMMARY_VALUES_JS` next to index.html and load it there; False if already."""
    (html_dir / SUMMARY_VALUES_FILE).write_text(SUMMARY_VALUES_JS, encoding="utf-8")
    page = html_dir / "index.html"
    text = page.read_text(encoding="utf-8")
    tag = f'<script type="text/javascript" src="{SUMMARY_VALUES_FILE}"></script>'
    if tag in text:
        return False
    page.write_text(text.replace("</head>", f"  {tag}\n</head>", 1), encoding="utf-8")
    return True


# --- serving and Chromium ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(directory: pathlib.Path) -> Iterator[str]:
    """An HTTP server for ``directory`` on 127.0.0.1; yields its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


#: What the main graph shows: commits with a value, and the axis labels (read from Flot).
GRAPH_JS = r"""
() => {
  const el = $('#main-graph');
  const plot = el.data('plot');
  if (!plot) return null;
  const revisions = new Set();
  let series = 0;
  for (const s of plot.getData()) {
    const points = (s.data || []).filter((p) => p && p[1] !== null && !Number.isNaN(p[1]));
    if (points.length) series += 1;
    for (const p of points) revisions.add(p[0]);
  }
  const axes = plot.getAxes();
  // asv draws each tag of index.json (here: the commits' short hashes) as a label over the plot
  const labels = [...el.find('div')].map((d) => d.textContent.trim())
    .filter((t) => Object.prototype.hasOwnProperty.call($.asv.main_json.tags, t));
  return {commits: revisions.size, series, x: axes.xaxis.options.axisLabel || '',
          y: axes.yaxis.options.axisLabel || '', labels, title: document.title};
}
"""


class Events:
    """Console errors, uncaught exceptions and failed requests of a page."""

    def __init__(self, page: Any, base: str) -> None:
        self.errors: list[str] = []
        self.notes: list[str] = []
        self.base = base
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught exception: {exc}"))
        page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.failure} {r.url}"))
        page.on("response", self._response)

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "assert") and "status of 404" not in msg.text:
            self.errors.append(f"console.{msg.type}: {msg.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            url = response.url
            # asv asks for the graph of every benchmark in its index; publish() leaves out the
            # ones without data, so a 404 left for graphs/ is a note, anything else an error.
            missing_graph = url.startswith(f"{self.base}/graphs/") and response.status == 404
            (self.notes if missing_graph else self.errors).append(f"HTTP {response.status} for {url}")


def _wait(page: Any, js: str, timeout_ms: int) -> bool:
    try:
        page.wait_for_function(js, timeout=timeout_ms)
    except Exception:
        return False
    return True


def check_grid(page: Any, base: str, out: pathlib.Path, timeout_ms: int) -> tuple[list[str], str | None]:
    """The summary grid: a tile per benchmark, each with a sparkline and its last value."""
    problems: list[str] = []
    page.goto(f"{base}/index.html", wait_until="load", timeout=timeout_ms)
    tiles = "#summarygrid-display .benchmark-container"
    drawn = f"""() => {{ const t = document.querySelectorAll('{tiles}');
        return t.length > 0
            && [...t].every((a) => a.querySelector('canvas') && a.querySelector('.benchmark-value')); }}"""
    if not _wait(page, drawn, timeout_ms):
        problems.append("summary grid: not every tile drew a sparkline with its value")
    page.wait_for_timeout(500)
    page.screenshot(path=out / "summary.png", full_page=True)
    shown = page.evaluate(
        f"""() => [...document.querySelectorAll('{tiles}')].map((a) => ({{
            name: a.getAttribute('href').slice(1), plot: !!a.querySelector('canvas'),
            value: (a.querySelector('.benchmark-value') || {{}}).textContent || ''}}))"""
    )
    without = [t["name"] for t in shown if not t["value"].startswith("last: ")]
    if without:
        problems.append(f"summary grid: {len(without)} tile(s) without a value, e.g. {without[0]}")
    names = [t["name"] for t in shown]
    labels = [name.rsplit(".", 1)[-1] for name in names]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        problems.append(f"benchmark names used by more than one benchmark: {', '.join(repeated)}")
    print(
        f"summary grid: {len(shown)} tiles, e.g. {shown[0]['name']}: {shown[0]['value']!r}" if shown else ""
    )
    return problems, next((t["name"] for t in shown if t["plot"]), None)


def check_list(page: Any, base: str, out: pathlib.Path, timeout_ms: int) -> list[str]:
    """The Benchmark list tab: a table with a value in every measured row, no "Loading..." left."""
    page.goto(f"{base}/index.html#summarylist", wait_until="load", timeout=timeout_ms)
    rows = "#summarylist-body table tbody tr"
    loaded = (
        f"() => document.querySelectorAll('{rows}').length > 0"
        " && !document.querySelector('#summarylist-body .message')"
    )
    problems = (
        []
        if _wait(page, loaded, timeout_ms)
        else ["Benchmark list: no table (still loading, or a script error)"]
    )
    page.wait_for_timeout(300)
    page.screenshot(path=out / "list.png", full_page=True)
    cells = page.evaluate(
        f"() => [...document.querySelectorAll('{rows}')]"
        ".map((r) => [...r.cells].map((c) => c.textContent.trim()))"
    )
    valued = [c for c in cells if len(c) > 1 and c[1]]
    print(f"Benchmark list: {len(cells)} rows, {len(valued)} with a value")
    if cells and not valued:
        problems.append("Benchmark list: no row has a value")
    return problems


def check_regressions(
    page: Any, base: str, out: pathlib.Path, timeout_ms: int, expect: str | None, html_dir: pathlib.Path
) -> list[str]:
    """The Regressions tab: its rows are regressions.json's, and match ``expect`` when given.

    ``expect``: ``"none"`` (the tab must be empty), or a regular expression that every listed
    benchmark matches (with at least one listed).
    """
    page.goto(f"{base}/index.html#regressions", wait_until="load", timeout=timeout_ms)
    table = "#regressions-body table.table:not(.ignored)"
    problems = (
        []
        if _wait(page, f"() => !!document.querySelector('{table}')", timeout_ms)
        else ["Regressions: no table (still loading, or a script error)"]
    )
    page.wait_for_timeout(300)
    page.screenshot(path=out / "regressions.png", full_page=True)
    listed = page.evaluate(
        f"() => [...document.querySelectorAll('{table} tbody tr')].map((r) => r.cells[0].textContent.trim())"
    )
    stored = json.loads((html_dir / "regressions.json").read_text(encoding="utf-8")).get("regressions", [])
    print(f"Regressions: {len(set(listed))} benchmark(s) listed ({len(stored)} in regressions.json)")
    for name in sorted(set(listed))[:10]:
        print(f"  {name}")
    # the tab may show a regression on several rows (one per jump); compare the benchmarks
    if set(listed) != {row[0] for row in stored}:
        problems.append(
            f"Regressions: the tab lists {len(set(listed))} benchmark(s), regressions.json "
            f"holds {len({row[0] for row in stored})}"
        )
    listed = sorted(set(listed))
    if expect == "none" and listed:
        problems.append(f"Regressions: {len(listed)} listed where none were expected, e.g. {listed[0]}")
    elif expect not in (None, "none"):
        if not listed:
            problems.append(f"Regressions: none listed; expected some matching {expect!r}")
        others = [name for name in listed if not re.search(expect, name)]
        if others:
            problems.append(
                f"Regressions: {len(others)} listed that do not match {expect!r}, e.g. {others[0]}"
            )
    return problems


def check_graph(
    page: Any, base: str, out: pathlib.Path, benchmark: str, timeout_ms: int, args: Any
) -> list[str]:
    """One benchmark's graph: enough commits with values, labelled axes, commits labelled by hash."""
    page.goto(f"{base}/index.html#{benchmark}", wait_until="load", timeout=timeout_ms)
    problems: list[str] = []
    if not _wait(page, "() => !!($('#main-graph').data('plot'))", timeout_ms):
        problems.append(f"graph of {benchmark} did not render within {args.timeout:.0f} s")
    page.wait_for_timeout(1500)
    page.screenshot(path=out / "graph.png")
    page.locator("#main-graph").screenshot(path=out / "graph-plot.png")
    shown = page.evaluate(GRAPH_JS)
    print(f"graph: {benchmark}")
    if not shown:
        return [*problems, f"graph of {benchmark}: no plot"]
    print(
        f"graph: {shown['commits']} commits with values, {shown['series']} series, "
        f"x axis {shown['x']!r}, y axis {shown['y']!r}, commit labels {shown['labels']}"
    )
    if shown["commits"] < args.min_commits:
        problems.append(f"the graph has {shown['commits']} commit(s) with values; want >= {args.min_commits}")
    if not shown["x"] or not shown["y"]:
        problems.append(f"the graph's axes are not labelled (x {shown['x']!r}, y {shown['y']!r})")
    if len(shown["labels"]) < min(shown["commits"], MAX_LABELS):
        problems.append(f"the graph labels {len(shown['labels'])} commit(s) of {shown['commits']}")
    return problems


def check_pages(page: Any, base: str, out: pathlib.Path, args: Any) -> list[str]:
    """Every tab of the dashboard, in turn; returns the problems (console errors included)."""
    timeout_ms = int(args.timeout * 1000)
    events = Events(page, base)
    problems, first = check_grid(page, base, out, timeout_ms)
    problems += check_list(page, base, out, timeout_ms)
    problems += check_regressions(page, base, out, timeout_ms, args.expect_regressions, args.html_dir)
    benchmark = args.benchmark or first
    if benchmark:
        problems += check_graph(page, base, out, benchmark, timeout_ms, args)
    else:
        problems.append("no summary tile has a plot: no benchmark has data")
    if events.notes:
        print(f"note: {len(events.notes)} graph file(s) missing, e.g. {events.notes[0]}")
    return problems + events.errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--html-dir", type=pathlib.Path, default=ROOT / ".asv" / "html")
    parser.add_argument(
        "--out", type=pathlib.Path, default=ROOT / ".asv" / "dashboard", help="screenshots go here"
    )
    parser.add_argument("--vendor-cache", type=pathlib.Path, default=ROOT / ".asv" / "vendor-cache")
    parser.add_argument("--no-vendor", action="store_true", help="leave the CDN URLs as asv wrote them")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="first `asv publish` the benchmarks that have results (from --results-dir, in --asv-dir)",
    )
    parser.add_argument("--asv-dir", type=pathlib.Path, default=ROOT / "asv_benchmarks")
    parser.add_argument("--results-dir", type=pathlib.Path, default=ROOT / ".asv" / "results")
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="vendor the assets, label the commits, add the grid's values, and stop",
    )
    parser.add_argument(
        "--expect-regressions",
        metavar="none|REGEX",
        help="the Regressions tab must be empty (none), or list only benchmarks matching REGEX",
    )
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--benchmark", help="benchmark whose graph to open (default: the first tile)")
    parser.add_argument("--min-commits", type=int, default=2, help="commits the graph must show (default 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each page")
    args = parser.parse_args(argv)
    try:
        if args.publish:
            left_out = publish(args.asv_dir, args.results_dir)
            print(f"published; {len(left_out)} benchmark(s) without results left out of the dashboard")
        if not (args.html_dir / "index.html").exists():
            msg = f"no dashboard at {args.html_dir} (run: scripts/asv_history.sh)"
            raise UsageError(msg)
        if not args.no_vendor:
            for line in vendor(args.html_dir, args.vendor_cache):
                print(f"vendored {line}")
        labels = label_commits(args.html_dir)
        print(f"commits labelled on the graphs: {' '.join(labels)}")
        add_summary_values(args.html_dir)
        if args.prepare_only:
            return 0
        executable = shutil.which(args.chromium)
        if executable is None:
            msg = f"{args.chromium} not found (Debian: apt-get install chromium; or pass --chromium PATH)"
            raise UsageError(msg)
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            msg = f"Playwright is needed (pip install playwright, or the docs extra): {exc}"
            raise UsageError(msg) from exc
        args.out.mkdir(parents=True, exist_ok=True)
        with serve(args.html_dir) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
            page = browser.new_page(viewport=VIEWPORT)
            try:
                problems = check_pages(page, base, args.out, args)
            finally:
                browser.close()
    except UsageError as exc:
        print(f"asv_dashboard_check: {exc}", file=sys.stderr)
        return 2
    shots = ("summary.png", "list.png", "regressions.png", "graph.png", "graph-plot.png")
    print(f"screenshots in {args.out}: {', '.join(shots)}")
    if problems:
        print(f"FAIL: {len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(
        "OK: every tab renders offline with no console errors; the grid has values, the graph commit labels"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
