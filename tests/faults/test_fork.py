"""Fork safety (issue 29): a child of an attached app gets its own clientId, connection and ring; a
breakpoint in the child holds and is answered through the API; its events are stored under its own
clientId; the parent's held gate stays held (the child's exit does not cut its connection) until
answered. Both `os.fork()` and multiprocessing's fork start method."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure


def _held(hub: HubProcess) -> list[dict[str, Any]]:
    return list(hub.api("GET", "/api/gates")[1]["gates"])


def _child_work(client: graphmind.Client) -> None:
    """What the child runs: a breakpointed call, answered from the test through the API."""
    step = client.wrap(lambda x: x + 1, name="in_child")
    with client.run("child-run"):
        assert step(1) == 2
    client.dispose()


def _parent_holding(client: graphmind.Client) -> tuple[threading.Thread, list[Any]]:
    held_tool = client.wrap(lambda: "parent ran", name="in_parent")
    out: list[Any] = []

    def body() -> None:
        with client.run("parent-run"):
            out.append(held_tool())

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, out


@pytest.mark.parametrize("how", ["os.fork", "multiprocessing"])
def test_a_forked_child_holds_at_its_own_breakpoint_and_leaves_the_parents_gate_held(
    hub: HubProcess, how: str
) -> None:
    breakpoints = [
        {"nodeId": "tool:in_parent", "gate": "before"},
        {"nodeId": "tool:in_child", "gate": "before"},
    ]
    assert hub.api("PUT", "/api/debug", {"breakpoints": breakpoints})[0] == 200
    client = graphmind.Client(app="forking", url=hub.ingest_url)
    try:
        assert client.ready(5)
        thread, out = _parent_holding(client)
        parent_gate = wait_for(lambda: _held(hub), 10, "the parent's gate held")[0]
        if how == "os.fork":
            pid = os.fork()
            if pid == 0:  # the child: never return into pytest
                code = 1
                try:
                    _child_work(client)
                    code = 0
                finally:
                    os._exit(code)
        else:
            proc = multiprocessing.get_context("fork").Process(target=_child_work, args=(client,))
            proc.start()
        child_gate = wait_for(
            lambda: next((g for g in _held(hub) if g["nodeId"] == "tool:in_child"), None),
            15,
            "the child's gate",
        )
        assert child_gate["runId"] != parent_gate["runId"]
        status, _ = hub.api("POST", f"/api/gates/{child_gate['gateId']}", {"action": "continue"})
        assert status == 200
        if how == "os.fork":
            _, wait_status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(wait_status) == 0
        else:
            proc.join(20)
            assert proc.exitcode == 0
        runs = {r["name"]: r for r in hub.api("GET", "/api/runs")[1]["runs"]}
        child_run = wait_for(
            lambda: (
                (r := hub.api("GET", f"/api/runs/{child_gate['runId']}")[1]).get("status") == "finished" and r
            ),
            10,
            "the child's run finished",
        )
        assert child_run["clientId"] != client.client_id
        assert child_run["eventCount"] == 6  # run.started, node.started, paused, resumed, finished x2
        # The parent's gate is still held after the child exited: its connection was never touched.
        assert [g["gateId"] for g in _held(hub)] == [parent_gate["gateId"]]
        assert client.attached
        assert "parent-run" in runs and runs["parent-run"]["clientId"] == client.client_id
        status, _ = hub.api("POST", f"/api/gates/{parent_gate['gateId']}", {"action": "continue"})
        assert status == 200
        thread.join(10)
        assert out == ["parent ran"]
        figure(f"fork ({how})", "child held and answered; parent's gate held until answered")
    finally:
        client.dispose()


def _fork_under_calling_threads(client: graphmind.Client, forks: int, child_calls: int) -> dict[str, int]:
    """`forks` children forked one after another while 4 threads keep making gated calls through
    `client` (identical arguments, so the loop guard counts and warns: its lock is taken on every
    call). Each child makes `child_calls` gated calls in a run, disposes its client and exits 0; a
    child still running after 30 s is ended by SIGALRM (its default action: no handler of ours can
    be stuck) and counted as hung."""
    tool = client.wrap(lambda x: x, name="threaded")
    stop = threading.Event()

    def caller(i: int) -> None:
        while not stop.is_set():
            tool({"same": "arguments"})

    threads = [threading.Thread(target=caller, args=(i,), daemon=True) for i in range(4)]
    for thread in threads:
        thread.start()
    children: list[int] = []
    try:
        for _ in range(forks):
            pid = os.fork()
            if pid == 0:  # the child: never return into pytest
                code = 1
                try:
                    signal.signal(signal.SIGALRM, signal.SIG_DFL)
                    signal.alarm(30)
                    with client.run("forked-child"):
                        for n in range(child_calls):
                            tool({"child": n})
                    client.dispose()
                    code = 0
                finally:
                    os._exit(code)
            children.append(pid)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    outcome = {"ok": 0, "hung": 0, "failed": 0}
    for pid in children:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        outcome["ok" if code == 0 else "hung" if code == -signal.SIGALRM else "failed"] += 1
    return outcome


def test_100_forks_under_4_calling_threads_never_hang_without_a_hub() -> None:
    # A port nothing listens on: the client is enabled and detached, as an app with no hub running.
    client = graphmind.Client(app="forking", url="ws://127.0.0.1:1", enabled=True)
    try:
        outcome = _fork_under_calling_threads(client, 100, 5)
    finally:
        client.dispose()
    figure("100 forks under 4 calling threads, no hub", outcome)
    assert outcome == {"ok": 100, "hung": 0, "failed": 0}


@pytest.mark.faults
def test_forks_under_4_calling_threads_never_hang_attached(hub: HubProcess) -> None:
    forks = 100
    # The loop guard warns rather than holds: a held thread would stop calling (it still takes the
    # guard's lock on every call).
    client = graphmind.Client(app="forking", url=hub.ingest_url, loop_guard={"mode": "warn"})
    try:
        assert client.ready(5)
        outcome = _fork_under_calling_threads(client, forks, 5)
    finally:
        client.dispose()
    figure(f"{forks} forks under 4 calling threads, attached", outcome)
    assert outcome == {"ok": forks, "hung": 0, "failed": 0}
    # Every child's run reached the hub, finished, under the child's own clientId.
    runs = wait_for(
        lambda: (
            (r := hub.api("GET", "/api/runs?app=forking&limit=1000")[1]["runs"])
            and len([x for x in r if x["name"] == "forked-child"]) == forks
            and r
        ),
        20,
        "every child's run",
    )
    children = [r for r in runs if r["name"] == "forked-child"]
    assert {r["status"] for r in children} == {"finished"}
    assert len({r["clientId"] for r in children}) == forks
