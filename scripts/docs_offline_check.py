#!/usr/bin/env python3
"""Open the built docs from disk in headless Chromium with no network, and check them.

For every HTML page of the site (``file://`` URLs, no web server):

- **no network**: the browser is started with an unreachable proxy and a host resolver
  that resolves nothing, CDP puts the page offline, and any request that is not
  ``file:``/``data:``/``blob:``/``about:`` is a failure (so is a local file that fails
  to load: a missing stylesheet, script or image);
- **math renders**: MathJax (vendored) has loaded and typeset every ``.math`` node into
  an ``<mjx-container>`` holding an SVG, with no TeX error nodes;
- **images load**: every ``<img>`` is complete with a non-zero natural width;
- **no console errors or uncaught exceptions**;
- **internal links resolve** to files that exist (checked on disk).

Then **search works**: ``search.html?q=...`` for a few terms returns results (which needs
``searchindex.js`` to load from disk).  Screenshots of every page (first screen) and full
pages of a few go to ``--out``.  Exit status 0 when everything passes, 1 otherwise,
2 when the check itself could not run.

Needs Debian's ``chromium`` (``apt-get install -y chromium``) and the ``websockets``
package (``pip install websockets``).  Usage::

    python scripts/docs_offline_check.py [--site docs/_build/html] [--out reports/docs-offline]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # websockets < 14
    from websockets import connect as ws_connect  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--window-size=1280,900",
    # No network at all: every host resolves to nothing, and all traffic would go to a
    # proxy on a closed port.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--remote-debugging-port=0",
]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:", "devtools:")
SEARCH_TERMS = ("alibi", "yarn", "bucket", "interleaved")
FULL_PAGE = (
    "index.html",
    "families/rope.html",
    "families/relative.html",
    "guide/check.html",
    "guide/golden-format.html",
)


@dataclass
class PageResult:
    page: str
    problems: list[str] = field(default_factory=list)
    math: int = 0
    images: int = 0
    seconds: float = 0.0


# --------------------------------------------------------------------------------------
# A minimal Chrome DevTools Protocol client
# --------------------------------------------------------------------------------------
class CDP:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: list[tuple[str, dict[str, Any], str | None]] = []
        self.waiters: list[tuple[str, str | None, asyncio.Future[Any]]] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg:
                fut = self.pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    if "error" in msg:
                        fut.set_exception(RuntimeError(f"CDP error: {msg['error']}"))
                    else:
                        fut.set_result(msg.get("result", {}))
            else:
                method, params, session = msg.get("method", ""), msg.get("params", {}), msg.get("sessionId")
                self.events.append((method, params, session))
                for waiter in list(self.waiters):
                    if waiter[0] == method and waiter[1] in (None, session) and not waiter[2].done():
                        waiter[2].set_result(params)
                        self.waiters.remove(waiter)

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        await self.ws.send(json.dumps(msg))
        return await asyncio.wait_for(fut, timeout)

    def expect(self, method: str, session: str | None) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiters.append((method, session, fut))
        return fut

    async def evaluate(self, expression: str, session: str, timeout: float = 30.0) -> Any:
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=session,
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            description = details.get("exception", {}).get("description", "")
            msg = f"page script failed: {details.get('text')} {description}"
            raise RuntimeError(msg)
        return result["result"].get("value")


# --------------------------------------------------------------------------------------
# Page probes (run inside the page)
# --------------------------------------------------------------------------------------
PROBE_JS = r"""
(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const mathNodes = document.querySelectorAll('span.math, div.math').length;
  let mathjax = 'absent';
  if (mathNodes > 0) {
    const t0 = Date.now();
    while (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) {
      if (Date.now() - t0 > %(timeout)d) break;
      await sleep(50);
    }
    if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
      await window.MathJax.startup.promise;
      mathjax = window.MathJax.version || 'loaded';
    }
  }
  const containers = [...document.querySelectorAll('mjx-container')];
  const withSvg = containers.filter((c) => c.querySelector('svg')).length;
  const texErrors = [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]
    .map((e) => e.getAttribute('data-mjx-error') || e.textContent).slice(0, 5);
  const rawTex = [...document.querySelectorAll('span.math, div.math')]
    .filter((n) => !n.querySelector('mjx-container')).map((n) => n.textContent.slice(0, 60)).slice(0, 5);
  // Unrendered dollar math (e.g. a formula broken by a table's "|"): "$" in prose text.
  const walker = document.createTreeWalker(document.querySelector('article') || document.body,
                                           NodeFilter.SHOW_TEXT);
  const strayDollars = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const inCode = node.parentElement.closest('pre, code, .highlight, script, style');
    if (node.textContent.includes('$') && !inCode) {
      strayDollars.push(node.textContent.trim().slice(0, 60));
    }
  }
  const imgs = [...document.images]
    .map((i) => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}));
  return {mathNodes, mathjax, containers: containers.length, withSvg, texErrors, rawTex, imgs, strayDollars,
          title: document.title, height: document.documentElement.scrollHeight};
})()
"""

SEARCH_JS = r"""
(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const t0 = Date.now();
  let items = 0, status = '';
  while (Date.now() - t0 < %(timeout)d) {
    items = document.querySelectorAll('#search-results li, ul.search li').length;
    const s = document.querySelector(
      '#search-results p.search-summary, #search-results > p, .search-summary, #search-progress');
    status = s ? s.textContent.trim() : '';
    if (/finished|did not match/i.test(status)) break;
    await sleep(100);
  }
  const indexLoaded = typeof Search !== 'undefined' && Search._index !== null && Search._index !== undefined;
  const first = [...document.querySelectorAll('#search-results li a, ul.search li a')].slice(0, 3)
    .map((a) => a.textContent.trim());
  return {items, status, indexLoaded, first};
})()
"""


# --------------------------------------------------------------------------------------
# Static checks on disk
# --------------------------------------------------------------------------------------
class _LinkParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (
                (tag == "a" and name == "href")
                or (tag in {"img", "script"} and name == "src")
                or (tag == "link" and name == "href")
            ):
                self.refs.append(value)


def broken_local_links(site: Path, page: Path) -> list[str]:
    parser = _LinkParser()
    parser.feed(page.read_text(encoding="utf-8"))
    broken = []
    for ref in parser.refs:
        parts = urllib.parse.urlsplit(ref)
        if parts.scheme or ref.startswith(("#", "//", "mailto:")):
            if parts.scheme in ("http", "https") and page.name != "search.html":
                pass  # outbound links are fine to have; they are never *loaded*
            continue
        target = (page.parent / urllib.parse.unquote(parts.path)).resolve()
        if parts.path and not target.exists():
            broken.append(ref)
    return broken


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------
def find_chromium(explicit: str | None) -> str:
    for candidate in (explicit, os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)  # type: ignore[return-value]
    msg = "no Chromium found: apt-get install -y chromium (or pass --chromium PATH)"
    raise SystemExit(msg)


async def start_browser(binary: str, profile: str) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    loop = asyncio.get_running_loop()
    while time.monotonic() < deadline:
        line = (await loop.run_in_executor(None, proc.stderr.readline)).decode(errors="replace")
        if not line and proc.poll() is not None:
            break
        match = re.search(r"DevTools listening on (ws://\S+)", line)
        if match:
            # keep draining stderr so the browser never blocks on a full pipe
            loop.run_in_executor(None, lambda: [None for _ in iter(proc.stderr.readline, b"")])
            return proc, match.group(1)
    proc.kill()
    msg = "Chromium did not start (no DevTools URL on stderr)"
    raise RuntimeError(msg)


def _is_network(url: str) -> bool:
    return not url.startswith(LOCAL_SCHEMES)


async def check_page(cdp: CDP, session: str, site: Path, rel: str, out: Path, timeout_ms: int) -> PageResult:
    result = PageResult(rel)
    start = time.monotonic()
    first_event = len(cdp.events)
    url = (site / rel).resolve().as_uri()
    loaded = cdp.expect("Page.loadEventFired", session)
    nav = await cdp.send("Page.navigate", {"url": url}, session=session)
    if nav.get("errorText"):
        result.problems.append(f"navigation failed: {nav['errorText']}")
        return result
    await asyncio.wait_for(loaded, timeout_ms / 1000)
    probe = await cdp.evaluate(PROBE_JS % {"timeout": timeout_ms}, session, timeout=timeout_ms / 1000 + 10)
    await asyncio.sleep(0.2)  # let late console messages arrive
    result.math, result.images = probe["containers"], len(probe["imgs"])
    if probe["mathNodes"]:
        if probe["mathjax"] == "absent":
            result.problems.append(f"{probe['mathNodes']} math nodes but MathJax never loaded")
        if probe["withSvg"] < probe["mathNodes"] or probe["rawTex"]:
            result.problems.append(
                f"math not rendered: {probe['mathNodes']} nodes, {probe['withSvg']} typeset as SVG; "
                f"raw: {probe['rawTex']}"
            )
    if probe["strayDollars"]:
        result.problems.append(f"unrendered $...$ math in text: {probe['strayDollars'][:3]}")
    if probe["texErrors"]:
        result.problems.append(f"TeX errors: {probe['texErrors']}")
    for img in probe["imgs"]:
        if not img["ok"]:
            result.problems.append(f"image did not load: {img['src']}")
    result.problems += _event_problems(cdp.events[first_event:], session)
    result.problems += [f"broken local link: {ref}" for ref in broken_local_links(site, site / rel)]
    await screenshot(cdp, session, out / "pages" / (rel.replace("/", "__")[:-5] + ".png"), full=False)
    if rel in FULL_PAGE:
        await screenshot(
            cdp,
            session,
            out / "full" / (rel.replace("/", "__")[:-5] + ".png"),
            full=True,
            height=min(int(probe["height"]), 8000),
        )
    result.seconds = time.monotonic() - start
    return result


def _event_problems(events: list[tuple[str, dict[str, Any], str | None]], session: str) -> list[str]:
    problems = []
    for method, params, sess in events:
        if sess not in (session, None):
            continue
        if method == "Network.requestWillBeSent" and _is_network(params["request"]["url"]):
            problems.append(f"network request attempted: {params['request']['url']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(
                f"resource failed to load ({params.get('errorText')}): request {params['requestId']}"
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            problems.append(
                f"uncaught exception: {details.get('exception', {}).get('description') or details['text']}"
            )
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            problems.append(f"console.{params['type']}: {text[:300]}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(
                f"browser log error: {params['entry']['text'][:300]} {params['entry'].get('url', '')}"
            )
    return problems


async def screenshot(cdp: CDP, session: str, path: Path, *, full: bool, height: int = 900) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    params: dict[str, Any] = {"format": "png"}
    if full:
        params.update(
            captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}
        )
    shot = await cdp.send("Page.captureScreenshot", params, session=session, timeout=60)
    path.write_bytes(base64.b64decode(shot["data"]))


async def check_search(cdp: CDP, session: str, site: Path, out: Path, timeout_ms: int) -> PageResult:
    result = PageResult("search.html")
    first_event = len(cdp.events)
    for term in SEARCH_TERMS:
        url = (site / "search.html").resolve().as_uri() + "?q=" + urllib.parse.quote(term)
        loaded = cdp.expect("Page.loadEventFired", session)
        await cdp.send("Page.navigate", {"url": url}, session=session)
        await asyncio.wait_for(loaded, timeout_ms / 1000)
        found = await cdp.evaluate(
            SEARCH_JS % {"timeout": timeout_ms}, session, timeout=timeout_ms / 1000 + 10
        )
        if not found["indexLoaded"]:
            result.problems.append(f"search index (searchindex.js) did not load for {term!r}")
        if found["items"] == 0:
            result.problems.append(f"search for {term!r} returned no results ({found['status']!r})")
        result.images += found["items"]
        print(f"  search {term!r}: {found['items']} results, first: {found['first']}")
        await screenshot(cdp, session, out / "search" / f"search_{term}.png", full=False)
    result.problems += _event_problems(cdp.events[first_event:], session)
    return result


async def run(site: Path, out: Path, binary: str, timeout_ms: int) -> int:
    pages = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts
    )
    if "index.html" not in pages:
        print(f"error: {site}/index.html not found: build the docs first", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="posenc-docs-chromium-") as profile:
        proc, ws_url = await start_browser(binary, profile)
        try:
            async with ws_connect(ws_url, max_size=None) as ws:
                cdp = CDP(ws)
                target = await cdp.send("Target.createTarget", {"url": "about:blank"})
                attached = await cdp.send(
                    "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
                )
                session = attached["sessionId"]
                for domain in ("Page", "Runtime", "Log", "Network"):
                    await cdp.send(f"{domain}.enable", session=session)
                await cdp.send(
                    "Network.emulateNetworkConditions",
                    {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
                    session=session,
                )
                await cdp.send(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                    session=session,
                )
                results = []
                for rel in pages:
                    res = await check_page(cdp, session, site, rel, out, timeout_ms)
                    results.append(res)
                    flag = "ok  " if not res.problems else "FAIL"
                    print(
                        f"{flag} {rel:<48} math {res.math:>4}  images {res.images:>3}  {res.seconds:5.2f} s"
                    )
                    for problem in res.problems:
                        print(f"       - {problem}")
                search = await check_search(cdp, session, site, out, timeout_ms)
                results.append(search)
                if search.problems:
                    print("FAIL search")
                    for problem in search.problems:
                        print(f"       - {problem}")
                else:
                    print(f"ok   search: {len(SEARCH_TERMS)} queries, {search.images} results in all")
                cdp.reader.cancel()
        finally:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            if proc.poll() is None:
                proc.kill()
    failed = [r for r in results if r.problems]
    summary = {
        "site": str(site),
        "pages": len(pages),
        "math_typeset": sum(r.math for r in results if r.page != "search.html"),
        "images": sum(r.images for r in results if r.page != "search.html"),
        "failed": [{"page": r.page, "problems": r.problems} for r in failed],
        "screenshots": str(out),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"\n{len(pages)} pages, {summary['math_typeset']} formulas typeset, {summary['images']} images, "
        f"search {'ok' if not search.problems else 'FAILED'}; {len(failed)} with problems. "
        f"Screenshots: {out}"
    )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "docs-offline")
    parser.add_argument("--chromium", default=None, help="Chromium binary (default: chromium on PATH)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per page for load, math and search"
    )
    args = parser.parse_args(argv)
    binary = find_chromium(args.chromium)
    try:
        return asyncio.run(run(args.site.resolve(), args.out.resolve(), binary, int(args.timeout * 1000)))
    except (RuntimeError, TimeoutError, OSError) as exc:
        print(f"error: the offline check could not run: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
