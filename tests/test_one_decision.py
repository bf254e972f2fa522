"""One place decides a gate action: every branch on a gate answer's action in core and the
adapters is in `graphmind/_node/decide.py`. The call loop, the stream loop, the replay gate and the
adapters that drive gates themselves read only what it decided (`GateAnswer.injects`, `retries`).
Read from the sources (AST): a comparison with an `action` (`action == ...`, `answer.action in
...`) or a `match` on one counts. The hub's API, which checks what a person may send, is not a gate's
decision and is not read here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "packages"
THE_PLACE = "graphmind-core/src/graphmind/_node/decide.py"


def _is_action(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "action") or (
        isinstance(node, ast.Attribute) and node.attr == "action"
    )


def action_branches(source: str) -> list[int]:
    """The lines of `source` that branch on a gate action."""
    lines = []
    for node in ast.walk(ast.parse(source)):  # every node kept has a line
        compares = (
            isinstance(node, ast.Compare)
            and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)  # `action is None`
            and any(_is_action(n) for n in (node.left, *node.comparators))
        )
        matches = isinstance(node, ast.Match) and (
            _is_action(node.subject) or (isinstance(node.subject, ast.Name) and node.subject.id == "answer")
        )
        if compares or matches:
            lines.append(getattr(node, "lineno", 0))
    return lines


def _sources() -> list[Path]:
    return sorted(
        path
        for pkg in ROOT.glob("graphmind-*")
        if pkg.name != "graphmind-server"
        for path in (pkg / "src").rglob("*.py")
    )


def test_every_branch_on_a_gate_action_is_in_one_module() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _sources()
        if (lines := action_branches(path.read_text(encoding="utf-8")))
    }
    assert set(found) == {THE_PLACE}, "branches on a gate action outside _node/decide.py: " + ", ".join(
        f"{p}:{lines}" for p, lines in found.items() if p != THE_PLACE
    )


def test_the_check_sees_each_form() -> None:
    assert action_branches("if answer.action == 'inject': pass") == [1]
    assert action_branches("x = 1\nif action in ('retry', 'inject'): pass") == [2]
    assert action_branches("if a.action != b: pass") == [1]
    assert action_branches("match answer:\n    case _: pass") == [1]
    assert action_branches("if answer.injects: pass") == []
