"""Search summaries that work from disk (``file://``), not only from a web server.

Sphinx's search page shows a summary under each result by ``fetch()``-ing the result's
page and reading its ``[role=main]`` text.  Browsers refuse ``fetch()`` on ``file://``
URLs, so a site opened from disk would show no summaries (and an uncaught error per
result).  After the HTML is written, this module collects the main content of every
page, reduced to its text and the elements that carry an ``id`` (the anchors search
results point to), into ``_static/search_pages.js``; ``_static/search_offline.js``,
loaded on the search page only, answers ``fetch()`` of a ``file://`` page URL from it.
Over HTTP the real ``fetch()`` runs unchanged.
"""

from __future__ import annotations

import html
import html.parser
import json
from pathlib import Path
from typing import Any

__all__ = ["main_content", "setup"]

_SHIM = r"""// posenc-ref docs: answer the search page's fetch() of result pages when opened from disk.
(() => {
  if (location.protocol !== "file:") return;
  const pages = window.POSENC_SEARCH_PAGES || {};
  const root = new URL(".", document.documentElement.dataset.content_root
                       ? new URL(document.documentElement.dataset.content_root, location.href)
                       : location.href);
  const realFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = new URL(typeof input === "string" ? input : input.url, location.href);
    if (url.protocol === "file:" && url.pathname.startsWith(root.pathname)) {
      const key = decodeURIComponent(url.pathname.slice(root.pathname.length));
      if (Object.prototype.hasOwnProperty.call(pages, key)) {
        return Promise.resolve(new Response(pages[key], {headers: {"Content-Type": "text/html"}}));
      }
    }
    return realFetch(input, init);
  };
})();
"""

#: Elements whose text is not page content.
_DROP = {"script", "style", "svg", "button", "template", "noscript"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "col", "source", "area", "base", "embed"}


class _MainContent(html.parser.HTMLParser):
    """The ``role="main"`` element's text, keeping only elements with an id (as ``div``s)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # nesting inside the main element; 0 = outside
        self.stack: list[bool] = []  # per open element: did we emit a <div id>?
        self.drop = 0
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        values = dict(attrs)
        if self.depth == 0:
            if values.get("role") == "main":
                self.depth = 1
                self.stack = [False]
                self.out.append('<div role="main">')
            return
        self.depth += 1
        if tag in _DROP or self.drop:
            self.drop += 1
            self.stack.append(False)
            return
        if "headerlink" in (values.get("class") or "").split():
            self.drop += 1
            self.stack.append(False)
            return
        ident = values.get("id")
        self.stack.append(bool(ident))
        if ident:
            self.out.append(f'<div id="{html.escape(ident)}">')
        elif tag in {"p", "li", "dt", "dd", "tr", "h1", "h2", "h3", "h4", "pre", "div", "section"}:
            self.out.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if self.depth == 0 or tag in _VOID:
            return
        self.depth -= 1
        opened = self.stack.pop() if self.stack else False
        if self.drop:
            self.drop -= 1
        if opened or self.depth == 0:
            self.out.append("</div>")

    def handle_data(self, data: str) -> None:
        if self.depth and not self.drop:
            self.out.append(html.escape(" ".join(data.split()) + (" " if data[-1:].isspace() else "")))


def main_content(page_html: str) -> str:
    """A small HTML document holding the main content's text and id-carrying elements."""
    parser = _MainContent()
    parser.feed(page_html)
    return "".join(parser.out)


def _write_bundle(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    out = Path(app.outdir)
    pages = {}
    for docname in sorted(app.env.found_docs):
        path = out / f"{docname}{app.builder.out_suffix}"
        if path.is_file() and docname != "search":
            pages[path.relative_to(out).as_posix()] = main_content(path.read_text(encoding="utf-8"))
    static = out / "_static"
    static.mkdir(exist_ok=True)
    (static / "search_pages.js").write_text(
        "window.POSENC_SEARCH_PAGES = " + json.dumps(pages, ensure_ascii=True, separators=(",", ":")) + ";\n"
    )
    (static / "search_offline.js").write_text(_SHIM)


def _on_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if pagename == "search":
        app.add_js_file("search_pages.js", priority=100)
        app.add_js_file("search_offline.js", priority=101)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _on_page)
    app.connect("build-finished", _write_bundle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
