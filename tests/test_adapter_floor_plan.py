"""Every adapter has the same floor plan (docs/adapters.md, "The floor plan"), read from `packages/*`:

- `__init__.py`: the public instrument / uninstrument (and the package's other public names);
- `_version.py`: `__version__` and `SUPPORTED`, the framework range its hooks were read in;
- `_hooks.py`: the only hook table: every `Hook(...)` row of the package is built there, and each
  row names its upstream place (`file.py:line`);
- no `_instrument.py` or `_package.py` (the older names of those two jobs).

`_describe.py`, `_inject.py`, `_edit.py` and `testing.py` are there where the framework needs them.
Read from the sources: no framework is imported here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "packages"
REQUIRED = ("__init__.py", "_version.py", "_hooks.py")
RETIRED = {"_instrument.py": "_hooks.py", "_package.py": "_version.py"}
_UPSTREAM = re.compile(r"[\w/.-]+\.py:\d+")


def adapter_sources() -> list[Path]:
    """Each adapter's import package (`packages/graphmind-x/src/graphmind_x`)."""
    return sorted(
        src
        for pkg in ROOT.glob("graphmind-*")
        if pkg.name not in ("graphmind-core", "graphmind-server")
        for src in (pkg / "src").glob("graphmind_*")
        if src.is_dir()
    )


def floor_plan_problems(src: Path) -> list[str]:
    """What `src` (an adapter's import package) lacks or has against the floor plan; [] when it holds."""
    problems = [f"no {name}" for name in REQUIRED if not (src / name).is_file()]
    problems += [f"{old} (its job belongs in {new})" for old, new in RETIRED.items() if (src / old).exists()]
    version = src / "_version.py"
    if version.is_file():
        assigned = {
            t.id
            for node in ast.parse(version.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        problems += [
            f"_version.py defines no {name}" for name in ("__version__", "SUPPORTED") if name not in assigned
        ]
    rows_in_hooks = 0
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Hook":
                if path.name != "_hooks.py":
                    problems.append(f"{path.name}:{node.lineno} builds a Hook row outside _hooks.py")
                    continue
                rows_in_hooks += 1
                upstream = node.args[4] if len(node.args) > 4 else None
                for kw in node.keywords:
                    if kw.arg == "upstream":
                        upstream = kw.value
                literal = upstream.value if isinstance(upstream, ast.Constant) else None
                # a row built by a helper passes its upstream through a parameter: the helper's
                # calls then carry the literal (checked below)
                if literal is not None and not _UPSTREAM.search(str(literal)):
                    problems.append(f"_hooks.py:{node.lineno}: the row's upstream names no file.py:line")
    hooks = src / "_hooks.py"
    if hooks.is_file():
        text = hooks.read_text(encoding="utf-8")
        if rows_in_hooks == 0:
            problems.append("_hooks.py builds no Hook row")
        if not _UPSTREAM.search(text):
            problems.append("_hooks.py names no upstream file.py:line")
    return problems


def test_the_adapters_are_found() -> None:
    names = {p.name for p in adapter_sources()}
    assert {"graphmind_openai", "graphmind_litellm", "graphmind_google_adk", "graphmind_pydantic_ai"} <= names
    assert len(names) >= 9


@pytest.mark.parametrize("src", adapter_sources(), ids=lambda p: p.name)
def test_every_adapter_has_the_floor_plan(src: Path) -> None:
    assert floor_plan_problems(src) == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "graphmind_fake"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8")
    return src


_ROW = 'Hook("", "call", wrap, SUPPORTED, "fake/client.py:12 Client.call")\n'


def test_a_package_missing_hooks_fails(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "_version.py": '__version__ = "0"\nSUPPORTED = "fake>=1"\n',
            "_instrument.py": "HOOKS = (" + _ROW + ",)\n",
        },
    )
    assert floor_plan_problems(src) == [
        "no _hooks.py",
        "_instrument.py (its job belongs in _hooks.py)",
        "_instrument.py:1 builds a Hook row outside _hooks.py",
    ]


def test_a_row_without_its_upstream_line_fails(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "_version.py": '__version__ = "0"\nSUPPORTED = "fake>=1"\n',
            "_hooks.py": 'HOOKS = (Hook("", "call", wrap, SUPPORTED, "Client.call"),)\n',
        },
    )
    assert floor_plan_problems(src) == [
        "_hooks.py:1: the row's upstream names no file.py:line",
        "_hooks.py names no upstream file.py:line",
    ]


def test_a_whole_package_passes(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {"__init__.py": "", "_version.py": '__version__ = "0"\nSUPPORTED = "fake>=1"\n', "_hooks.py": _ROW},
    )
    assert floor_plan_problems(src) == []
