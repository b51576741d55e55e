"""Build-time generation for the posenc-ref docs (a small Sphinx extension).

On ``builder-inited`` it writes, under ``docs/generated/`` (git-ignored):

- ``figures/*.png``: every ``docs/figures/fig_*.py`` is imported and its ``make(outdir)``
  called; the figures are drawn with matplotlib (Agg) from the library itself.  A figure
  is redrawn only when its script or the library's source changed.
- ``golden_schema.md``: the golden-file format, rendered from
  ``posenc_ref_conformance/golden/schema.json``.
- ``api/*.md`` and ``api_index.md``: one API page per library module that exists.
- ``check/*.txt``: the real output of ``posenc-ref check`` for the example adapters
  in ``docs/examples/`` (run in a subprocess, cached like the figures).

:func:`vendor_mathjax` (called from ``conf.py``) fetches MathJax 3 from the npm
registry once, checks its integrity, and keeps the single self-contained
``tex-svg-full.js`` so that math renders from disk with no network.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tarfile
import traceback
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
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
# Golden-file format page, from the JSON Schema
# --------------------------------------------------------------------------------------
def _schema_path() -> Path | None:
    """``posenc_ref_conformance/golden/schema.json``, else the newest ``golden_schema_v*.json``."""
    golden = ROOT / "posenc_ref_conformance" / "golden"
    if (golden / "schema.json").is_file():
        return golden / "schema.json"
    versions = sorted(
        golden.glob("golden_schema_v*.json"), key=lambda p: int("".join(filter(str.isdigit, p.stem)))
    )
    return versions[-1] if versions else None


def build_schema_page() -> None:
    out = GENERATED / "golden_schema.md"
    schema_path = _schema_path()
    if schema_path is None:
        logger.warning(
            "no JSON Schema in posenc_ref_conformance/golden/: the golden-format page has none", type="posenc"
        )
        out.write_text("*(No golden-file JSON Schema was found at build time.)*\n")
        return
    schema = json.loads(schema_path.read_text())
    from schema_md import render_schema  # docs/_ext/schema_md.py

    _write_if_changed(out, render_schema(schema, source=schema_path.relative_to(ROOT).as_posix()))


def build_golden_summary() -> None:
    """Tables of the golden files (cases, size, version, checksum) and of their rationale flags."""
    out = GENERATED / "golden_summary.md"
    files = sorted((ROOT / "posenc_ref_conformance" / "golden" / "vectors").glob("*.json"))
    if not files:
        _write_if_changed(out, "*(No golden files were present when this site was built.)*\n")
        return
    rows = ["| file | scheme | cases | size | format | checksum |", "|---|---|---:|---:|---|---|"]
    total, notes, example = 0, {}, None
    for path in files:
        data = path.read_bytes()
        doc = json.loads(data)
        cases = doc.get("numberOfCases", _count_cases(doc)) if "cases" in doc else 0
        total += cases
        version = doc.get("formatVersion", "?")
        checksum = doc.get("checksum", {}).get("value") if isinstance(doc.get("checksum"), dict) else None
        state = "none"
        if checksum:
            blank = data.replace(checksum.encode(), b"0" * 64, 1)
            state = "ok" if hashlib.sha256(blank).hexdigest() == checksum else "**mismatch**"
        scheme = doc.get("scheme", "(manifest)" if "files" in doc else "?")
        rows.append(
            f"| `{path.name}` | {scheme} | {cases} | {len(data) / 1024:.0f} KiB | `{version}` | {state} |"
        )
        for flag, note in doc.get("notes", {}).items():
            notes.setdefault(flag, (note, []))[1].append(doc.get("function", path.stem))
        if example is None and doc.get("cases"):
            example = doc["cases"][0]
    size = sum(p.stat().st_size for p in files) / 2**20
    rows.append(f"| **all {len(files)} files** | | **{total}** | **{size:.1f} MiB** | | |")
    text = "\n".join(rows) + "\n"
    if notes:
        text += "\n### Rationale flags\n\n"
        text += "Every case lists flags saying why it exists; each file explains its flags:\n\n"
        text += "| flag | kind | what it catches |\n|---|---|---|\n"
        for flag, (note, _where) in sorted(notes.items()):
            desc = " ".join(str(note.get("description", "")).split()).replace("|", "\\|")
            links = ", ".join(
                _link(str(link)) for link in note.get("links", []) if str(link).startswith("http")
            )
            text += f"| `{flag}` | {note.get('bugType', '')} | {desc} {links} |\n"
    if example is not None:
        text += "\n### One case, as stored\n\n(Long arrays shortened here with `...`.)\n\n```json\n"
        text += _compact_json(_shorten(example)) + "\n```\n"
    _write_if_changed(out, text)


def build_tolerance_table() -> None:
    """Per golden file and dtype: the file's tolerance and the range of per-case ones."""
    out = GENERATED / "tolerance_table.md"
    files = sorted((ROOT / "posenc_ref_conformance" / "golden" / "vectors").glob("*.json"))
    rows = [
        "| function | dtype | file tolerance (atol / rtol / maxUlp) | cases with their own "
        "| their atol range | maxUlp |",
        "|---|---|---|---:|---|---|",
    ]
    for path in files:
        doc = json.loads(path.read_bytes())
        if "cases" not in doc:
            continue
        function = doc.get("function", path.stem)
        if not doc.get("tolerances"):
            rows.append(f"| `{function}` | {', '.join(doc.get('dtypes', []))} | exact | | | |")
            continue
        for dtype, tol in doc["tolerances"].items():
            own = [
                c["tolerances"][dtype]
                for c in doc["cases"]
                if c.get("tolerances") and dtype in c["tolerances"]
            ]
            base = f"{_g(tol['atol'])} / {_g(tol['rtol'])} / {tol['maxUlp']}"
            if own:
                atols = sorted({t["atol"] for t in own})
                ulps = sorted({t["maxUlp"] for t in own})
                rng = f"{_g(atols[0])} to {_g(atols[-1])}" if len(atols) > 1 else _g(atols[0])
                ulp = f"{ulps[0]} to {ulps[-1]}" if len(ulps) > 1 else str(ulps[0])
                rows.append(f"| `{function}` | {dtype} | {base} | {len(own)} | {rng} | {ulp} |")
            else:
                rows.append(f"| `{function}` | {dtype} | {base} | 0 | | |")
    text = "\n".join(rows) + "\n" if len(rows) > 2 else "*(No golden files were present at build time.)*\n"
    _write_if_changed(out, text)


def _g(value: float) -> str:
    return "0" if value == 0 else f"{value:.3g}"


def _link(url: str) -> str:
    """``[owner/repo#N](url)`` for GitHub issues and pulls, else the host and path."""
    import re

    match = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url)
    label = f"{match.group(1)}#{match.group(2)}" if match else url.split("://", 1)[-1].rstrip("/")
    return f"[{label}]({url})"


def _compact_json(node: Any, indent: int = 0) -> str:
    """JSON with arrays of scalars on one line, as the golden files are written."""
    pad = " " * (indent + 1)
    if isinstance(node, dict) and node:
        items = [f"{pad}{json.dumps(k)}: {_compact_json(v, indent + 1)}" for k, v in node.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node):
        items = [pad + _compact_json(v, indent + 1) for v in node]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(node)


def _shorten(node: Any, keep: int = 6) -> Any:
    if isinstance(node, dict):
        return {k: _shorten(v, keep) for k, v in node.items()}
    if isinstance(node, list):
        items = [_shorten(v, keep) for v in node[:keep]]
        return [*items, "..."] if len(node) > keep else items
    return node


def _count_cases(doc: Any) -> int:
    if isinstance(doc, dict):
        if isinstance(doc.get("cases"), list):
            return len(doc["cases"])
        return sum(_count_cases(v) for v in doc.values() if isinstance(v, (dict, list)))
    if isinstance(doc, list):
        return sum(_count_cases(v) for v in doc)
    return 0


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
    ("posenc_ref.bias_extra", "Sandwich and KERPLE"),
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
    import re

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
    api = GENERATED / "api"
    api.mkdir(parents=True, exist_ok=True)
    modules = existing_api_modules()
    keep = set()
    index = ["```{toctree}", ":maxdepth: 1", ""]
    for module, title in modules:
        slug = module.replace(".", "_")
        keep.add(f"{slug}.md")
        index.append(f"generated/api/{slug}")
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
    index.append("```")
    _write_if_changed(GENERATED / "api_index.md", "\n".join(index) + "\n")


# --------------------------------------------------------------------------------------
# Real `posenc-ref check` runs of the example adapters
# --------------------------------------------------------------------------------------
#: example adapter file -> module it needs
CHECK_EXAMPLES: dict[str, str] = {
    "mlx_adapter.py": "mlx.core",
    "torch_adapter.py": "torch",
}


def build_check_reports(library_digest: str) -> None:
    outdir = GENERATED / "check"
    outdir.mkdir(parents=True, exist_ok=True)
    for example, needs in CHECK_EXAMPLES.items():
        script = DOCS / "examples" / example
        out = outdir / f"{Path(example).stem}.txt"
        if not script.is_file():
            continue
        if importlib.util.find_spec(needs.split(".")[0]) is None:
            logger.warning(
                "%s needs %s, which is not installed: its report is not shown",
                example,
                needs,
                type="posenc",
                subtype="check",
            )
            out.write_text(f"({needs} was not installed when these docs were built)\n")
            continue
        key = _digest(script.read_bytes(), library_digest.encode())
        stamp = outdir / f".{Path(example).stem}.stamp"
        if stamp.is_file() and stamp.read_text() == key and out.is_file():
            continue
        stem = Path(example).stem
        report_name = f"{stem.removesuffix('_adapter')}-report.json"
        report_json = (outdir / report_name).relative_to(ROOT).as_posix()
        adapter = script.relative_to(ROOT).as_posix()
        cmd = [sys.executable, "-m", "posenc_ref_conformance", "check", adapter, "--json", report_json]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
        shown = proc.stdout.rstrip().replace(report_json, report_name)
        text = f"$ posenc-ref check {adapter} --json {report_name}\n{shown}\n$ echo $?\n{proc.returncode}\n"
        if proc.returncode not in (0, 1):
            logger.warning(
                "`%s` failed with exit code %d:\n%s",
                " ".join(cmd[2:]),
                proc.returncode,
                proc.stderr[-3000:],
                type="posenc",
                subtype="check",
            )
        out.write_text(text)
        if proc.returncode in (0, 1):
            stamp.write_text(key)
        else:
            stamp.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------
def _write_if_changed(path: Path, text: str) -> None:
    """Rewrite only on change, so Sphinx's incremental build does not reread the page."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def _on_builder_inited(app: Sphinx) -> None:
    GENERATED.mkdir(exist_ok=True)
    digest = _library_digest()
    build_api_pages()
    build_schema_page()
    build_golden_summary()
    build_tolerance_table()
    build_figures(digest)
    if os.environ.get("POSENC_DOCS_SKIP_CHECK") != "1":
        build_check_reports(digest)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["setup", "vendor_mathjax"]
