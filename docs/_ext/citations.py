"""Link cited GitHub issues and pull requests, and arXiv ids, wherever they appear in text.

A Sphinx transform over every document's text (pages, docstrings, text from golden files):

- ``owner/repo#N`` links to ``https://github.com/owner/repo/issues/N`` (GitHub redirects
  an issue number that is a pull request to it), ``owner/repo PR #N`` to ``.../pull/N``;
- ``repo#N`` and ``repo PR #N`` do the same when ``repo`` is one of :data:`REPOSITORIES`
  (the short names the pages use: ``transformers#25104``, ``vllm#3488``, ``mlx PR #1174``);
- a ``#N`` that continues a list started by one of those (``ml-explore/mlx#147, #321``,
  ``PR #3614/#3615``, ``(vllm#3488, #5093, #41236)``, ``transformers#38224, PR #40320``)
  belongs to the same repository;
- ``arXiv:NNNN.NNNNN`` links to ``https://arxiv.org/abs/NNNN.NNNNN``.

Text inside code, math, existing links and raw HTML is left alone.  A ``#N`` with no
repository in front of it stays plain text (the offline check lists those).
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

__all__ = ["REPOSITORIES", "CitationLinks", "find_citations", "setup"]

#: Short repository names used in the prose -> ``owner/repo``.
REPOSITORIES: dict[str, str] = {
    "attention_with_linear_biases": "ofirpress/attention_with_linear_biases",
    "Baichuan2": "baichuan-inc/Baichuan2",
    "CTranslate2": "OpenNMT/CTranslate2",
    "diffusers": "huggingface/diffusers",
    "exllamav3": "turboderp-org/exllamav3",
    "flash-attention": "Dao-AILab/flash-attention",
    "flashinfer": "flashinfer-ai/flashinfer",
    "gpt-2": "openai/gpt-2",
    "gpt-neox": "EleutherAI/gpt-neox",
    "ik_llama.cpp": "ikawrakow/ik_llama.cpp",
    "llama.cpp": "ggml-org/llama.cpp",
    "mlx": "ml-explore/mlx",
    "mlx-examples": "ml-explore/mlx-examples",
    "mlx-lm": "ml-explore/mlx-lm",
    "modded-nanogpt": "KellerJordan/modded-nanogpt",
    "nanotron": "huggingface/nanotron",
    "sglang": "sgl-project/sglang",
    "sglang-jax": "sgl-project/sglang-jax",
    "tensor2tensor": "tensorflow/tensor2tensor",
    "TensorRT-LLM": "NVIDIA/TensorRT-LLM",
    "transformers": "huggingface/transformers",
    "unsloth": "unslothai/unsloth",
    "vllm": "vllm-project/vllm",
    "x-transformers": "lucidrains/x-transformers",
}

_NAME = r"[A-Za-z0-9_.-]*[A-Za-z0-9_]"
_HEAD = re.compile(
    rf"(?<![\w/.-])(?:(?P<owner>{_NAME})/)?(?P<repo>{_NAME})(?P<sep>#|\s+PRs?\s+#)(?P<num>\d+)\b"
)
#: What may stand between two numbers of one list: ", ", "/", " and ", ", PR ", "; PRs " ...
_NEXT = re.compile(r"(?:,|/|,?\s+and|;)?\s*(?:PRs?\s+)?#(?P<num>\d+)\b")
_ARXIV = re.compile(r"\barXiv:(?P<id>\d{4}\.\d{4,5})(?:v\d+)?\b")
_SKIP = (
    nodes.literal,
    nodes.reference,
    nodes.raw,
    nodes.math,
    nodes.math_block,
    nodes.FixedTextElement,
    nodes.target,
)


def find_citations(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, url)`` of every citation in ``text``, in order."""
    found = []
    pos = 0
    while (match := _HEAD.search(text, pos)) is not None:
        repo = _repository(match.group("owner"), match.group("repo"))
        if repo is None:
            pos = match.start("num")
            continue
        found.append((match.start(), match.end(), _url(repo, match.group("sep"), match.group("num"))))
        pos = match.end()
        while (more := _NEXT.match(text, pos)) is not None:
            found.append((more.start("num") - 1, more.end(), _url(repo, more.group(0), more.group("num"))))
            pos = more.end()
    found += [(m.start(), m.end(), f"https://arxiv.org/abs/{m.group('id')}") for m in _ARXIV.finditer(text)]
    return sorted(found)


def _url(repo: str, words: str, number: str) -> str:
    kind = "pull" if "PR" in words else "issues"  # GitHub redirects issues/N to pull/N as well
    return f"https://github.com/{repo}/{kind}/{number}"


def _repository(owner: str | None, repo: str) -> str | None:
    if owner:
        return f"{owner}/{repo}"
    return REPOSITORIES.get(repo)


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
