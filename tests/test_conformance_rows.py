"""docs/conformance.md names a test for each requirement: every test it names exists (issue 29).
A row whose test was renamed or never written fails here, not silently in a table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIXES = {
    "C": "packages/graphmind-core/tests",
    "S": "packages/graphmind-server/tests",
    "O": "packages/graphmind-openai/tests",
    "M": "packages/graphmind-mcp/tests",
    "T": "tests",
    "B": "tests/browser",
}
# "C/test_x.py::test_a, ::test_b" or "C/test_x.py" (the whole file)
_REF = re.compile(r"\b([A-Z])/((?:[\w-]+/)*test_[\w]+\.py)((?:(?:, )?::[\w\[\]-]+…?)*)")


def _references() -> list[tuple[str, str, list[str]]]:
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    refs = []
    for prefix, path, names in _REF.findall(text):
        if prefix in PREFIXES:
            # "::test_x_…" abbreviates a long name: any test starting so
            refs.append(
                (prefix, path, [n + (".*" if cut else "") for n, cut in re.findall(r"::(\w+)(…)?", names)])
            )
    return refs


def test_conformance_names_tests_that_exist() -> None:
    refs = _references()
    assert len(refs) > 50  # the pattern still reads the table
    missing = []
    for prefix, path, names in refs:
        file = ROOT / PREFIXES[prefix] / path
        if not file.exists():
            missing.append(f"{prefix}/{path}")
            continue
        source = file.read_text(encoding="utf-8")
        for name in names:
            pattern = re.escape(name[:-2]) + r"\w*" if name.endswith(".*") else re.escape(name) + r"\b"
            if not re.search(rf"\bdef {pattern}", source):
                missing.append(f"{prefix}/{path}::{name}")
    assert missing == [], f"docs/conformance.md names tests that do not exist: {missing}"
