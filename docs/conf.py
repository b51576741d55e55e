"""Sphinx configuration for the posenc-ref documentation site.

Build (warnings are errors in CI)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
    sphinx-build -W --keep-going -b doctest docs docs/_build/doctest

The generated text the pages show (case ids, the golden-file format, the conformance matrix,
the convention overview, the API index, the real output of ``posenc-ref check`` and of the
export sessions, ...) is in the page sources themselves, between marker comments, written by
``python scripts/docs_generate.py`` and checked up to date in CI (``--check``), so a page reads
the same on GitHub as here.  What cannot be in a source is made at build time by
``docs/_ext/posenc_docs.py``: the figures (``docs/figures/*.py``, from the library), the API
pages for the modules that exist, the one timing paragraph of the export guide, and MathJax,
vendored from the npm registry so that the site works offline.  Those go to
``docs/generated/`` (git-ignored).  See ``docs/README.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import posenc_docs  # noqa: E402

import posenc_ref  # noqa: E402

project = "posenc-ref"
author = "posenc-ref contributors"
copyright = "posenc-ref contributors"
release = posenc_ref.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_copybutton",
    "posenc_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "figures",
    "examples",
    "README.md",
    "matrix",  # conformance-matrix findings and repro scripts, read on GitHub, not built
    # a fragment pulled into a page with {include} (export/), generated assets, and what
    # builds before scripts/docs_generate.py left there (*.md, check/):
    "generated/*.md",
    "generated/check",
    "generated/export",
    "generated/figures",
    "generated/static",
    "generated/vendor",
]
templates_path: list[str] = []
# Curly quotes and ellipses, but no dashes: "--only" and "--json" stay options.
smartquotes_action = "qe"

# --- MyST ---------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# --- autodoc / numpydoc ---------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# --- copy buttons -------------------------------------------------------------
# The copied text is what one types: no ">>> " / "... " prompts (pygments' Generic.Prompt,
# ``.gp``) and no doctest output (``.go``), as numpy's and scipy's docs do.
copybutton_exclude = ".linenos, .gp, .go"

# --- doctest ------------------------------------------------------------------
# Pages use ```{doctest}``` blocks; docstring examples are tested as well.
# Docstring examples call functions by their bare names, as they would inside the
# module (pytest --doctest-modules); the star import gives them the public API.
doctest_global_setup = """
import numpy as np
import posenc_ref as pr
from posenc_ref import *
np.set_printoptions(precision=6, suppress=True)
"""
doctest_default_flags = (
    __import__("doctest").ELLIPSIS
    | __import__("doctest").NORMALIZE_WHITESPACE
    | __import__("doctest").DONT_ACCEPT_TRUE_FOR_1
)

# --- math: MathJax 3, vendored (no CDN) -----------------------------------------
mathjax_path = posenc_docs.vendor_mathjax(DOCS)  # "mathjax/tex-svg-full.js"
mathjax3_config = {
    "tex": {"tags": "ams"},
    "svg": {"fontCache": "global"},
    "options": {"enableMenu": False},
}

# --- HTML ---------------------------------------------------------------------
html_theme = "furo"
html_title = f"posenc-ref {release}"
html_static_path = ["_static", "generated/static"]
# The conformance matrix's full table, its reproduction scripts and xfail files, served as they are.
html_extra_path = ["matrix"]
html_css_files = ["posenc.css"]
html_show_sourcelink = False
html_copy_source = False
# Search results show a summary of each page.  Sphinx's search page fetch()es every result
# page for it, which browsers refuse on file:// URLs; posenc_docs ships the pages' text in
# _static/search_pages.js and answers those fetches from it, so summaries work from disk too.
html_show_search_summary = True
html_last_updated_fmt = None
# Readable on light and dark backgrounds (furo switches with the reader's colour scheme).
pygments_style = "default"
pygments_dark_style = "github-dark"
html_theme_options = {"navigation_with_keys": True}
