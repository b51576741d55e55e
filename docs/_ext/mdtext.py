"""Text from data (JSON, docstrings) put into generated MyST Markdown, shown as written.

Golden-file notes say ``2**24 + 1`` and ``-m|k - q|``; pasted into Markdown, ``**`` turns
into bold, ``|`` splits a table cell and ``$`` opens math.  :func:`md_escape`
backslash-escapes every character that means something to CommonMark or to MyST's
extensions (CommonMark allows a backslash before any ASCII punctuation), so the page
shows exactly the data's text.
"""

from __future__ import annotations

import re

__all__ = ["md_escape", "md_literal"]

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|$~!&^])")


def md_escape(text: object) -> str:
    """``text`` on one line, with Markdown's special characters escaped."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def md_literal(text: object, *, in_table: bool = False) -> str:
    """``text`` as inline code, fenced with enough backticks to hold any it contains.

    In a table cell a ``|`` must be escaped even inside code (GFM splits cells first).
    """
    text = " ".join(str(text).split())
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
