#!/usr/bin/env python
"""Check that the published asv dashboard renders offline in headless Chromium.

    python scripts/asv_dashboard_check.py [--html-dir .asv/html] [--out .asv/dashboard]

1. **Vendoring.**  ``asv publish`` writes an ``index.html`` that loads jQuery, Flot,
   Bootstrap, stupidtable and blueimp-md5 from public CDNs, so with no network the
   page is blank.  This script replaces every such URL with a local copy under
   ``<html-dir>/vendor/`` (fetched once with ``npm pack`` into ``--vendor-cache``;
   the jsDelivr URLs name npm packages directly, the cdnjs ones are mapped below)
   and drops the ``integrity`` attributes, which only fit the CDN's exact bytes.
   ``--no-vendor`` skips this step (e.g. to prove the unvendored page fails).
2. **Serving.**  asv's pages fetch JSON with XHR, so they need HTTP: a
   ``http.server`` on 127.0.0.1 serves ``--html-dir``.
3. **Rendering.**  Chromium runs headless with a fresh profile, background
   networking off, and every host name except 127.0.0.1 unresolvable
   (``--host-resolver-rules``), so nothing outside the machine is reached.  Over the
   Chrome DevTools Protocol (a small client on the ``websockets`` package) it loads
   the summary grid and one benchmark's graph, records console errors, uncaught
   exceptions, failed requests and error log entries, and saves a screenshot of
   each page in ``--out``.

Exit status: 0 when both pages render (summary tiles and a Flot canvas exist) with
no error recorded; 1 otherwise, listing what went wrong; 2 for a usage problem
(no dashboard, no Chromium, no ``websockets``).  Needs: ``chromium`` (Debian:
``apt-get install chromium``), ``pip install websockets``, and ``npm`` for the
first vendoring run.
"""

from __future__ import annotations

import argparse
import base64
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
import tempfile
import threading
import time
import urllib.request
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
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--window-size=1400,1000",
    "--hide-scrollbars",
]


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


@contextlib.contextmanager
def chromium(executable: str, timeout: float) -> Iterator[int]:
    """Start headless Chromium with a fresh profile; yields its DevTools port."""
    with tempfile.TemporaryDirectory(prefix="asv-dashboard-") as profile:
        cmd = [
            executable,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "about:blank",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            port_file = pathlib.Path(profile, "DevToolsActivePort")
            deadline = time.monotonic() + timeout
            while not port_file.exists() or not port_file.read_text().strip():
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
                    msg = f"Chromium did not start ({executable}): {err}"
                    raise UsageError(msg)
                time.sleep(0.1)
            yield int(port_file.read_text().split()[0])
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


class DevTools:
    """A minimal Chrome DevTools Protocol client for one page target."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == ident:
                if "error" in message:
                    msg = f"{method}: {message['error']}"
                    raise RuntimeError(msg)
                return message.get("result", {})
            self.events.append(message)

    def pump(self, seconds: float) -> None:
        """Collect events for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=left)))
            except TimeoutError:
                return

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return True
            self.pump(0.25)
        return False

    def screenshot(self, path: pathlib.Path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path.write_bytes(base64.b64decode(data))

    def problems(self, base: str) -> tuple[list[str], list[str]]:
        """(errors, notes): console errors, uncaught exceptions, failed requests, error log entries.

        A 404 for ``graphs/**.json`` on the local server is a note, not an error: asv's
        pages ask for the graph of every benchmark in the suite, and a benchmark that
        was skipped in every stored result (e.g. CuPy without a GPU) has none.
        """
        found, notes = [], []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                found.append(f"console.{params['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                text = details.get("exception", {}).get("description") or details.get("text", "")
                found.append(f"uncaught exception: {text}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                url = entry.get("url", "")
                text = f"log error ({entry.get('source')}): {entry.get('text')} {url}".strip()
                missing_graph = url.startswith(f"{base}/graphs/") and "status of 404" in entry.get("text", "")
                (notes if missing_graph else found).append(text)
            elif method == "Network.loadingFailed" and not params.get("canceled"):
                if params.get("type") not in ("XHR", "Fetch"):  # XHR failures are logged above with their URL
                    found.append(f"request failed: {params.get('errorText')} ({params.get('type')})")
        return found, notes


def page_socket(port: int) -> str:
    """The DevTools websocket URL of the browser's first page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
        pages = [t for t in json.load(resp) if t.get("type") == "page"]
    return str(pages[0]["webSocketDebuggerUrl"])


def check(base: str, port: int, out: pathlib.Path, benchmark: str | None, timeout: float) -> list[str]:
    from websockets.sync.client import connect

    with connect(page_socket(port), max_size=None, open_timeout=10) as ws:
        return check_pages(DevTools(ws), base, out, benchmark, timeout)


def check_pages(
    tools: DevTools, base: str, out: pathlib.Path, benchmark: str | None, timeout: float
) -> list[str]:
    for domain in ("Page", "Runtime", "Log", "Network"):
        tools.call(f"{domain}.enable")
    problems: list[str] = []
    tools.call("Page.navigate", url=f"{base}/index.html")
    tiles = "document.querySelectorAll('#summarygrid-display .benchmark-container').length"
    if not tools.wait_for(f"{tiles} > 0", timeout):
        problems.append(
            f"summary grid did not render within {timeout:.0f} s ({tools.evaluate('location.href')})"
        )
    tools.pump(1.0)
    tools.screenshot(out / "summary.png")
    count = tools.evaluate(tiles) or 0
    if benchmark is None:  # the first tile that drew a plot, i.e. that has data
        benchmark = tools.evaluate(
            "(() => { for (const a of document.querySelectorAll("
            "'#summarygrid-display .benchmark-container')) { if (a.querySelector('canvas')) "
            "return a.getAttribute('href').slice(1); } return null; })()"
        )
    if benchmark:
        tools.call("Page.navigate", url=f"{base}/index.html#{benchmark}")
        if not tools.wait_for(
            "document.querySelectorAll('#main-graph canvas, canvas.flot-base').length > 0", timeout
        ):
            problems.append(f"graph of {benchmark} did not render within {timeout:.0f} s")
        tools.pump(1.5)
        tools.screenshot(out / "graph.png")
    print(f"summary grid: {count} benchmark tiles; graph: {benchmark}")
    errors, notes = tools.problems(base)
    if notes:
        print(f"note: {len(notes)} benchmark(s) have no stored results (404 for their graph JSON), e.g.")
        print(f"  {notes[0]}")
    return problems + errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html-dir", type=pathlib.Path, default=ROOT / ".asv" / "html")
    parser.add_argument(
        "--out", type=pathlib.Path, default=ROOT / ".asv" / "dashboard", help="screenshots go here"
    )
    parser.add_argument("--vendor-cache", type=pathlib.Path, default=ROOT / ".asv" / "vendor-cache")
    parser.add_argument("--no-vendor", action="store_true", help="leave the CDN URLs as asv wrote them")
    parser.add_argument("--vendor-only", action="store_true", help="vendor the assets and stop (no browser)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    parser.add_argument("--benchmark", help="benchmark whose graph to open (default: the first tile)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each page")
    args = parser.parse_args(argv)
    try:
        if not (args.html_dir / "index.html").exists():
            msg = f"no dashboard at {args.html_dir} (run: cd asv_benchmarks && asv publish)"
            raise UsageError(msg)
        if not args.no_vendor:
            for line in vendor(args.html_dir, args.vendor_cache):
                print(f"vendored {line}")
        if args.vendor_only:
            return 0
        executable = shutil.which(args.chromium)
        if executable is None:
            msg = f"{args.chromium} not found (Debian: apt-get install chromium; or pass --chromium PATH)"
            raise UsageError(msg)
        try:
            import websockets.sync.client  # noqa: F401
        except ImportError as exc:
            msg = f"the websockets package is needed (pip install websockets): {exc}"
            raise UsageError(msg) from exc
        args.out.mkdir(parents=True, exist_ok=True)
        with serve(args.html_dir) as base, chromium(executable, args.timeout) as port:
            problems = check(base, port, args.out, args.benchmark, args.timeout)
    except UsageError as exc:
        print(f"asv_dashboard_check: {exc}", file=sys.stderr)
        return 2
    print(f"screenshots: {args.out / 'summary.png'}, {args.out / 'graph.png'}")
    if problems:
        print(f"FAIL: {len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print("OK: the dashboard renders offline with no console errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
