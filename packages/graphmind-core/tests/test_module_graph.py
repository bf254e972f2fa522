"""Core's modules form a layering, not a circle: every import counts, type-only and lazy ones too."""

from __future__ import annotations

import ast
from pathlib import Path

import graphmind

ROOT = Path(graphmind.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    """Every graphmind module `path` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "graphmind")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "graphmind":
                continue
            for alias in node.names:  # `from . import _wrappers` names a module, `from ._x import y` a name
                candidate = f"{module}.{alias.name}"
                found.add(candidate if _path_of(candidate) is not None else module)
    return found


def _path_of(module: str) -> Path | None:
    base = ROOT.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path, name) if m != name and _path_of(m) is not None}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_module_of_core_imports_itself_back_through_others() -> None:
    graph = _graph()
    assert "graphmind._api.client" in graph and "graphmind._node.engine" in graph["graphmind._api.client"]
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_core_module_is_over_400_lines() -> None:
    long = {
        p.name: n for p in ROOT.rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}
