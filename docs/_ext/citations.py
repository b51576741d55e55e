"""Link cited GitHub issues and pull requests, and arXiv ids, wherever they appear in text.

A Sphinx transform over every document's text (pages, docstrings, text from golden files),
linking what :func:`posenc_ref_conformance.citations.find_citations` finds (the rule, with its
forms: ``owner/repo#N``, ``repo#N`` for the short names of :data:`REPOSITORIES`, ``PR #N``,
continued lists, ``arXiv:NNNN.NNNNN``; the matrix page links with the same rule).

Text inside code, math, existing links and raw HTML is left alone.  A ``#N`` with no
repository in front of it stays plain text (the offline check lists those).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

from posenc_ref_conformance.citations import REPOSITORIES, find_citations

__all__ = ["REPOSITORIES", "CitationLinks", "find_citations", "setup"]

#: What Sphinx leaves alone: code, math, existing links, raw HTML, targets.
_SKIP = (
    nodes.literal,
    nodes.reference,
    nodes.raw,
    nodes.math,
    nodes.math_block,
    nodes.FixedTextElement,
    nodes.target,
)


class CitationLinks(SphinxTransform):
    """Turn the citations of every text node into external links."""

    default_priority = 800  # after MyST and numpydoc have produced the text

    def apply(self, **kwargs: Any) -> None:
        parents = {id(t.parent): t.parent for t in self.document.findall(nodes.Text) if t.parent is not None}
        for parent in parents.values():
            if not _inside(parent, _SKIP):
                _link_children(parent)


def _link_children(parent: nodes.Element) -> None:
    """Link the citations in each run of adjacent text children of ``parent``.

    MyST gives a line break in a paragraph its own text node, so a run is joined before
    matching ("diffusers" at the end of one line, "PR #13922" on the next).  Each run is
    replaced where it stands, found by identity (``is``), never by value.
    """
    runs: list[list[nodes.Text]] = []
    previous: nodes.Node | None = None
    for child in parent.children:
        if isinstance(child, nodes.Text):
            if isinstance(previous, nodes.Text):
                runs[-1].append(child)
            else:
                runs.append([child])
        previous = child
    for run in runs:
        source = "".join(str(t) for t in run)
        spans = find_citations(source)
        if not spans:
            continue
        pieces: list[nodes.Node] = []
        pos = 0
        for start, end, url in spans:
            if start < pos:
                continue
            if start > pos:
                pieces.append(nodes.Text(source[pos:start]))
            label = source[start:end]
            pieces.append(nodes.reference(label, label, refuri=url, classes=["citation-link"]))
            pos = end
        if pos < len(source):
            pieces.append(nodes.Text(source[pos:]))
        # By identity: a Text node is a str and compares by value, so parent.index(),
        # parent.remove() and list.index() find the first *equal* text ("\n" is every
        # line break's node) and would splice the pieces in at the wrong place.
        first = next(i for i, child in enumerate(parent.children) if child is run[0])
        parent[first : first + len(run)] = pieces


def _inside(node: nodes.Node, kinds: tuple[type, ...]) -> bool:
    while node is not None:
        if isinstance(node, kinds):
            return True
        node = node.parent
    return False


def setup(app: Any) -> dict[str, Any]:
    app.add_transform(CitationLinks)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
