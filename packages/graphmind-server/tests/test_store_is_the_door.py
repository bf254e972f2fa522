"""`store/` is the hub's one door to the database: no module outside it runs SQL (docs/architecture.md,
"The hub's module map"). Readers outside the hub use store/readonly.py and store/reads.py;
`graphmind import` writes through store/importing.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import graphmind_server

HUB = Path(graphmind_server.__file__).parent
EXECUTE = {"execute", "executemany", "executescript"}
# A statement in a string (an f-string's parts too): a query or a change anywhere in it, a
# transaction or a pragma at its start (so prose that says "begin" or an HTTP DELETE is no hit).
STATEMENT = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b", re.S
)
LEADING = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA|CREATE|ALTER|DROP)\b")


def sql_in(source: str) -> list[str]:
    """Where `source` runs SQL: each `.execute(...)`-like call and each string holding a statement."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (STATEMENT.search(node.value) or LEADING.match(node.value))
        ):
            found.append(f"line {node.lineno}: {node.value.strip()[:60]!r}")
    return found


def test_no_hub_module_outside_store_runs_sql() -> None:
    offenders = {
        str(path.relative_to(HUB)): hits
        for path in sorted(HUB.rglob("*.py"))
        if path.relative_to(HUB).parts[0] != "store" and (hits := sql_in(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "SQL outside store/ (give store/ a function for it): " + repr(offenders)


def test_the_store_itself_is_seen_running_sql() -> None:
    assert sql_in((HUB / "store" / "reads.py").read_text(encoding="utf-8"))
    assert sql_in((HUB / "store" / "readonly.py").read_text(encoding="utf-8"))


def test_what_counts_as_sql() -> None:
    assert sql_in('conn.execute("BEGIN")')
    assert sql_in("c.executemany(q, rows)")
    assert sql_in('q = f"SELECT id FROM runs {where} LIMIT 5"')
    assert sql_in('q = "UPDATE runs SET status = ? WHERE id = ?"')
    assert sql_in('q = "DELETE FROM runs"')
    assert sql_in('q = "PRAGMA busy_timeout = 0"')
    assert not sql_in('Route("/api/runs/{id}", f, methods=["GET", "DELETE"])')
    assert not sql_in('"""Select the runs to export; begin with the newest."""')
    assert not sql_in('if request.method == "DELETE":\n    pass')
