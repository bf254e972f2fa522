"""docs/conformance.md names a test for each requirement, and its marks say what the tests prove.

- Every test it names exists: a row whose test was renamed or never written fails here, not
  silently in a table.
- Every requirement row carries a mark: ✅ done and tested, ◐ partly, ✗ missing, n/a.
- A ✅ row names at least one test that exists and is not skipped (a row proven "by construction"
  or "see above" is not proven); the whole suite runs every named test, so a ✅ whose test fails
  fails the suite.
- A ◐, ✗ or n/a row says why, in its mark's cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "conformance.md"
PREFIXES = {
    "C": "packages/graphmind-core/tests",
    "S": "packages/graphmind-server/tests",
    "O": "packages/graphmind-openai/tests",
    "M": "packages/graphmind-mcp/tests",
    "T": "tests",
    "B": "tests/browser",
}
MARKS = ("✅", "◐", "✗", "n/a")
_NAMES = r"((?:(?:, )?::[\w\[\]-]+…?)*)"
# "C/test_x.py::test_a, ::test_b" or "C/test_x.py" (the whole file)
_REF = re.compile(r"\b([A-Z])/((?:[\w-]+/)*test_[\w]+\.py)" + _NAMES)
# A path from the repository's root: "packages/graphmind-x/tests/test_y.py::test_z", "tests/test_w.py"
_PATH = re.compile(r"(?<![\w/])((?:packages/[\w-]+/)?tests/(?:[\w-]+/)*test_[\w]+\.py)" + _NAMES)
_SKIPPED = re.compile(r"@pytest\.mark\.(?:skip|xfail)\b(?!if)")
# The gate-matrix kit: every adapter's test_gate_matrix.py runs it (the table's introduction).
KIT = re.compile(r"\bGM\b")


@dataclass(frozen=True)
class Ref:
    file: str  # from the repository's root
    names: tuple[str, ...]  # test names; "x.*" abbreviates a name ("::test_x_…"); () = the whole file


@dataclass(frozen=True)
class Row:
    number: int
    requirement: str
    tests: str
    mark: str


def _names(text: str) -> tuple[str, ...]:
    return tuple(n + (".*" if cut else "") for n, cut in re.findall(r"::(\w+)(…)?", text))


def references(text: str) -> list[Ref]:
    refs = [
        Ref(f"{PREFIXES[prefix]}/{path}", _names(names))
        for prefix, path, names in _REF.findall(text)
        if prefix in PREFIXES
    ]
    refs += [Ref(path, _names(names)) for path, names in _PATH.findall(text)]
    return refs


def rows() -> list[Row]:
    """The requirement rows of the three specification pages' tables (numbered as the audits number
    them: 1 is the first row under "Environment and safety")."""
    text = DOC.read_text(encoding="utf-8").split("\n## Replay", 1)[0]
    found: list[Row] = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith(("| Requirement", "|---")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 4, f"a row of docs/conformance.md is not 4 cells: {line[:80]}"
        found.append(Row(len(found) + 1, cells[0], cells[2], cells[3]))
    return found


def _problems(ref: Ref) -> list[str]:
    file = ROOT / ref.file
    if not file.exists():
        return [ref.file]
    source = file.read_text(encoding="utf-8")
    missing = []
    for name in ref.names:
        pattern = re.escape(name[:-2]) + r"\w*" if name.endswith(".*") else re.escape(name) + r"\b"
        if not re.search(rf"\bdef {pattern}", source):
            missing.append(f"{ref.file}::{name}")
    return missing


def _skipped(ref: Ref) -> bool:
    """The file, or every test the reference names, is skipped or expected to fail unconditionally."""
    source = (ROOT / ref.file).read_text(encoding="utf-8")
    if re.search(r"^pytestmark = .*pytest\.mark\.(?:skip|xfail)\b(?!if)", source, re.M):
        return True
    if not ref.names:
        return False
    for name in ref.names:
        pattern = re.escape(name[:-2]) + r"\w*" if name.endswith(".*") else re.escape(name) + r"\b"
        found = re.search(rf"((?:^[ \t]*@.*\n)*)^[ \t]*(?:async )?def {pattern}", source, re.M)
        if found is None or not _SKIPPED.search(found.group(1)):
            return False
    return True


def test_conformance_names_tests_that_exist() -> None:
    refs = references(DOC.read_text(encoding="utf-8"))
    assert len(refs) > 50  # the patterns still read the table
    missing = [problem for ref in refs for problem in _problems(ref)]
    assert missing == [], f"docs/conformance.md names tests that do not exist: {missing}"


def test_every_requirement_row_has_a_mark() -> None:
    table = rows()
    assert len(table) > 90  # the three pages' tables are still read
    unmarked = [f"#{r.number} {r.requirement[:60]}" for r in table if not r.mark.startswith(MARKS)]
    assert unmarked == [], f"rows of docs/conformance.md without ✅, ◐, ✗ or n/a: {unmarked}"


def test_every_done_row_names_a_test_that_runs() -> None:
    unproven = []
    for row in rows():
        if not row.mark.startswith("✅"):
            continue
        refs = [ref for ref in references(row.tests) if not _problems(ref) and not _skipped(ref)]
        if not refs and not KIT.search(row.tests):
            unproven.append(f"#{row.number} {row.requirement[:60]}")
    assert unproven == [], f"rows marked ✅ that name no existing, running test: {unproven}"


def test_every_partial_missing_or_not_applicable_row_says_why() -> None:
    silent = [
        f"#{r.number} {r.requirement[:60]}"
        for r in rows()
        if r.mark.startswith(("◐", "✗", "n/a")) and len(r.mark) < 40
    ]
    assert silent == [], f"rows marked ◐, ✗ or n/a that do not say why (in the mark's cell): {silent}"


def test_the_checks_catch_what_they_are_for() -> None:
    """The checks above, on rows written to break them (so none of them passes by reading nothing)."""
    assert references("C/test_gates.py::test_a, ::test_b_…; tests/test_x.py") == [
        Ref("packages/graphmind-core/tests/test_gates.py", ("test_a", "test_b_.*")),
        Ref("tests/test_x.py", ()),
    ]
    assert references("`packages/graphmind-mcp/tests/test_label.py::test_y`") == [
        Ref("packages/graphmind-mcp/tests/test_label.py", ("test_y",))
    ]
    assert _problems(Ref("tests/test_conformance_rows.py", ("test_no_such_test",))) == [
        "tests/test_conformance_rows.py::test_no_such_test"
    ]
    assert _problems(Ref("tests/test_conformance_rows.py", ("test_every_done_row_.*",))) == []
    assert not _skipped(
        Ref("tests/test_conformance_rows.py", ("test_every_done_row_names_a_test_that_runs",))
    )
