"""Build-time generation for the posenc-ref docs (a small Sphinx extension).

Most generated text is not made here: ``scripts/docs_generate.py`` writes it into the page
sources, between marker comments (``mdtext.GENERATED_BEGIN``), from the functions of this
module and the modules beside it (:func:`schema_page`, :func:`api_index`,
:func:`figure_gallery`, :func:`diagnosis_catalogue`; :mod:`golden_md`, :mod:`bench_md`,
:mod:`conventions_md`, :mod:`matrix_md`, :mod:`report_md`, :mod:`doc_runs`), and CI checks it
is up to date (``python scripts/docs_generate.py --check``).  So a page reads the same on
GitHub as on the site.  On ``builder-inited`` this extension writes, under
``docs/generated/`` (git-ignored), only what cannot be in a page's source:

- ``figures/*.svg``: every ``docs/figures/fig_*.py`` is imported and its ``make(outdir)``
  called; the figures are drawn with matplotlib (vector SVG) from the library itself.  A
  figure is redrawn only when its script or the library's source changed.  A drawn figure
  that no page shows is a warning.
- ``api/*.md``: one API page per library module that exists (autodoc directives; their
  index, with a summary table, is in ``docs/api.md``).
- ``export/llama31-speed.md``: the timings of the export guide's Llama 3.1 session
  (:data:`doc_runs.MACHINE_DEPENDENT`), measured on the machine that builds the site.
  ``POSENC_DOCS_SKIP_CHECK=1`` runs no session (a placeholder is written instead).
- ``static/mathjax/``: :func:`vendor_mathjax` (called from ``conf.py``) fetches MathJax 3
  from the npm registry once, checks its integrity, and keeps the single self-contained
  ``tex-svg-full.js`` so that math renders with no network.

It also loads :mod:`citations` (issue, pull-request and arXiv references become links)
and :mod:`search_offline` (search summaries from disk), and gives the code blocks of a
generated block the CSS class its first marker names (``, class report``).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import traceback
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
GENERATED = DOCS / "generated"

MATHJAX_VERSION = "3.2.2"
MATHJAX_INTEGRITY = (
    "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
)
MATHJAX_FILE = "tex-svg-full.js"  # TeX input + SVG output + all TeX extensions: one file, no fonts


# --------------------------------------------------------------------------------------
# MathJax, vendored
# --------------------------------------------------------------------------------------
def vendor_mathjax(docs: Path = DOCS) -> str:
    """Make ``generated/static/mathjax/tex-svg-full.js`` exist; return its static path.

    Order: an existing file; the file named by ``POSENC_DOCS_MATHJAX``; ``npm pack
    mathjax@3.2.2`` (integrity-checked against the pinned sha512).
    """
    target_dir = docs / "generated" / "static" / "mathjax"
    target = target_dir / MATHJAX_FILE
    if target.is_file() and target.stat().st_size > 1_000_000:
        return f"mathjax/{MATHJAX_FILE}"
    target_dir.mkdir(parents=True, exist_ok=True)
    override = os.environ.get("POSENC_DOCS_MATHJAX")
    if override:
        shutil.copyfile(override, target)
        return f"mathjax/{MATHJAX_FILE}"
    vendor = docs / "generated" / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    tgz = vendor / f"mathjax-{MATHJAX_VERSION}.tgz"
    if not tgz.is_file() or not _integrity_ok(tgz):
        npm = shutil.which("npm")
        if npm is None:
            msg = (
                "the docs vendor MathJax from the npm registry, but `npm` is not on PATH; install "
                "Node.js/npm, or set POSENC_DOCS_MATHJAX to a local copy of "
                f"mathjax@{MATHJAX_VERSION}/es5/{MATHJAX_FILE}"
            )
            raise RuntimeError(msg)
        subprocess.run(
            [npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--silent", "--pack-destination", str(vendor)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        if not _integrity_ok(tgz):
            msg = f"{tgz} does not match the pinned integrity {MATHJAX_INTEGRITY}"
            raise RuntimeError(msg)
    with tarfile.open(tgz) as tar:
        for member, dest in (
            (f"package/es5/{MATHJAX_FILE}", target),
            ("package/LICENSE", target_dir / "LICENSE"),
        ):
            src = tar.extractfile(member)
            if src is None:
                msg = f"{member} missing from {tgz}"
                raise RuntimeError(msg)
            dest.write_bytes(src.read())
    return f"mathjax/{MATHJAX_FILE}"


def _integrity_ok(path: Path) -> bool:
    digest = base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
    return f"sha512-{digest}" == MATHJAX_INTEGRITY


# --------------------------------------------------------------------------------------
# Cache keys
# --------------------------------------------------------------------------------------
def _library_digest() -> str:
    h = hashlib.sha256()
    for base in (ROOT / "posenc_ref", ROOT / "posenc_ref_conformance"):
        if base.is_dir():
            for path in sorted(base.rglob("*")):
                if path.is_file() and path.suffix in {".py", ".json"} and "__pycache__" not in path.parts:
                    h.update(str(path.relative_to(ROOT)).encode())
                    h.update(path.read_bytes())
    return h.hexdigest()


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()


# --------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------
def build_figures(library_digest: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    outdir = GENERATED / "figures"
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.glob("*.png"):  # figures were PNG before they were SVG
        old.unlink()
    style = (DOCS / "figures" / "_style.py").read_bytes()
    for script in sorted((DOCS / "figures").glob("fig_*.py")):
        stamp = outdir / f".{script.stem}.stamp"
        key = _digest(script.read_bytes(), style, library_digest.encode())
        if stamp.is_file() and stamp.read_text() == key:
            continue
        try:
            module = _load_module(script)
            written = module.make(outdir)
        except Exception:
            logger.warning(
                "figure script %s failed:\n%s",
                script.name,
                traceback.format_exc(),
                type="posenc",
                subtype="figure",
            )
            stamp.unlink(missing_ok=True)
            continue
        logger.info("posenc_docs: %s -> %s", script.name, ", ".join(p.name for p in written))
        stamp.write_text(key)


_FIGURE = re.compile(
    r"^```\{figure\} \.\./generated/figures/(?P<file>[\w.-]+)\n"
    r"(?P<options>(?::[^\n]*\n)*)\n(?P<caption>.*?)^```",
    re.M | re.S,
)


def _page_figures() -> list[tuple[str, re.Match[str]]]:
    """Every ``{figure}`` of a generated SVG on a page of a folder (the family pages first):
    the page's docname and the figure block."""
    order = [
        "families/absolute",
        "families/rope",
        "families/relative",
        "families/nope",
        "families/vision-sine",
    ]
    pages = [p for p in DOCS.glob("*/*.md") if p.parts[-2] not in {"generated", "_build"}]
    rank = {name: i for i, name in enumerate(order)}
    found = []
    for page in sorted(
        pages, key=lambda p: (rank.get(p.relative_to(DOCS).with_suffix("").as_posix(), 99), p)
    ):
        docname = page.relative_to(DOCS).with_suffix("").as_posix()
        found += [(docname, match) for match in _FIGURE.finditer(page.read_text(encoding="utf-8"))]
    return found


def figure_gallery() -> str:
    """The figures page's gallery: every figure of the pages, with its caption from its page.

    A figure is written once, on its family page; the gallery copies the ``{figure}``
    block from there (alt text, width and caption), so the two cannot disagree.
    """
    out: list[str] = []
    scripts = {p.name: p.read_text(encoding="utf-8") for p in sorted((DOCS / "figures").glob("fig_*.py"))}
    for docname, match in _page_figures():
        name = match.group("file")
        drawn_by = [script for script, text in scripts.items() if f'"{Path(name).stem}"' in text]
        source = f", drawn by `docs/figures/{drawn_by[0]}`" if drawn_by else ""
        out += [f"```{{figure}} generated/figures/{name}", match.group("options").rstrip("\n"), ""]
        out += [match.group("caption").rstrip("\n"), "", f"Shown on {{doc}}`/{docname}`{source}."]
        out += ["```", ""]
    return "\n".join(out)


def warn_unshown_figures() -> None:
    """A figure file that no page shows is reported."""
    shown = {match.group("file") for _, match in _page_figures()}
    for path in sorted((GENERATED / "figures").glob("*.svg")):
        if path.name not in shown:
            logger.warning("figure %s is drawn but no page shows it", path.name, type="posenc")


def _load_module(path: Path) -> Any:
    name = f"posenc_docs_figure_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------
# Pages from data: the golden-file format, golden files, case ids, conventions
# --------------------------------------------------------------------------------------
def schema_path() -> Path | None:
    """The newest ``posenc_ref_conformance/golden/golden_schema_v*.json``."""
    golden = ROOT / "posenc_ref_conformance" / "golden"
    versions = sorted(
        golden.glob("golden_schema_v*.json"), key=lambda p: int("".join(filter(str.isdigit, p.stem)))
    )
    return versions[-1] if versions else None


def schema_page() -> str:
    """The golden-file format page's schema reference, from the newest JSON Schema (:mod:`schema_md`)."""
    from schema_md import render_schema

    path = schema_path()
    if path is None:
        msg = "no golden_schema_v*.json in posenc_ref_conformance/golden/"
        raise FileNotFoundError(msg)
    rel = path.relative_to(ROOT).as_posix()
    # {download} paths starting with "/" are relative to the docs source folder
    return render_schema(json.loads(path.read_text()), source=rel, download=f"/../{rel}")


def diagnosis_catalogue() -> str:
    """The known bug shapes the diagnosis tries, as a table: each text and its functions."""
    from posenc_ref_conformance.diagnosis import HYPOTHESES

    rows = ["| known bug shape | functions | judged |", "|---|---|---|"]
    for h in HYPOTHESES:
        judged = f"at {h.precision}, 4 ulp" if h.precision else "the case's tolerance"
        if h.relayout:
            judged += ", bound of the other layout"
        text = h.text.replace("|", "\\|")
        rows.append(f"| {text} | {', '.join(f'`{f}`' for f in h.functions)} | {judged} |")
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------------------
# API pages for the modules that exist
# --------------------------------------------------------------------------------------
#: Library modules in reading order, with page titles.  Modules not listed here but
#: present in posenc_ref/ are appended with their module name as title.
API_MODULES: list[tuple[str, str]] = [
    ("posenc_ref.sinusoidal", "Sinusoidal tables"),
    ("posenc_ref.learned", "Learned tables"),
    ("posenc_ref.rope_scaling", "RoPE frequencies and scalings"),
    ("posenc_ref.rope", "RoPE tables and rotation"),
    ("posenc_ref.rope_config", "Hugging Face RoPE configs"),
    ("posenc_ref.mrope", "M-RoPE and axial positions"),
    ("posenc_ref.relative", "Relative positions and Shaw"),
    ("posenc_ref.t5", "T5 relative buckets"),
    ("posenc_ref.alibi", "ALiBi"),
    ("posenc_ref.kernel_bias", "Sandwich and KERPLE"),
    ("posenc_ref.window_bias", "Windowed 2-D relative positions"),
    ("posenc_ref.transformer_xl", "Transformer-XL relative attention"),
    ("posenc_ref.deberta", "DeBERTa disentangled attention"),
    ("posenc_ref.grid_resize", "Grid resizing of position tables"),
    ("posenc_ref.masks", "Attention masks"),
    ("posenc_ref.nope", "NoPE"),
    ("posenc_ref.attention", "Reference attention"),
]
CONFORMANCE_MODULES: list[tuple[str, str]] = [
    ("posenc_ref_conformance.adapters.base", "Adapter protocol"),
    ("posenc_ref_conformance.runner", "Runner and report"),
]
_SKIP_MODULES = {"posenc_ref.__init__"}


def _module_path(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"


def existing_api_modules() -> list[tuple[str, str]]:
    listed = {m for m, _ in API_MODULES}
    found = [(m, t) for m, t in API_MODULES if _module_path(m).is_file()]
    for path in sorted((ROOT / "posenc_ref").glob("*.py")):
        module = f"posenc_ref.{path.stem}"
        if not path.stem.startswith("_") and module not in listed and module not in _SKIP_MODULES:
            found.append((module, module))
    found += [(m, t) for m, t in CONFORMANCE_MODULES if _module_path(m).is_file()]
    return found


def _public_names(module_name: str) -> list[tuple[str, str]]:
    """(directive, target) for each public object of a module, in source order."""
    import importlib

    module = importlib.import_module(module_name)
    package = importlib.import_module(module_name.split(".")[0])
    exported = set(getattr(package, "__all__", ()))
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, obj in vars(module).items()
            if not n.startswith("_")
            and getattr(obj, "__module__", None) == module_name
            and (inspect.isfunction(obj) or inspect.isclass(obj))
        ]
    entries = []
    for name in names:
        obj = getattr(module, name)
        is_top = (
            module_name.startswith("posenc_ref.") and name in exported and getattr(package, name, None) is obj
        )
        target = f"posenc_ref.{name}" if is_top else f"{module_name}.{name}"
        if inspect.isclass(obj):
            entries.append(("autoclass", target))
        elif callable(obj):
            entries.append(("autofunction", target))
        else:
            entries.append(("autodata", target))
    return entries


def _module_docstring_problems(module: str) -> list[str]:
    """reST errors in a module docstring (ignoring Sphinx-only roles and directives)."""
    import io

    from docutils.core import publish_doctree

    doc = inspect.cleandoc(sys.modules[module].__doc__ or "")
    stream = io.StringIO()
    publish_doctree(doc, settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream})
    problems = []
    for line in stream.getvalue().splitlines():
        match = re.match(r"<string>:(\d+): \((?:WARNING|ERROR|SEVERE)/\d\) (.*)", line)
        if match and "role" not in match.group(2) and "directive" not in match.group(2):
            problems.append(f"line {match.group(1)}: {match.group(2)}")
    return problems


def _data_entry(module: str, target: str) -> list[str]:
    """A ``py:data`` entry with the value and its ``#:`` comment (autodata would show the
    docstring of ``tuple`` for a module-level tuple without one)."""
    from sphinx.pycode import ModuleAnalyzer

    name = target.rsplit(".", 1)[1]
    value = getattr(sys.modules[module], name)
    try:
        comment = ModuleAnalyzer.for_module(module).find_attr_docs().get(("", name), [])
    except Exception:
        comment = []
    doc = [line for line in comment if line.strip()] or [f"Accepted values; defined in ``{module}``."]
    return [f".. py:data:: {target}", f"   :value: {value!r}", "", *[f"   {line}" for line in doc], ""]


def build_api_pages() -> None:
    """``api/<module>.md``, one page of autodoc directives per module of :func:`existing_api_modules`."""
    api = GENERATED / "api"
    api.mkdir(parents=True, exist_ok=True)
    keep = set()
    for module, title in existing_api_modules():
        slug = module.replace(".", "_")
        keep.add(f"{slug}.md")
        lines = [f"# {title}", ""]
        try:
            entries = _public_names(module)
        except Exception:
            logger.warning(
                "cannot import %s:\n%s", module, traceback.format_exc(), type="posenc", subtype="api"
            )
            entries = []
        problems = _module_docstring_problems(module)
        if problems:
            # Shown verbatim rather than failing the whole site on another module's markup;
            # the build log names the problem so that the module's owner can fix it.
            logger.info(
                "posenc_docs: module docstring of %s is not valid reST (%s); shown as plain text",
                module,
                "; ".join(problems),
            )
            doc = inspect.cleandoc(sys.modules[module].__doc__ or "")
            lines += ["````text", doc, "````", ""]
            lines += ["```{eval-rst}", ""]
        else:
            # :no-index: because a module and its main function share a name (posenc_ref.learned).
            lines += ["```{eval-rst}", f".. automodule:: {module}", "   :no-index:", ""]
        lines += [".. py:currentmodule:: None", ""]  # entries below use full dotted names
        for directive, target in entries:
            if directive == "autodata":
                lines += _data_entry(module, target)
                continue
            lines.append(f".. {directive}:: {target}")
            if directive == "autoclass":
                lines.append("   :members:")
            lines.append("")
        lines.append("```")
        _write_if_changed(api / f"{slug}.md", "\n".join(lines) + "\n")
    for stale in api.glob("*.md"):
        if stale.name not in keep:
            stale.unlink()


def api_index() -> str:
    """The API index (``docs/api.md``): a hidden toctree of the API pages, and per module a
    heading linking to its page with a summary table of its functions and classes."""
    index = ["```{toctree}", ":hidden:", ":maxdepth: 1", ""]
    summaries: list[str] = []
    for module, title in existing_api_modules():
        slug = module.replace(".", "_")
        index.append(f"generated/api/{slug}")
        summaries += _summary_section(module, title, f"generated/api/{slug}", _public_names(module))
    return "\n".join([*index, "```", "", *summaries]) + "\n"


def _summary_section(module: str, title: str, page: str, entries: list[tuple[str, str]]) -> list[str]:
    """A heading linking to the module's page, a table of its functions and classes (name and
    the docstring's summary line, as reST), and its constants with their values.

    (autosummary would do the table, but its first-sentence split cuts summaries such as
    ``q_i . table[index_ij]`` inside their inline literal.)
    """
    import importlib

    lines = [f"## {{doc}}`{title} <{page}>`", ""]
    rows = []
    for directive, target in entries:
        if directive == "autodata":
            continue
        path, name = target.rsplit(".", 1)
        obj = getattr(importlib.import_module(path), name)
        doc = inspect.getdoc(obj) or ""
        summary = " ".join(doc.split("\n\n", 1)[0].split())
        role = "class" if directive == "autoclass" else "func"
        rows += [f"   * - :py:{role}:`~{target}`", f"     - {summary}"]
    if rows:
        lines += ["```{eval-rst}", ".. list-table::", "   :widths: 30 70", "   :width: 100%", ""]
        lines += [*rows, "```", ""]
    for directive, target in entries:
        if directive == "autodata":
            value = getattr(sys.modules[module], target.rsplit(".", 1)[1])
            lines += [f"{{data}}`{target}`: `{value!r}`", ""]
    return lines


# --------------------------------------------------------------------------------------
# Timings of a real run of the tool (every other run's output is in its page)
# --------------------------------------------------------------------------------------
def _timed_sessions() -> list[Any]:
    import doc_runs

    return [s for s in doc_runs.SESSIONS if doc_runs.MACHINE_DEPENDENT.intersection(s.excerpts)]


def build_timed_excerpts(library_digest: str) -> None:
    """``export/<excerpt>`` for each of :data:`doc_runs.MACHINE_DEPENDENT`: its session is run
    and only those excerpts are written (the transcript and the other excerpts are in the page).

    A session is rerun when the library, ``doc_runs.py`` or one of its input files changed; a
    step that exits with another status than the page relies on is a warning (an error with -W).
    """
    import doc_runs

    outdir = GENERATED / "export"
    outdir.mkdir(parents=True, exist_ok=True)
    spec = Path(doc_runs.__file__).read_bytes()
    for session in _timed_sessions():
        wanted = [outdir / name for name in session.excerpts if name in doc_runs.MACHINE_DEPENDENT]
        key = _digest(library_digest.encode(), spec, *(p.read_bytes() for p in session.inputs()))
        stamp = outdir / f".{session.name}.stamp"
        if stamp.is_file() and stamp.read_text() == key and all(p.is_file() for p in wanted):
            continue
        _text, excerpts, problems = doc_runs.run_session(session)
        for problem in problems:
            logger.warning("export sample %s: %s", session.name, problem, type="posenc", subtype="export")
        for path in wanted:
            _write_if_changed(path, excerpts[path.name])
        if problems:
            stamp.unlink(missing_ok=True)
        else:
            stamp.write_text(key)
        logger.info("posenc_docs: timed export sample %s", session.name)


def _skipped_outputs() -> None:
    """Placeholders for the timed excerpts when POSENC_DOCS_SKIP_CHECK=1 and no earlier build made them."""
    import doc_runs

    for name in doc_runs.MACHINE_DEPENDENT:
        path = GENERATED / "export" / name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("(not run: these docs were built with POSENC_DOCS_SKIP_CHECK=1)\n")


# --------------------------------------------------------------------------------------
# The CSS class of a generated block's code (what a literalinclude's :class: gave)
# --------------------------------------------------------------------------------------
class GeneratedBlockClasses(SphinxTransform):
    """Give the code blocks between a generated block's markers the class its first marker
    names (``<!-- generated by scripts/docs_generate.py: NAME, class report (do not edit) -->``).

    MyST keeps each marker comment as a raw HTML node where it stands, so the block's
    content is the nodes between the two markers, under one parent.
    """

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        from mdtext import GENERATED_BEGIN, GENERATED_END

        for raw in list(self.document.findall(nodes.raw)):
            begin = GENERATED_BEGIN.match(raw.astext().strip())
            if begin is None or not begin.group("css_class") or raw.parent is None:
                continue
            siblings = raw.parent.children
            for sibling in siblings[siblings.index(raw) + 1 :]:
                if isinstance(sibling, nodes.raw) and GENERATED_END.match(sibling.astext().strip()):
                    break
                if isinstance(sibling, nodes.Element):
                    for block in sibling.findall(nodes.literal_block):
                        block["classes"].append(begin.group("css_class"))


# --------------------------------------------------------------------------------------
# Break opportunities in long inline code inside tables
# --------------------------------------------------------------------------------------
_BREAK_AFTER = re.compile(r"(?<=[=,_./])(?=.)|(?<=[a-z])(?=[A-Z])")


class TableLiteralBreaks(SphinxPostTransform):
    """Let long inline code in a table cell wrap after ``=``, ``,``, ``_``, ``.``, ``/``, or
    between the words of a CamelCase name.

    Sphinx writes each word of inline code as a ``nowrap`` span, so a cell holding
    ``convention="tensor2tensor"`` cannot be narrower than that literal and a wide table
    runs past the column.  A ``<wbr>`` after those characters lets the line break there;
    the copied text is unchanged.
    """

    default_priority = 900
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        for literal in list(self.document.findall(nodes.literal)):
            if not _inside_table(literal) or len(literal.astext()) < 16:
                continue
            for text in list(literal.findall(nodes.Text)):
                parts = _BREAK_AFTER.split(str(text))
                if len(parts) < 2:
                    continue
                pieces: list[nodes.Node] = []
                for part in parts:
                    if pieces:
                        pieces.append(nodes.raw("", "<wbr>", format="html"))
                    pieces.append(nodes.Text(part))
                text.parent.replace(text, pieces)


def _inside_table(node: nodes.Node) -> bool:
    while node is not None:
        if isinstance(node, nodes.entry):
            return True
        node = node.parent
    return False


# --------------------------------------------------------------------------------------
def _write_if_changed(path: Path, text: str) -> None:
    """Rewrite only on change, so Sphinx's incremental build does not reread the page."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def _on_builder_inited(app: Sphinx) -> None:
    GENERATED.mkdir(exist_ok=True)
    digest = _library_digest()
    build_api_pages()
    build_figures(digest)
    warn_unshown_figures()
    if os.environ.get("POSENC_DOCS_SKIP_CHECK") != "1":
        build_timed_excerpts(digest)
    else:
        _skipped_outputs()


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("citations")
    app.setup_extension("search_offline")
    app.add_post_transform(TableLiteralBreaks)
    app.add_transform(GeneratedBlockClasses)
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["api_index", "diagnosis_catalogue", "figure_gallery", "schema_page", "setup", "vendor_mathjax"]
