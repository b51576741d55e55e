"""The layering: the library never imports the suite, and no module imports itself through others.

The graph is read from the source (every ``import`` statement, module-level or
inside a function), so an import hidden in a function cannot close a cycle.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("posenc_ref", "posenc_ref_conformance")


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _targets(module: str, path: pathlib.Path, node: ast.AST, modules: dict[str, pathlib.Path]) -> list[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parts, base] if base else parts)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    out = []
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.append(name)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(_targets(module, path, node, modules))
    return graph


def test_the_library_imports_nothing_from_the_suite() -> None:
    graph = _graph()
    upward = sorted(
        (m, t)
        for m, ts in graph.items()
        if m.split(".")[0] == "posenc_ref"
        for t in ts
        if t.startswith(PACKAGES[1])
    )
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_function_level_imports() -> None:
    """The check would catch a hidden import: the CLI imports the runner only inside a function."""
    assert "posenc_ref_conformance.runner" in _graph()["posenc_ref_conformance.cli"]
