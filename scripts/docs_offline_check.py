#!/usr/bin/env python3
"""Open the built docs from disk in headless Chromium with no network, and check them as a reader sees them.

Driven by Playwright's Python package on the system Chromium (``/usr/bin/chromium``;
Playwright never downloads a browser here).  For every HTML page of the site
(``file://`` URLs, no web server):

- **no network**: the browser resolves no host name and sends everything else to a
  closed proxy port, the context is offline, and any request that is not
  ``file:``/``data:``/``blob:``/``about:`` is a failure (so is a local file that fails
  to load: a missing stylesheet, script or image);
- **no console errors, uncaught exceptions or failed requests**;
- **math renders**: MathJax (vendored) has typeset every ``.math`` node into an SVG, with
  no TeX error and no unrendered ``$...$`` left in the text;
- **no raw markup**: no text outside code shows an HTML tag (``<strong>``, ``</em>``, ...);
- **nothing is cut off**: the content column is not wider than itself, and no table, code
  block, math block or image is wider than the column or than its own box (scrolled
  content counts as cut off: a reader does not see it);
- **figures**: every image has loaded (``naturalWidth > 0``) and sits in a figure with a
  caption;
- **code blocks have a copy button**; clicking the first one on the home page copies the
  code without ``>>>``/``...`` prompts and without output;
- **cited issues and arXiv ids are links**: no ``owner/repo#N``, ``repo#N``, ``PR #N`` or
  ``arXiv:NNNN.NNNNN`` is left as plain text (on the API pages, whose text comes from the
  library's docstrings, these are listed as notes), and the site has links to them;
- **internal links resolve** to files that exist (checked on disk).

Page-specific expectations, each text exactly as the JSON has it (``2**24 + 1`` stays that,
not bold): the golden-format page shows every ``description`` of the JSON Schema; the
case-id page lists every golden case id and every flag's note; the figures page shows
every figure file.  Then **search works** from
disk: ``search.html?q=...`` returns results with summaries.  Screenshots of every page
(first screen) and full pages of a few go to ``--out``, with ``summary.json``.  Exit
status 0 when everything passes, 1 otherwise, 2 when the check itself could not run.

Needs ``pip install playwright`` (the ``docs`` extra) and Debian's ``chromium``
(``apt-get install -y chromium``).  Usage::

    python scripts/docs_offline_check.py [--site docs/_build/html] [--out reports/docs-offline]
"""

from __future__ import annotations

import argparse
import html.parser
import json
import os
import re
import shutil
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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
    "--mute-audio",
    # No network at all: every host resolves to nothing, and all traffic would go to a
    # proxy on a closed port.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
]
VIEWPORT = {"width": 1280, "height": 900}
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:", "devtools:")
SEARCH_TERMS = ("alibi", "yarn", "bucket", "interleaved")
FULL_PAGE = (
    "index.html",
    "families/absolute.html",
    "families/nope.html",
    "families/rope.html",
    "families/relative.html",
    "guide/check.html",
    "guide/golden-format.html",
    "figures.html",
    "conventions.html",
    "api.html",
)
#: Pages whose prose comes from the library's docstrings (owned by the library).
DOCSTRING_PAGES = ("generated/api/",)

# --------------------------------------------------------------------------------------
# Probes, run inside the page
# --------------------------------------------------------------------------------------
PROBE_JS = r"""
async (timeout) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const main = document.querySelector('article[role=main]') || document.querySelector('[role=main]')
               || document.body;
  // --- math
  const mathNodes = document.querySelectorAll('span.math, div.math').length;
  let mathjax = 'absent';
  if (mathNodes > 0) {
    const t0 = Date.now();
    while (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) {
      if (Date.now() - t0 > timeout) break;
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
  // --- text outside code: stray $, raw HTML tags, unlinked citations
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const strayDollars = [], rawTags = [], unlinked = [];
  const tag = /<\/?[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?\/?>/;
  // owner/repo#N, repo#N, PR #N, a bare #NN, arXiv:NNNN.NNNNN
  const cite = new RegExp([String.raw`\b[\w.-]+\/[\w.-]+#\d+`, String.raw`\b[\w.-]*[A-Za-z][\w.-]*#\d+`,
                           String.raw`\bPRs? #\d+`, String.raw`(?:^|[\s(,;])#\d{2,}\b`,
                           String.raw`\barXiv:\d{4}\.\d{4,5}`].join('|'), 'g');
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    const skip = 'pre, code, .sig, .highlight, script, style, noscript, template, mjx-container, .headerlink';
    if (!el || el.closest(skip)) {
      continue;
    }
    const text = node.textContent;
    if (text.includes('$')) strayDollars.push(text.trim().slice(0, 60));
    if (tag.test(text)) rawTags.push(text.trim().slice(0, 80));
    if (!el.closest('a')) {
      for (const m of text.matchAll(cite)) unlinked.push(m[0].trim());
    }
  }
  // --- widths: the content column, and every block that could be wider than it
  const col = main.getBoundingClientRect();
  const overflow = [];
  const describe = (el) => {
    const names = typeof el.className === 'string' ? el.className.trim().split(/\s+/) : [];
    const cls = names.filter(Boolean).map((n) => '.' + n).join('');
    const text = (el.textContent || el.getAttribute('src') || '').trim().replace(/\s+/g, ' ').slice(0, 50);
    return `${el.tagName.toLowerCase()}${cls} "${text}"`;
  };
  // Anything sticking out of the column.  A negative right margin is the theme's on purpose
  // (furo's headings and signatures reach 0.5rem / 0.25rem past the column for their
  // background); what they hold is checked like everything else.
  const bleed = (el) => Math.max(0, -parseFloat(getComputedStyle(el).marginRight) || 0);
  const outside = [];
  for (const el of main.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= col.right + 1 + bleed(el)) continue;
    if (outside.some((o) => o.contains(el))) continue;
    if (el.parentElement && el.parentElement.closest('pre, .table-wrapper, div.math')) continue;
    outside.push(el);
  }
  for (const el of outside.slice(0, 5)) {
    const right = Math.round(el.getBoundingClientRect().right);
    overflow.push(`${describe(el)}: right edge ${right} > column ${Math.round(col.right)}`);
  }
  if (main.scrollWidth > main.clientWidth + 16) {  // up to 16 px: the theme's bleed, above
    overflow.push(`content column: scrollWidth ${main.scrollWidth} > clientWidth ${main.clientWidth}`);
  }
  const blocks = main.querySelectorAll(
    'table, .table-wrapper, pre, div.highlight, div.math, mjx-container[display="true"], img, figure');
  for (const el of blocks) {
    const box = el.getBoundingClientRect();
    if (box.width === 0) continue;
    if (box.right > col.right + 1 + bleed(el)) {
      if (!outside.includes(el)) {
        overflow.push(`${describe(el)}: right edge ${Math.round(box.right)} > ${Math.round(col.right)}`);
      }
    } else if (el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'IMG') {
      overflow.push(`${describe(el)}: content ${el.scrollWidth}px wide in a ${el.clientWidth}px box`);
    }
  }
  // --- images and their captions
  const imgs = [...main.querySelectorAll('img')].map((i) => {
    const fig = i.closest('figure, div.figure');
    const cap = fig ? fig.querySelector('figcaption, p.caption') : null;
    return {src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0,
            caption: cap ? cap.textContent.trim().length : 0};
  });
  // --- copy buttons (sphinx-copybutton adds them after load)
  const codeBlocks = document.querySelectorAll('div.highlight pre').length;
  let copyButtons = document.querySelectorAll('button.copybtn').length;
  for (let t0 = Date.now(); codeBlocks > copyButtons && Date.now() - t0 < timeout; ) {
    await sleep(100);
    copyButtons = document.querySelectorAll('button.copybtn').length;
  }
  const citationLinks = main.querySelectorAll('a.citation-link').length;
  return {mathNodes, mathjax, containers: containers.length, withSvg, texErrors, rawTex, strayDollars,
          rawTags, unlinked, overflow, imgs, codeBlocks, copyButtons, citationLinks,
          text: main.innerText, height: document.documentElement.scrollHeight};
}
"""

COPY_JS = r"""
async () => {
  // ClipboardJS copies through a selected, focused textarea and execCommand('copy').
  let copied = null;
  document.execCommand = (cmd) => {
    const el = document.activeElement;
    copied = (el && 'value' in el) ? el.value : String(window.getSelection());
    return true;
  };
  const button = document.querySelector('div.highlight-pycon button.copybtn, div.doctest button.copybtn')
                 || document.querySelector('button.copybtn');
  if (!button) return null;
  const shown = button.previousElementSibling ? button.previousElementSibling.innerText : '';
  button.click();
  for (let i = 0; i < 50 && copied === null; i++) await new Promise((r) => setTimeout(r, 20));
  return {shown, copied};
}
"""

SEARCH_JS = r"""
async (timeout) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const t0 = Date.now();
  let items = 0, status = '';
  while (Date.now() - t0 < timeout) {
    items = document.querySelectorAll('#search-results li, ul.search li').length;
    const s = document.querySelector(
      '#search-results p.search-summary, #search-results > p, .search-summary, #search-progress');
    status = s ? s.textContent.trim() : '';
    if (/finished|did not match|found/i.test(status) && items > 0) break;
    if (/did not match/i.test(status)) break;
    await sleep(100);
  }
  await sleep(300);  // summaries arrive after the titles
  const indexLoaded = typeof Search !== 'undefined' && Search._index !== null && Search._index !== undefined;
  const lis = [...document.querySelectorAll('#search-results li, ul.search li')];
  const summaries = lis.filter((li) => { const p = li.querySelector('p.context');
                                         return p && p.textContent.trim().length > 20; }).length;
  const first = lis.slice(0, 3).map((li) => li.querySelector('a').textContent.trim());
  return {items, status, indexLoaded, summaries, first};
}
"""


@dataclass
class PageResult:
    page: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    math: int = 0
    images: int = 0
    citations: int = 0
    seconds: float = 0.0


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


def broken_local_links(page: Path) -> list[str]:
    parser = _LinkParser()
    parser.feed(page.read_text(encoding="utf-8"))
    broken = []
    for ref in parser.refs:
        parts = urllib.parse.urlsplit(ref)
        if parts.scheme or ref.startswith(("#", "//", "mailto:")):
            continue  # outbound links are fine to have; they are never *loaded*
        target = (page.parent / urllib.parse.unquote(parts.path)).resolve()
        if parts.path and not target.exists():
            broken.append(ref)
    return broken


def page_expectations(rel: str) -> list[tuple[str, str]]:
    """``(what, text)`` pairs the page ``rel`` must show verbatim (whitespace-normalised)."""
    golden = ROOT / "posenc_ref_conformance" / "golden"
    docs = [json.loads(p.read_bytes()) for p in sorted((golden / "vectors").glob("*.json"))]
    if rel == "guide/golden-format.html":  # the meaning of every key of the schema, as written
        found: list[tuple[str, str]] = []
        for schema in sorted(golden.glob("golden_schema_v*.json")):
            _descriptions(json.loads(schema.read_bytes()), "", found)
        return [(what, text) for what, text in found if "/properties/" in what]
    if rel == "guide/case-ids.html":  # every case id, and every flag's note as the JSON has it
        notes = {flag: note for doc in docs for flag, note in doc.get("notes", {}).items()}
        ids = [("case id", case["id"]) for doc in docs for case in doc.get("cases", [])]
        return ids + [(f"note {flag}", note["description"]) for flag, note in sorted(notes.items())]
    return []


def _descriptions(node: Any, where: str, found: list[tuple[str, str]]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            found.append((f"description of {where or 'the schema'}", node["description"]))
        for key, value in node.items():
            _descriptions(value, f"{where}/{key}", found)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _descriptions(value, f"{where}/{i}", found)


#: Sphinx's smartquotes typesets quotes, dashes and ellipses; compare the plain forms.
_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "--",
        "\u2014": "---",
        "\u2026": "...",
    }
)


def _squash(text: str) -> str:
    return " ".join(text.translate(_TYPOGRAPHY).split())


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------
def find_chromium(explicit: str | None) -> str:
    for candidate in (
        explicit,
        os.environ.get("CHROMIUM"),
        "/usr/bin/chromium",
        "chromium",
        "chromium-browser",
    ):
        if candidate and shutil.which(candidate):
            return str(shutil.which(candidate))
    msg = "no Chromium found: apt-get install -y chromium (or pass --chromium PATH)"
    raise SystemExit(msg)


def _is_network(url: str) -> bool:
    return not url.startswith(LOCAL_SCHEMES)


class Recorder:
    """Console errors, uncaught exceptions, network requests and failed loads of one page."""

    def __init__(self, page: Any) -> None:
        self.events: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.events.append(f"uncaught exception: {exc}"))
        page.on("request", self._request)
        page.on("requestfailed", self._failed)

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "assert"):
            location = msg.location.get("url", "") if msg.location else ""
            self.events.append(f"console.{msg.type}: {msg.text[:300]} {location}".strip())

    def _request(self, request: Any) -> None:
        if _is_network(request.url):
            self.events.append(f"network request attempted: {request.url}")

    def _failed(self, request: Any) -> None:
        failure = request.failure or ""
        if "ERR_ABORTED" not in failure or not _is_network(request.url):
            self.events.append(f"resource failed to load ({failure}): {request.url}")

    def take(self) -> list[str]:
        events, self.events = self.events, []
        return events


def check_page(page: Any, recorder: Recorder, site: Path, rel: str, out: Path, timeout_ms: int) -> PageResult:
    result = PageResult(rel)
    start = time.monotonic()
    recorder.take()
    page.goto((site / rel).resolve().as_uri(), wait_until="load", timeout=timeout_ms)
    probe = page.evaluate(PROBE_JS, timeout_ms)
    page.wait_for_timeout(200)  # late console messages
    result.math, result.images, result.citations = (
        probe["containers"],
        len(probe["imgs"]),
        probe["citationLinks"],
    )
    if probe["mathNodes"]:
        if probe["mathjax"] == "absent":
            result.problems.append(f"{probe['mathNodes']} math nodes but MathJax never loaded")
        if probe["withSvg"] < probe["mathNodes"] or probe["rawTex"]:
            result.problems.append(
                f"math not rendered: {probe['mathNodes']} nodes, {probe['withSvg']} typeset as SVG; "
                f"raw: {probe['rawTex']}"
            )
    if probe["texErrors"]:
        result.problems.append(f"TeX errors: {probe['texErrors']}")
    if probe["strayDollars"]:
        result.problems.append(f"unrendered $...$ math in text: {probe['strayDollars'][:3]}")
    if probe["rawTags"]:
        result.problems.append(f"raw HTML markup shown as text: {probe['rawTags'][:3]}")
    result.problems += [f"cut off: {what}" for what in probe["overflow"][:8]]
    if len(probe["overflow"]) > 8:
        result.problems.append(f"cut off: ... and {len(probe['overflow']) - 8} more")
    for img in probe["imgs"]:
        if not img["ok"]:
            result.problems.append(f"image did not load: {img['src']}")
        elif not img["caption"]:
            result.problems.append(f"image without a caption: {img['src']}")
    if probe["copyButtons"] < probe["codeBlocks"]:
        result.problems.append(f"{probe['codeBlocks']} code blocks but {probe['copyButtons']} copy buttons")
    if probe["unlinked"]:
        where = result.notes if rel.startswith(DOCSTRING_PAGES) else result.problems
        where.append(f"cited but not linked: {sorted(set(probe['unlinked']))}")
    text = _squash(probe["text"])
    missing = [what for what, expected in page_expectations(rel) if _squash(expected) not in text]
    if missing:
        result.problems.append(f"{len(missing)} expected texts not shown verbatim, e.g. {missing[:3]}")
    result.problems += recorder.take()
    result.problems += [f"broken local link: {ref}" for ref in broken_local_links(site / rel)]
    name = rel.replace("/", "__")[:-5] + ".png"
    page.screenshot(path=out / "pages" / name)
    if rel in FULL_PAGE:
        height = min(int(probe["height"]), 12000)
        page.screenshot(
            path=out / "full" / name, clip={"x": 0, "y": 0, "width": 1280, "height": height}, full_page=True
        )
    result.seconds = time.monotonic() - start
    return result


def check_copy(page: Any, site: Path, timeout_ms: int) -> list[str]:
    """Click the first copy button of a doctest block on the home page; inspect the copied text."""
    page.goto((site / "index.html").resolve().as_uri(), wait_until="load", timeout=timeout_ms)
    page.wait_for_selector("button.copybtn", state="attached", timeout=timeout_ms)
    found = page.evaluate(COPY_JS)
    if not found or found["copied"] is None:
        return ["copy button: clicking it copied nothing"]
    copied, shown = found["copied"], found["shown"]
    problems = []
    if ">>>" not in shown:
        problems.append("copy button: the first copyable block on the home page is not a doctest block")
    if re.search(r"^(>>>|\.\.\.)( |$)", copied, re.M):
        problems.append(f"copy button: prompts were copied: {copied[:120]!r}")
    outputs = [line for line in shown.splitlines() if line and not line.startswith((">>>", "..."))]
    if any(line in copied.splitlines() for line in outputs):
        problems.append(f"copy button: doctest output was copied: {copied[:120]!r}")
    if "import posenc_ref" not in copied:
        problems.append(f"copy button: the code itself was not copied: {copied[:120]!r}")
    first = copied.splitlines()[0] if copied else ""
    print(f"  copy button on index.html copies {len(copied.splitlines())} lines, first {first!r}")
    return problems


def check_search(page: Any, recorder: Recorder, site: Path, out: Path, timeout_ms: int) -> PageResult:
    result = PageResult("search.html")
    recorder.take()
    for term in SEARCH_TERMS:
        url = (site / "search.html").resolve().as_uri() + "?q=" + urllib.parse.quote(term)
        page.goto(url, wait_until="load", timeout=timeout_ms)
        found = page.evaluate(SEARCH_JS, timeout_ms)
        if not found["indexLoaded"]:
            result.problems.append(f"search index (searchindex.js) did not load for {term!r}")
        if found["items"] == 0:
            result.problems.append(f"search for {term!r} returned no results ({found['status']!r})")
        elif found["summaries"] == 0:
            result.problems.append(f"search for {term!r}: {found['items']} results, none with a summary")
        result.images += found["items"]
        print(
            f"  search {term!r}: {found['items']} results, {found['summaries']} with summaries, "
            f"first: {found['first']}"
        )
        page.screenshot(path=out / "search" / f"search_{term}.png")
    result.problems += recorder.take()
    return result


def run(site: Path, out: Path, executable: str, timeout_ms: int) -> int:
    from playwright.sync_api import sync_playwright

    pages = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts
    )
    if "index.html" not in pages:
        print(f"error: {site}/index.html not found: build the docs first", file=sys.stderr)
        return 2
    for sub in ("pages", "full", "search"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    results: list[PageResult] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, offline=True)
        page = context.new_page()
        recorder = Recorder(page)
        for rel in pages:
            res = check_page(page, recorder, site, rel, out, timeout_ms)
            results.append(res)
            flag = "ok  " if not res.problems else "FAIL"
            print(
                f"{flag} {rel:<52} math {res.math:>4}  images {res.images:>3}  "
                f"cited {res.citations:>3}  {res.seconds:5.2f} s"
            )
            for problem in res.problems:
                print(f"       - {problem}")
            for note in res.notes:
                print(f"       note: {note}")
        site_result = PageResult("(site)")
        site_result.problems += check_copy(page, site, timeout_ms)
        figures = sorted((site / "_images").glob("*.svg"))
        shown = next((r for r in results if r.page == "figures.html"), None)
        if shown is not None and shown.images < len(figures):
            site_result.problems.append(f"figures.html shows {shown.images} of {len(figures)} figures")
        citations = sum(r.citations for r in results)
        if citations < 80:
            site_result.problems.append(f"only {citations} cited issues/arXiv ids are links (expected >= 80)")
        results.append(site_result)
        search = check_search(page, recorder, site, out, timeout_ms)
        results.append(search)
        browser.close()
    for res in (site_result, search):
        print(f"{'ok  ' if not res.problems else 'FAIL'} {res.page}")
        for problem in res.problems:
            print(f"       - {problem}")
    failed = [r for r in results if r.problems]
    counted = [r for r in results if r.page.endswith(".html") and r.page != "search.html"]
    summary = {
        "site": str(site),
        "pages": len(pages),
        "math_typeset": sum(r.math for r in counted),
        "images": sum(r.images for r in counted),
        "citation_links": citations,
        "failed": [{"page": r.page, "problems": r.problems} for r in failed],
        "notes": [{"page": r.page, "notes": r.notes} for r in results if r.notes],
        "screenshots": str(out),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"\n{len(pages)} pages, {summary['math_typeset']} formulas typeset, {summary['images']} images, "
        f"{citations} citation links, search {'ok' if not search.problems else 'FAILED'}; "
        f"{len(failed)} with problems. Screenshots: {out}"
    )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "docs-offline")
    parser.add_argument("--chromium", default=None, help="Chromium binary (default: /usr/bin/chromium)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per page for load, math and search"
    )
    args = parser.parse_args(argv)
    executable = find_chromium(args.chromium)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        print(f"error: the offline check needs Playwright (pip install playwright): {exc}", file=sys.stderr)
        return 2
    try:
        return run(args.site.resolve(), args.out.resolve(), executable, int(args.timeout * 1000))
    except Exception as exc:  # Playwright's errors (timeouts, a browser that does not start)
        print(f"error: the offline check could not run: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
