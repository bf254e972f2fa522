"""The hub and every adapter use core's public API only (docs/adapters.md: never a private
`graphmind._x` module). Read from the sources of every package under `packages/*/src` but core's
own (found from the folder listing, so a new adapter is checked the day it lands): an import of
`graphmind._x`, a `from graphmind import _x`, an attribute `graphmind._x` and an
`importlib.import_module("graphmind._x")` (or `__import__`) each fail, named with file and line."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[1] / "packages"
IMPORTERS = {"import_module", "__import__", "find_spec"}


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "graphmind" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])


def _private_name(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) for every use of a private core module in one file's source."""
    tree = ast.parse(source)
    aliases = {"graphmind"}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _private(a.name):
                    found.append((node.lineno, f"import {a.name}"))
                elif a.name == "graphmind" and a.asname:
                    aliases.add(a.asname)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if _private(node.module):
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module.split(".")[0] == "graphmind":
                found.extend(
                    (node.lineno, f"from {node.module} import {a.name}")
                    for a in node.names
                    if _private_name(a.name)
                )
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and _private_name(node.attr)
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            first = node.args[0]
            if (
                name in IMPORTERS
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _private(first.value)
            ):
                found.append((node.lineno, f"{name}({first.value!r})"))
    return sorted(found)


def _outside_core() -> list[Path]:
    """Every package's source folder but core's (the one that holds `graphmind/__init__.py`)."""
    return sorted(src for src in PACKAGES.glob("*/src") if not (src / "graphmind" / "__init__.py").exists())


def test_the_packages_read_are_the_hub_and_every_adapter() -> None:
    names = {src.parent.name for src in _outside_core()}
    assert "graphmind-server" in names and "graphmind-openai" in names and "graphmind-core" not in names
    assert len(names) == len(list(PACKAGES.glob("*/src"))) - 1


def test_no_package_outside_core_uses_a_private_core_module() -> None:
    uses = [
        f"{path.relative_to(PACKAGES)}:{line}: {what}"
        for src in _outside_core()
        for path in sorted(src.rglob("*.py"))
        for line, what in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert uses == [], (
        "private core modules used outside core (use graphmind.adapter, graphmind.replay, ...):\n"
        + "\n".join(uses)
    )


def test_the_check_sees_every_spelling_of_a_private_import() -> None:
    source = (
        "import graphmind._replay.cassette\n"
        "from graphmind._replay.errors import CassetteError\n"
        "from graphmind import _version, adapter, __version__\n"
        "import graphmind as gm\n"
        "gm._api.client\n"
        "import importlib\n"
        "importlib.import_module('graphmind._wire.transport')\n"
        "__import__('graphmind._base')\n"
        "from graphmind.adapter import Hook\n"
        "from graphmind.adapter._hooks import Hook\n"
        "from ._x import y\n"
    )
    assert [line for line, _ in private_uses(source)] == [1, 2, 3, 5, 7, 8, 10]
