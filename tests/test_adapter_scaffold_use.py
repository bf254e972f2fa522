"""Every adapter patches with the one scaffold in `graphmind.adapter` (docs/adapters.md, section 1):
it imports the one hook-row type (`Hook`) and the one patch / undo helper (`Patches`, or the
Stainless layer's subclass of it), and defines no hook-row type or patch record of its own. (Each
adapter's `tests/test_hooks_upstream.py` checks that its rows are `Hook`s at run time.) Read from
the sources, so no framework is imported here."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "packages"
# Every adapter package, read from the tree (not a list that a new adapter could be missing from).
ADAPTERS = tuple(
    sorted(
        p.name.removeprefix("graphmind-")
        for p in ROOT.glob("graphmind-*")
        if p.name not in ("graphmind-core", "graphmind-server") and (p / "src").is_dir()
    )
)


def _imports(package: str) -> tuple[set[str], list[str]]:
    """The names the adapter imports from graphmind.adapter(.stainless), and the classes it defines."""
    names: set[str] = set()
    classes: list[str] = []
    for path in (ROOT / f"graphmind-{package}" / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in (
                "graphmind.adapter",
                "graphmind.adapter.stainless",
            ):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                # A framework's own hook interface implemented for the user (Strands' `HookProvider`,
                # given to `Agent(hooks=[...])`) is the adapter's public API, not a patch scaffold.
                if "HookProvider" in bases:
                    continue
                if node.name.endswith(("Hook", "Hooks", "Patch", "Patches")) or (
                    node.name in ("State", "Gate") and "Patches" not in bases
                ):
                    classes.append(f"{path.relative_to(ROOT)}: class {node.name}")
    return names, classes


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_adapter_imports_the_one_hook_row_and_patch_helper_and_has_none_of_its_own(adapter: str) -> None:
    names, classes = _imports(adapter)
    assert "Hook" in names, f"graphmind-{adapter} does not build its table of graphmind.adapter.Hook rows"
    assert names & {"Patches", "instrument_once", "instrument_hooks"}, (
        f"graphmind-{adapter} does not patch with graphmind.adapter.Patches"
    )
    assert classes == [], f"graphmind-{adapter} keeps a scaffold of its own: {classes}"
