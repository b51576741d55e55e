"""Cited GitHub issues and pull requests, and arXiv ids, found in text: the one home of the rule.

- ``owner/repo#N`` is ``https://github.com/owner/repo/issues/N`` (GitHub redirects an issue
  number that is a pull request to it), ``owner/repo PR #N`` is ``.../pull/N``;
- ``repo#N`` and ``repo PR #N`` the same when ``repo`` is one of :data:`REPOSITORIES` (the short
  names the pages use: ``transformers#25104``, ``vllm#3488``, ``mlx PR #1174``);
- a ``#N`` that continues a list started by one of those (``ml-explore/mlx#147, #321``,
  ``PR #3614/#3615``, ``(vllm#3488, #5093, #41236)``) belongs to the same repository;
- ``arXiv:NNNN.NNNNN`` is ``https://arxiv.org/abs/NNNN.NNNNN``.

The docs' Sphinx transform (``docs/_ext/citations.py``) and the matrix page
(:func:`..matrix.render_html`) link what :func:`find_citations` finds; :func:`linked_html`
is the HTML form.
"""

from __future__ import annotations

import html
import re

__all__ = ["REPOSITORIES", "find_citations", "linked_html"]

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


def linked_html(text: str) -> str:
    """``text`` escaped for HTML, each citation an ``<a class="citation-link">`` to its address.

    >>> linked_html("vllm#7 & more")
    '<a class="citation-link" href="https://github.com/vllm-project/vllm/issues/7">vllm#7</a> &amp; more'
    """
    out, pos = [], 0
    for start, end, url in find_citations(text):
        if start < pos:
            continue
        out += [html.escape(text[pos:start]), f'<a class="citation-link" href="{html.escape(url)}">']
        out += [html.escape(text[start:end]), "</a>"]
        pos = end
    return "".join([*out, html.escape(text[pos:])])
