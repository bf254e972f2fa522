"""docs/replay.md's table of which instrumentors' traces replay with which adapters is true: every
✅ row names tests that exist, are not skipped, and record with that very instrumentor and replay
with that very adapter (their module, or the app file in `fixtures/` it runs, imports both); the whole suite runs them, so a ✅ whose test
fails fails the suite. A ◐ or ✗ row says why in its mark's cell."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "replay.md"
HEADING = "## Foreign traces"
MARKS = ("✅", "◐", "✗")
_TEST = re.compile(r"((?:packages/[\w-]+/)?tests/(?:[\w-]+/)*test_\w+\.py)::(\w+)")


@dataclass(frozen=True)
class Row:
    source: str
    adapter: str
    mark: str
    tests: list[tuple[str, str]]


def rows() -> list[Row]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    section = section[: section.index("\n## ", 1)]
    found = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Traces from", "---") or set(cells[0]) <= {"-"}:
            continue
        found.append(Row(cells[0], cells[1], cells[2], _TEST.findall(cells[3])))
    return found


def _instrumentor_module(source: str) -> str:
    """`openinference-instrumentation-llama-index` → openinference.instrumentation.llama_index."""
    package = re.findall(r"`((?:openinference|opentelemetry)-instrumentation-[\w-]+)`", source)[0]
    head, _, rest = package.partition("-instrumentation-")
    return f"{head}.instrumentation.{rest.replace('-', '_')}"


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _fixture_imports(path: Path, tree: ast.Module) -> set[str]:
    """What the app files a test runs (a `fixtures/NAME.py` it names) import."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".py"):
            app = path.parent / "fixtures" / node.value
            if app.is_file():
                names |= _imports(ast.parse(app.read_text(encoding="utf-8")))
    return names


def _test_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def test_the_table_has_its_rows_and_marks() -> None:
    table = rows()
    assert len(table) >= 8, table
    for row in table:
        assert row.mark.startswith(MARKS), f"{row.source}: the mark is one of {MARKS}, got {row.mark!r}"
        assert row.adapter.startswith("graphmind-"), row
        if not row.mark.startswith("✅"):
            assert len(row.mark) > 3, f"{row.source}: a {row.mark} row says why"


def test_every_done_row_names_a_test_that_records_with_the_instrumentor_and_replays_with_the_adapter() -> (
    None
):
    done = [r for r in rows() if r.mark.startswith("✅")]
    assert len(done) >= 6
    for row in done:
        assert row.tests, f"{row.source} → {row.adapter}: a ✅ row names its test"
        wanted = {_instrumentor_module(row.source), row.adapter.replace("-", "_")}
        for path, name in row.tests:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            fn = _test_function(tree, name)
            assert fn is not None, f"{path}::{name} does not exist ({row.source})"
            skipped = [ast.unparse(d) for d in fn.decorator_list if "skip" in ast.unparse(d)]
            assert not skipped, f"{path}::{name} is skipped: {skipped}"
            imported = _imports(tree) | _fixture_imports(ROOT / path, tree)
            missing = {w for w in wanted if not any(i == w or i.startswith(w + ".") for i in imported)}
            assert not missing, f"{path}::{name} does not import {sorted(missing)} ({row.source})"
