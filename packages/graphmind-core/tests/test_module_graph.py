"""Core's modules form a layering, not a circle, and not a deep one.

No circle: every import counts, type-only (`if TYPE_CHECKING:`) and lazy (inside a function) ones too.
Layers: only run-time imports count. An import under `if TYPE_CHECKING:` never runs, so it is no
dependency at run time; a lazy import inside a function runs when the function does, so it counts
(a module that needs another at run time depends on it, whenever the import statement runs). The
layers are counted over core's own modules, `graphmind.adapter` and `graphmind.testing` aside (they
build on core from outside, as an adapter does): a module that imports no other core module is
layer 1, any other one more than the highest of those it imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import graphmind

ROOT = Path(graphmind.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside an `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) block."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = (
                test.id
                if isinstance(test, ast.Name)
                else test.attr
                if isinstance(test, ast.Attribute)
                else ""
            )
            if name == "TYPE_CHECKING":
                inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def _imports(path: Path, name: str, runtime_only: bool = False) -> set[str]:
    """Every graphmind module `path` imports, wherever the import statement stands (with
    `runtime_only`: except under `if TYPE_CHECKING:`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
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


def _graph(runtime_only: bool = False) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path, name, runtime_only) if m != name and _path_of(m) is not None}
    return graph


def _layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's layer: 1 with no import, else one more than its highest import's (no circle)."""
    layer: dict[str, int] = {}

    def of(node: str) -> int:
        if node not in layer:
            layer[node] = 1 + max((of(m) for m in graph.get(node, ())), default=0)
        return layer[node]

    for node in graph:
        of(node)
    return layer


def _deepest_chain(graph: dict[str, set[str]], layer: dict[str, int]) -> list[str]:
    node = max(layer, key=lambda n: (layer[n], n))
    chain = [node]
    while graph.get(node):
        node = max(graph[node], key=lambda n: (layer[n], n))
        chain.append(node)
    return chain


def _core(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Core's own modules and the imports among them (adapter/ and testing/ left out)."""
    outside = ("graphmind.adapter", "graphmind.testing")
    inside = {n for n in graph if not n.startswith(outside)}
    return {n: graph[n] & inside for n in inside}


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
    # a type-only import counts here: `_hub.control` names the transport only under TYPE_CHECKING
    assert "graphmind._wire.transport" in graph["graphmind._hub.control"]
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_core_is_at_most_12_run_time_layers_deep() -> None:
    graph = _core(_graph(runtime_only=True))
    assert "graphmind._wire.transport" not in graph["graphmind._hub.control"]  # TYPE_CHECKING only
    layer = _layers(graph)
    chain = _deepest_chain(graph, layer)
    assert len(chain) == max(layer.values())
    assert len(chain) <= 12, f"{len(chain)} run-time layers: " + " -> ".join(chain)


def test_the_layer_count_counts_the_longest_chain() -> None:
    graph = {"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": set()}
    layer = _layers(graph)
    assert layer == {"a": 3, "b": 2, "c": 1, "d": 1}
    assert _deepest_chain(graph, layer) == ["a", "b", "c"]


def test_a_lazy_import_counts_at_run_time_and_a_type_checking_one_does_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from graphmind._wire import transport\n"
        "def f():\n    from graphmind._base import clock\n"
    )
    skip = _type_checking_only(tree := ast.parse(source))
    kept = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and id(n) not in skip]
    assert [n.module for n in kept] == ["typing", "graphmind._base"]


def test_no_core_module_is_over_400_lines() -> None:
    long = {
        p.name: n for p in ROOT.rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}
