#!/usr/bin/env python
"""Prepare the published asv dashboard for offline use, and check it in headless Chromium.

    python scripts/asv_dashboard_check.py [--html-dir .asv/html] [--out .asv/dashboard]

1. **Vendoring.**  ``asv publish`` writes an ``index.html`` that loads jQuery, Flot,
   Bootstrap, stupidtable and blueimp-md5 from public CDNs, so with no network the
   page is blank.  This script replaces every such URL with a local copy under
   ``<html-dir>/vendor/`` (fetched once with ``npm pack`` into ``--vendor-cache``;
   the jsDelivr URLs name npm packages directly, the cdnjs ones are mapped below)
   and drops the ``integrity`` attributes, which only fit the CDN's exact bytes.
   ``--no-vendor`` skips this step (e.g. to prove the unvendored page fails).
2. **Hiding what has no data.**  asv lists every benchmark of the suite and every value
   of every parameter, measured or not: backends that are not installed, sizes a short
   run skips.  Benchmarks without any result are dropped from ``index.json``, and so
   are parameter values (a backend, a size) that have no result in any graph; the
   graphs' data and the regressions list are re-indexed to match.
3. **Serving.**  asv's pages fetch JSON with XHR, so they need HTTP: a
   ``http.server`` on 127.0.0.1 serves ``--html-dir``.
4. **Rendering.**  Playwright drives the system Chromium (``/usr/bin/chromium``; it never
   downloads a browser) with background networking off and every host name except
   127.0.0.1 unresolvable, so nothing outside the machine is reached.  It loads the
   summary grid and one benchmark's graph, records console errors, uncaught exceptions
   and failed requests, and checks that the graph **carries information**: at least
   ``--min-commits`` commits with a value, a labelled y axis (the unit) and a labelled
   x axis.  It saves ``summary.png``, ``graph.png`` (the whole page) and
   ``graph-plot.png`` (the plot alone) in ``--out``.

``--prepare-only`` does steps 1 and 2 and stops (``scripts/asv_history.sh`` calls it after
publishing).  Exit status: 0 when both pages render with no error recorded; 1
otherwise, listing what went wrong; 2 for a usage problem (no dashboard, no Chromium, no
Playwright).  Needs: ``chromium`` (Debian: ``apt-get install chromium``), the ``docs``
extra (Playwright), and ``npm`` for the first vendoring run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import itertools
import json
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


# --- hiding benchmarks and parameter values without data ---------------------------------------


def _graph_files(html_dir: pathlib.Path) -> dict[str, list[pathlib.Path]]:
    """Benchmark name -> its per-machine graph files (not the summary sparklines)."""
    found: dict[str, list[pathlib.Path]] = {}
    for path in (html_dir / "graphs").rglob("*.json"):
        if "summary" not in path.relative_to(html_dir / "graphs").parts[:1] and path.name != "summary.json":
            found.setdefault(path.stem, []).append(path)
    return found


def hide_empty(html_dir: pathlib.Path) -> list[str]:
    """Drop benchmarks and parameter values without any result; returns what was hidden.

    A graph file holds ``[[revision, values], ...]``; for a parameterised benchmark
    ``values`` has one entry per combination of its ``params`` (row-major, the first
    parameter slowest), ``null`` where nothing was measured.
    """
    index_path = html_dir / "index.json"
    index = json.loads(index_path.read_text())
    graphs = _graph_files(html_dir)
    hidden: list[str] = []
    remap: dict[str, dict[int, int]] = {}
    for name in list(index["benchmarks"]):
        bench = index["benchmarks"][name]
        files = graphs.get(name, [])
        data = [json.loads(p.read_text()) for p in files]
        params = bench.get("params") or []
        if not params:
            if not any(v is not None for d in data for _, v in d):
                del index["benchmarks"][name]
                hidden.append(f"{name} (no results)")
            continue
        combos = list(itertools.product(*[range(len(p)) for p in params]))
        measured = [False] * len(combos)
        for d in data:
            for _, values in d:
                for i, v in enumerate(values or []):
                    if v is not None:
                        measured[i] = True
        if not any(measured):
            del index["benchmarks"][name]
            hidden.append(f"{name} (no results)")
            continue
        keep = [
            sorted({c[axis] for c, m in zip(combos, measured, strict=True) if m})
            for axis in range(len(params))
        ]
        kept = [i for i, c in enumerate(combos) if all(c[a] in keep[a] for a in range(len(params)))]
        if len(kept) == len(combos):
            continue
        for axis, values in enumerate(params):
            gone = [values[j] for j in range(len(values)) if j not in keep[axis]]
            if gone:
                hidden.append(f"{name}: {bench['param_names'][axis]} {', '.join(gone)} (no results)")
        bench["params"] = [[values[j] for j in keep[axis]] for axis, values in enumerate(params)]
        remap[name] = {old: new for new, old in enumerate(kept)}
        for path, d in zip(files, data, strict=True):
            rows = [[rev, None if vals is None else [vals[i] for i in kept]] for rev, vals in d]
            path.write_text(json.dumps(rows))
    index_path.write_text(json.dumps(index))
    _reindex_regressions(html_dir, remap)
    return hidden


def _reindex_regressions(html_dir: pathlib.Path, remap: dict[str, dict[int, int]]) -> None:
    """Point the regressions list's flat parameter indices at the pruned parameter lists."""
    path = html_dir / "regressions.json"
    if not path.exists() or not remap:
        return
    doc = json.loads(path.read_text())
    rows = []
    for row in doc.get("regressions", []):
        name, idx = row[0], row[3] if len(row) > 3 else None
        if name in remap and isinstance(idx, int):
            if idx not in remap[name]:
                continue
            row = [*row[:3], remap[name][idx], *row[4:]]
        rows.append(row)
    doc["regressions"] = rows
    path.write_text(json.dumps(doc))


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
  return {commits: revisions.size, series, x: axes.xaxis.options.axisLabel || '',
          y: axes.yaxis.options.axisLabel || '', title: document.title};
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
            # asv asks for the graph of every benchmark in its index; hide_empty() drops the
            # ones without data, so a 404 left for graphs/ is a note, anything else an error.
            missing_graph = url.startswith(f"{self.base}/graphs/") and response.status == 404
            (self.notes if missing_graph else self.errors).append(f"HTTP {response.status} for {url}")


def check_pages(page: Any, base: str, out: pathlib.Path, benchmark: str | None, args: Any) -> list[str]:
    timeout_ms = int(args.timeout * 1000)
    events = Events(page, base)
    problems: list[str] = []
    page.goto(f"{base}/index.html", wait_until="load", timeout=timeout_ms)
    tiles = "#summarygrid-display .benchmark-container"
    try:
        page.wait_for_selector(tiles, timeout=timeout_ms)
    except Exception:
        problems.append(f"summary grid did not render within {args.timeout:.0f} s")
    page.wait_for_timeout(1000)
    page.screenshot(path=out / "summary.png", full_page=True)
    count = page.locator(tiles).count()
    if benchmark is None:  # the first tile that drew a plot, i.e. that has data
        benchmark = page.evaluate(
            """() => { for (const a of document.querySelectorAll('#summarygrid-display .benchmark-container'))
                 { if (a.querySelector('canvas')) return a.getAttribute('href').slice(1); } return null; }"""
        )
    shown = None
    if benchmark:
        page.goto(f"{base}/index.html#{benchmark}", wait_until="load", timeout=timeout_ms)
        try:
            page.wait_for_function("() => !!($('#main-graph').data('plot'))", timeout=timeout_ms)
        except Exception:
            problems.append(f"graph of {benchmark} did not render within {args.timeout:.0f} s")
        page.wait_for_timeout(1500)
        page.screenshot(path=out / "graph.png")
        page.locator("#main-graph").screenshot(path=out / "graph-plot.png")
        shown = page.evaluate(GRAPH_JS)
    else:
        problems.append("no summary tile has a plot: no benchmark has data")
    print(f"summary grid: {count} benchmark tiles; graph: {benchmark}")
    if shown:
        print(
            f"graph: {shown['commits']} commits with values, {shown['series']} series, "
            f"x axis {shown['x']!r}, y axis {shown['y']!r}"
        )
        if shown["commits"] < args.min_commits:
            problems.append(
                f"the graph has {shown['commits']} commit(s) with values; want >= {args.min_commits}"
            )
        if not shown["x"] or not shown["y"]:
            problems.append(f"the graph's axes are not labelled (x {shown['x']!r}, y {shown['y']!r})")
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
        "--prepare-only", action="store_true", help="vendor the assets, hide what has no data, and stop"
    )
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--benchmark", help="benchmark whose graph to open (default: the first tile)")
    parser.add_argument("--min-commits", type=int, default=2, help="commits the graph must show (default 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each page")
    args = parser.parse_args(argv)
    try:
        if not (args.html_dir / "index.html").exists():
            msg = f"no dashboard at {args.html_dir} (run: scripts/asv_history.sh)"
            raise UsageError(msg)
        if not args.no_vendor:
            for line in vendor(args.html_dir, args.vendor_cache):
                print(f"vendored {line}")
        hidden = hide_empty(args.html_dir)
        if hidden:
            print(f"hidden, for want of data: {len(hidden)} benchmark(s) or parameter value(s), e.g.")
            for line in hidden[:5]:
                print(f"  {line}")
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
                problems = check_pages(page, base, args.out, args.benchmark, args)
            finally:
                browser.close()
    except UsageError as exc:
        print(f"asv_dashboard_check: {exc}", file=sys.stderr)
        return 2
    print(f"screenshots: {args.out / 'summary.png'}, {args.out / 'graph.png'}, {args.out / 'graph-plot.png'}")
    if problems:
        print(f"FAIL: {len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print("OK: the dashboard renders offline with no console errors, and its graph carries information")
    return 0


if __name__ == "__main__":
    sys.exit(main())
