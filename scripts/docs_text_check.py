"""Check that the docs site shows each paragraph's words as they are written in its page.

    python scripts/docs_text_check.py --site docs/_build/html      # after the html build

Every page source (``docs/**/*.md`` that ``docs/conf.py``'s ``exclude_patterns`` leave in,
with the generated fragments they ``{include}`` expanded in place) is parsed with MyST's
own Markdown parser, and each paragraph of prose is compared with the paragraphs (``<p>``)
of the rendered page, ``<site>/<page>.html``.  A paragraph passes when one rendered
paragraph has exactly its words, in its order, apart from markup:

- emphasis, links and inline code lose their markup and keep their text; a line break
  is a space; whitespace runs count as one space.  Words are what lies between spaces,
  so two words glued together ("thesymmetric") or a word split in two is a difference;
- inline math (``$...$``, ``{math}``) is one placeholder on both sides (the rendered
  ``<span class="math">``), glued to what it is glued to in the source;
- a role (``{doc}``, ``{func}``, ``{ref}``...), a link with no text (``[](page.md)``) and a
  footnote reference stand for whatever the build puts there: a wildcard, one or more
  characters;
- curly quotes and the ellipsis of Sphinx's smartquotes are read as the straight quotes
  and ``...`` they were written as; permalink anchors (``a.headerlink``) are not text;
- the rendered paragraph may have :data:`ALLOWED_INSERTIONS` that the source lacks.
  ``docs/_ext/citations.py`` inserts nothing: it turns words that are there into links.

Headings, tables, code blocks, math blocks, raw HTML and the bodies of directives other
than figures and admonitions (doctest, literalinclude, eval-rst, toctree...) are not
compared; they are counted as skipped.  A paragraph with no word (an image) is skipped.

Each failing paragraph is reported with its file and line and the first words where the
source and its closest rendered paragraph part.  Exit status 1 on any difference, 0 when
every paragraph matches, 2 when the site or a page is missing.  Needs the docs extra
(myst-parser); nothing else beyond the standard library.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

WILD = "\ue000"  #: a role's rendered text: matches one or more characters
MATH = "\ue001"  #: inline math, on both sides

#: What a rendered paragraph may have that its source has not, as regular expressions for
#: whole words (a marker may also be glued to the end of the word before it).
ALLOWED_INSERTIONS: dict[str, str] = {
    "footnote or numbered citation marker": r"\[\d+\]",
    "author-year citation marker": r"\[[A-Z][\w-]*(?: et al\.)?,? \d{4}[a-z]?\]",
}

#: Directives whose body is Markdown prose rendered in place (after its options).
PROSE_DIRECTIVES = frozenset(
    "figure admonition note warning tip hint important attention caution danger error seealso".split()
)

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_INSERTION = "(?:" + "|".join(ALLOWED_INSERTIONS.values()) + ")"
_OPTION = re.compile(r"^:[\w-]+:")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)$")


def normalize(text: str) -> str:
    """Text as compared: straight quotes, ``...``, single spaces."""
    return " ".join(text.translate(_QUOTES).replace("\u2026", "...").split())


def shown(text: str) -> str:
    """``text`` with its placeholders written out, for a report."""
    return text.replace(MATH, "$…$").replace(WILD, "{…}")


# --- the source ----------------------------------------------------------------------------------


@dataclass
class Paragraph:
    file: str
    line: int
    text: str  #: normalized, with WILD and MATH placeholders
    via: str = ""  #: where an included file's paragraph was included: ``page.md:line``

    def where(self) -> str:
        return f"{self.file}:{self.line}" + (f" (included at {self.via})" if self.via else "")


@dataclass
class Source:
    paragraphs: list[Paragraph] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    included: list[str] = field(default_factory=list)  #: the files expanded from {include}


def conf_settings(conf: Path) -> dict[str, Any]:
    """The literal settings of ``conf.py`` this check needs, read without running it."""
    wanted = {"exclude_patterns", "myst_enable_extensions", "myst_dmath_double_inline"}
    found: dict[str, Any] = {}
    for node in ast.parse(conf.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and target.id in wanted and node.value is not None:
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return found


def markdown_parser(extensions: Any = ("dollarmath",), *, dmath_double_inline: bool = False) -> Any:
    """MyST's markdown-it parser, configured as the site's ``conf.py`` configures MyST."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions=set(extensions), dmath_double_inline=dmath_double_inline)
    return create_md_parser(config, RendererHTML)


def inline_text(children: list[Any]) -> str:
    """An inline token's children as the reader sees them, with placeholders."""
    out: list[str] = []
    links: list[int] = []
    for token in children:
        kind = token.type
        if kind in ("text", "code_inline"):
            out.append(token.content)
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind.startswith("math_inline"):
            out.append(MATH)
        elif kind == "myst_role":
            out.append(MATH if token.meta.get("name") == "math" else WILD)
        elif kind in ("footnote_ref", "myst_footnote_ref"):
            out.append(WILD)
        elif kind == "link_open":
            links.append(len(out))
        elif kind == "link_close" and links:
            if not "".join(out[links.pop() :]).strip():
                out.append(WILD)  # [](page.md): the build writes the page's title
        elif kind == "html_inline":
            out.append(" " if re.match(r"<br\b", token.content, re.I) else "")
        elif kind == "image" or kind.endswith(("_open", "_close")):
            pass
        else:
            out.append(token.content)
    return normalize("".join(out))


def source_paragraphs(
    text: str,
    md: Any,
    *,
    file: str,
    base: Path,
    docs: Path,
    line_offset: int = 0,
    via: str = "",
    into: Source | None = None,
) -> Source:
    """The prose paragraphs of a MyST page, with includes expanded; what is skipped, counted."""
    into = Source() if into is None else into
    tokens = md.parse(text)
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == "paragraph_open":
            words = inline_text(tokens[i + 1].children or [])
            if words.replace(WILD, "").replace(MATH, "").strip():
                into.paragraphs.append(Paragraph(file, line_offset + token.map[0] + 1, words, via))
            else:
                into.skipped["paragraphs without words"] += 1
        elif kind == "heading_open":
            into.skipped["headings"] += 1
        elif kind == "table_open":
            into.skipped["tables"] += 1
        elif kind == "code_block" or kind == "html_block":
            into.skipped["code blocks" if kind == "code_block" else "raw HTML blocks"] += 1
        elif kind.startswith(("math_block", "amsmath")):
            into.skipped["math blocks"] += 1
        elif kind in ("fence", "colon_fence"):
            _directive(
                token, md, file=file, base=base, docs=docs, line_offset=line_offset, via=via, into=into
            )
    return into


def _directive(
    token: Any, md: Any, *, file: str, base: Path, docs: Path, line_offset: int, via: str, into: Source
) -> None:
    match = _DIRECTIVE.match(token.info.strip())
    if match is None:
        into.skipped["code blocks"] += 1
        return
    name, argument = match.group("name"), match.group("argument").strip()
    body = token.content.splitlines()
    first = line_offset + token.map[0] + 1  # the fence line, 1-based: the body starts there, 0-based
    if name == "include" and not any(_OPTION.match(line) for line in body):
        path = docs / argument.lstrip("/") if argument.startswith("/") else base / argument
        if path.suffix == ".md" and path.is_file() and len(into.included) < 100:
            into.included.append(_relative(path))
            text = path.read_text(encoding="utf-8")
            here = f"{file}:{first}" + (f" <- {via}" if via else "")
            source_paragraphs(
                text, md, file=_relative(path), base=path.parent, docs=docs, via=here, into=into
            )
            return
    if name not in PROSE_DIRECTIVES:
        into.skipped[f"{{{name}}} blocks"] += 1
        return
    start = 0
    if body and body[0].strip() == "---":  # YAML options
        start = next((k + 1 for k in range(1, len(body)) if body[k].strip() == "---"), len(body))
    while start < len(body) and _OPTION.match(body[start]):
        start += 1
    text = "\n".join(body[start:])
    source_paragraphs(
        text, md, file=file, base=base, docs=docs, line_offset=first + start, via=via, into=into
    )


def _relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


# --- the rendered page ----------------------------------------------------------------------------

_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _RenderedParagraphs(HTMLParser):
    """The text of every ``<p>``: math as its placeholder, permalinks and scripts dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._text: list[str] | None = None
        self._open: list[tuple[str, str]] = []  # (tag, "" | "drop" | "math" | "footnote")

    def _visible(self) -> bool:
        return self._text is not None and not any(mode in ("drop", "math") for _, mode in self._open)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            if tag == "br" and self._visible():
                self._text.append(" ")
            return
        classes = set((dict(attrs).get("class") or "").split())
        mode = ""
        if tag in ("script", "style", "template") or (tag == "a" and "headerlink" in classes):
            mode = "drop"
        elif "math" in classes and tag in ("span", "div"):
            mode = "math"
        elif tag == "a" and "footnote-reference" in classes:
            mode = "footnote"
        if tag == "p":
            self._finish()
            self._text = []
        if self._visible():
            self._text.append({"math": MATH, "footnote": "["}.get(mode, ""))
        self._open.append((tag, mode))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(t != tag for t, _ in self._open):
            return
        while self._open:
            open_tag, mode = self._open.pop()
            if mode == "footnote" and self._visible():
                self._text.append("]")
            if open_tag == tag:
                break
        if tag == "p":
            self._finish()

    def handle_data(self, data: str) -> None:
        if self._visible():
            self._text.append(data)

    def _finish(self) -> None:
        if self._text is not None:
            self.paragraphs.append(normalize("".join(self._text)))
        self._text = None


def rendered_paragraphs(html: str) -> list[str]:
    """The normalized text of each ``<p>`` of an HTML page, in order."""
    parser = _RenderedParagraphs()
    parser.feed(html)
    parser.close()
    parser._finish()
    return parser.paragraphs


# --- comparing ------------------------------------------------------------------------------------

_SEP = rf"(?:\s*{_INSERTION})*\s"
_HEAD = rf"(?:{_INSERTION}\s)*"
_TAIL = rf"(?:\s*{_INSERTION})*"


def _word_pattern(word: str) -> str:
    return "".join(".+?" if c == WILD else re.escape(c) for c in word)


def _pattern(words: list[str]) -> str:
    return _HEAD + _SEP.join(_word_pattern(w) for w in words)


def matches(source: str, rendered: str) -> bool:
    """Whether ``rendered`` shows the words of ``source`` in order, with allowed insertions."""
    return re.fullmatch(_pattern(source.split(" ")) + _TAIL, rendered, re.S) is not None


def _literal_words(text: str) -> Counter:
    return Counter(w for w in text.split(" ") if WILD not in w and MATH not in w)


def _overlap(a: Counter, b: Counter) -> float:
    return sum((a & b).values()) / max(1, sum(a.values()))


def first_difference(source: str, rendered: str) -> str:
    """Where ``rendered`` stops showing ``source``'s words: the words on both sides there."""
    words = source.split(" ")
    end, agreed = 0, 0
    for k in range(1, len(words) + 1):
        match = re.match(_pattern(words[:k]) + r"(?=\s|$)", rendered, re.S)
        if match is None:
            break
        end, agreed = match.end(), k
    if agreed == len(words):
        return f"rendered goes on: {shown(rendered[end:].strip()[:80])!r}"
    rest = rendered[end:].split()
    before = " ".join(words[max(0, agreed - 3) : agreed])
    lines = [
        f"after {shown(before)!r}" if before else "at the first word",
        f"  written:  {shown(' '.join(words[agreed : agreed + 8]))}",
        f"  rendered: {shown(' '.join(rest[:8]))}",
    ]
    rendered_words = set(rendered.split())
    glued = dict.fromkeys(
        f"{shown(a)!r} + {shown(b)!r}"
        for a, b in itertools.pairwise(words)
        if WILD not in a + b and a + b in rendered_words and a + b not in words
    )
    if glued:
        lines.append(f"  glued together: {', '.join(glued)}")
    run = words[agreed : agreed + 3]
    if not glued and WILD not in "".join(run) and (later := rendered.find(" ".join(run), end + 1)) > 0:
        lines.append(
            f"  moved: the written words come later, after {shown(rendered[:later].strip()[-40:].lstrip())!r}"
        )
    return "\n".join(lines)


@dataclass
class Difference:
    paragraph: Paragraph
    page: str
    detail: str

    def __str__(self) -> str:
        head = f"{self.paragraph.where()} ({self.page}): words differ "
        return head + self.detail.replace("\n", "\n    ")


def compare_page(paragraphs: list[Paragraph], rendered: list[str], page: str) -> list[Difference]:
    """Each source paragraph against the page's rendered paragraphs (each used at most once)."""
    used = [False] * len(rendered)
    words = [_literal_words(r) for r in rendered]
    cursor = 0
    differences = []
    for paragraph in paragraphs:
        mine = _literal_words(paragraph.text)
        near = [j for j in range(len(rendered)) if _overlap(mine, words[j]) >= 0.5]
        found = next(
            (
                j
                for j in sorted(near, key=lambda j: (j < cursor, j))
                if not used[j] and matches(paragraph.text, rendered[j])
            ),
            None,
        )
        if found is not None:
            used[found] = True
            cursor = found
            continue
        if not near:
            detail = f"not found on the page: {shown(paragraph.text[:80])!r}"
        else:
            best = max(near, key=lambda j: (_overlap(mine, words[j]), not used[j], -abs(j - cursor)))
            detail = first_difference(paragraph.text, rendered[best])
        differences.append(Difference(paragraph, page, detail))
    return differences


# --- the site -------------------------------------------------------------------------------------


def _excluded(relative: str, patterns: list[str]) -> bool:
    """Sphinx's exclude_patterns: ``*`` within one path segment, a pattern excludes below it."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    for pattern in patterns:
        regex = re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        if any(re.fullmatch(regex, prefix) for prefix in prefixes):
            return True
    return False


def pages(docs: Path, exclude: list[str]) -> list[Path]:
    """The Markdown sources Sphinx builds into pages."""
    found = []
    for path in sorted(docs.rglob("*.md")):
        relative = path.relative_to(docs).as_posix()
        if not _excluded(relative, [*exclude, "_build"]):
            found.append(path)
    return found


@dataclass
class SiteCheck:
    pages: int = 0
    checked: int = 0  #: paragraphs compared
    differences: list[Difference] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  #: constructs not compared, by kind
    included: int = 0  #: {include}d files expanded into their pages
    missing: list[str] = field(default_factory=list)  #: sources with no rendered page


def check_site(docs: Path, site: Path) -> SiteCheck:
    """Every page of ``docs`` against its rendering under ``site``."""
    settings = conf_settings(docs / "conf.py")
    md = markdown_parser(
        settings.get("myst_enable_extensions", ["dollarmath"]),
        dmath_double_inline=bool(settings.get("myst_dmath_double_inline", False)),
    )
    result = SiteCheck()
    for path in pages(docs, list(settings.get("exclude_patterns", []))):
        relative = path.relative_to(docs)
        html_path = site / relative.with_suffix(".html")
        if not html_path.is_file():
            result.missing.append(f"{_relative(path)}: no {html_path}")
            continue
        source = source_paragraphs(
            path.read_text(encoding="utf-8"), md, file=_relative(path), base=path.parent, docs=docs
        )
        rendered = rendered_paragraphs(html_path.read_text(encoding="utf-8"))
        result.differences += compare_page(
            source.paragraphs, rendered, relative.with_suffix(".html").as_posix()
        )
        result.pages += 1
        result.checked += len(source.paragraphs)
        result.skipped += source.skipped
        result.included += len(source.included)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html", help="the built html")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the docs' source folder")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"no built site at {args.site} (build it with sphinx -b html first)", file=sys.stderr)
        return 2
    result = check_site(args.docs, args.site)
    for difference in result.differences:
        print(difference)
    for line in result.missing:
        print(line)
    on = sorted({d.page for d in result.differences})
    print(
        f"{result.checked} paragraphs checked on {result.pages} pages ({result.included} included files"
        f" expanded): {len(result.differences)} differ" + (f" (on {', '.join(on)})" if on else "")
    )
    print("not compared: " + ", ".join(f"{n} {what}" for what, n in sorted(result.skipped.items())))
    if result.missing:
        return 2
    return 1 if result.differences else 0


if __name__ == "__main__":
    sys.exit(main())
