"""Every package's modules form a layering, not a circle; the hub keeps its modules in concept folders.

No circle: across `packages/*/src`, every import counts, type-only (`if TYPE_CHECKING:`) and lazy
(inside a function) ones too, as in core's own module-graph test (packages/graphmind-core/tests/
test_module_graph.py). The hub (`graphmind_server`) has a folder per concept (docs/architecture.md,
"The hub's module map"); only its entry points stand at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[1] / "packages"
HUB = PACKAGES / "graphmind-server" / "src" / "graphmind_server"
# The hub's entry points: the package, `python -m graphmind_server`, the version hatch reads, the
# console script's target (`graphmind = graphmind_server.cli:main`) and `serve` (`graphmind serve`
# and `start_in_thread`, the documented way to run a hub inside a process, docs/hub.md).
HUB_ENTRY_POINTS = {"__init__.py", "__main__.py", "_version.py", "cli.py", "serve.py"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for src in sorted(PACKAGES.glob("*/src")):
        for path in src.rglob("*.py"):
            parts = path.relative_to(src).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` is, or the one it is an attribute of (`a.b.C` -> `a.b`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(m for a in node.names if (m := _owner(a.name, modules)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                module = ".".join(
                    base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])
                )
            else:
                module = node.module or ""
            for alias in node.names:  # `from . import x` names a module, `from .x import y` a name
                candidate = f"{module}.{alias.name}"
                owner = candidate if candidate in modules else _owner(module, modules)
                if owner:
                    found.add(owner)
    found.discard(name)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_module_in_any_package_imports_itself_back_through_others() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # the graph sees lazy and type-only imports, across packages
    assert "graphmind_server.http.cockpit" in graph["graphmind_server.http.api"]
    assert "graphmind.protocol" in graph["graphmind_server.serve"]
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_a_type_only_import_counts_as_an_edge(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
    )
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg import a\n")
    modules = {"pkg.a": tmp_path / "pkg" / "a.py", "pkg.b": tmp_path / "pkg" / "b.py"}
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


def test_the_hub_keeps_every_module_in_a_concept_folder() -> None:
    top = {p.name for p in HUB.glob("*.py")}
    assert top - HUB_ENTRY_POINTS == set(), "move these into a concept folder (docs/architecture.md)"
    assert top >= HUB_ENTRY_POINTS
    folders = {p.name for p in HUB.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"hub", "http", "ingest", "store", "otlp", "export", "mcp_server"} <= folders
    for folder in folders:  # each folder says what it is for, for the module map
        assert ast.get_docstring(ast.parse((HUB / folder / "__init__.py").read_text(encoding="utf-8"))), (
            folder
        )
