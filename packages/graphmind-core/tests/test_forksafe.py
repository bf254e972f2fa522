"""Every lock core holds is unlocked in a forked child (_base/forksafe.py).

A lock another thread held at `os.fork()` stays held in the child forever: the child's first gated
call hung (the loop guard's lock, among others). tests/faults/test_fork.py forks under calling
threads; these tests pin the mechanism: no lock of core is made anywhere but forksafe, and a lock
held by another thread at the fork is free in the child.
"""

from __future__ import annotations

import ast
import os
import signal
import threading
from pathlib import Path

import pytest

import graphmind
from graphmind._base import forksafe

ROOT = Path(graphmind.__file__).parent
PRIMITIVES = {
    "Lock",
    "RLock",
    "Condition",
    "Event",
    "Semaphore",
    "BoundedSemaphore",
    "Barrier",
    "allocate_lock",
}

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")


def _annotations(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside annotations (`_cond: threading.Condition` names a type, makes no lock)."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) or (isinstance(node, ast.arg) and node.annotation is not None):
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            roots.append(node.returns)
    return {id(n) for root in roots for n in ast.walk(root)}


def _made_outside_forksafe(root: Path) -> list[str]:
    """Every `threading.<primitive>` core names outside annotations (called, or handed over as a
    factory) and outside forksafe.py. graphmind.testing is left out: its fake hubs run in a test,
    never in a forked app."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("testing/") or rel == "_base/forksafe.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _annotations(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("threading", "_thread"):
                found += [f"{rel}:{node.lineno} from {node.module} import {a.name}" for a in node.names]
            elif (
                isinstance(node, ast.Attribute)
                and id(node) not in skip
                and isinstance(node.value, ast.Name)
                and node.value.id in ("threading", "_thread")
                and node.attr in PRIMITIVES
            ):
                found.append(f"{rel}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_every_lock_of_core_is_made_by_forksafe() -> None:
    assert _made_outside_forksafe(ROOT) == [], "make these with graphmind._base.forksafe"


def test_the_scan_finds_a_lock_made_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "_x").mkdir()
    (tmp_path / "_x" / "m.py").write_text(
        "import threading\nL = threading.RLock()\nE: threading.Event\n"
        "def f(c: threading.Condition) -> threading.Lock:\n    return field(default_factory=threading.Lock)\n"
    )
    assert _made_outside_forksafe(tmp_path) == ["_x/m.py:2 threading.RLock", "_x/m.py:5 threading.Lock"]


def test_the_stdlib_still_has_the_reinit_forksafe_relies_on() -> None:
    """`_at_fork_reinit` is private to CPython: if it ever goes, this says so (not a silent hang)."""
    for obj in (forksafe.lock(), forksafe.rlock(), forksafe.condition(), forksafe.event()):
        assert callable(getattr(obj, "_at_fork_reinit", None)), type(obj)


@needs_fork
def test_a_lock_held_by_another_thread_at_the_fork_is_free_in_the_child() -> None:
    """Each kind forksafe makes, held by another thread at the fork; the child takes each with a
    timeout (SIGALRM, at its default action, ends a child that hangs all the same)."""
    lock, rlock, cond, event = forksafe.lock(), forksafe.rlock(), forksafe.condition(), forksafe.event()
    ready, done = threading.Event(), threading.Event()

    def holder() -> None:
        with lock, rlock, cond, event._cond:  # type: ignore[attr-defined]
            ready.set()
            done.wait(10)

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(10)
            ok = lock.acquire(timeout=2) and rlock.acquire(timeout=2) and cond.acquire(timeout=2)
            event.set()  # takes the event's own condition
            os._exit(0 if ok and event.is_set() else 3)
    finally:
        done.set()
        thread.join(10)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@needs_fork
def test_the_loop_guards_lock_held_at_the_fork_is_free_in_the_child() -> None:
    """The lock the issue's hung children waited on: taken by a watched call in another thread."""
    client = graphmind.Client(app="forksafe", url="ws://127.0.0.1:1", enabled=True)
    try:
        guard = client._loop_guard
        taken, release = threading.Event(), threading.Event()

        def holder() -> None:
            with guard._lock:
                taken.set()
                release.wait(10)

        thread = threading.Thread(target=holder, daemon=True)
        thread.start()
        assert taken.wait(10)
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(10)
            tool = client.wrap(lambda x: x, name="after_fork")
            os._exit(0 if tool(1) == 1 and guard._lock.acquire(timeout=2) else 3)
        release.set()
        thread.join(10)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the child hung on the loop guard's lock"
    finally:
        client.dispose()
