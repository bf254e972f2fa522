"""Children that end past `atexit` (docs/reliability.md, "Forked children and os._exit").

A `multiprocessing` child leaves by `os._exit` once its target returns, whatever the start method:
its events died unsent and uncounted (of 1,608 events, a `fork` child stored 456-689, a
`forkserver` one 239-295; here none at all of 808). The exit flush now runs from multiprocessing's
own exit function there. A bare `os.fork()` child that ends by `os._exit` cannot be flushed by
anything: with `graphmind.dispose()` before `os._exit` (the documented line) everything arrives; without
it, what it had sent is stored and its run is marked abandoned with the reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, scaled

CHILDREN = 4
CALLS = scaled(100, 400)
PER_RUN = 2 + 2 * CALLS  # run.started, node.started + node.finished per call, run.finished

SCRIPT = textwrap.dedent("""
    import multiprocessing, os, sys
    import graphmind as gm

    HOW, CLIENT, URL, CALLS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if CLIENT == "inherited":  # built at import: forked into (or re-made in) every child
        gm.configure(app="mp-children", url=URL)

    def work(i):
        if CLIENT == "own":  # the child's own client, made in the child
            gm.configure(app="mp-children", url=URL)
        step = gm.wrap(lambda x: x, name="step")
        with gm.run(f"child-{i}"):
            for n in range(CALLS):
                step(n)

    if __name__ == "__main__":
        ctx = multiprocessing.get_context(HOW)
        procs = [ctx.Process(target=work, args=(i,)) for i in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        sys.exit(max(abs(p.exitcode or 0) for p in procs))
""")


def _children(hub: HubProcess, app: str) -> list[dict[str, Any]]:
    runs = hub.api("GET", f"/api/runs?app={app}&limit=1000")[1]["runs"]
    return [r for r in runs if r["name"].startswith("child-")]


@pytest.mark.parametrize(
    ("how", "client"),
    [("fork", "inherited"), ("forkserver", "inherited"), ("fork", "own"), ("spawn", "inherited")],
)
def test_every_event_of_a_multiprocessing_child_is_stored_and_its_run_finished(
    hub: HubProcess, tmp_path: Path, how: str, client: str
) -> None:
    script = tmp_path / "children.py"
    script.write_text(SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), how, client, hub.ingest_url, str(CALLS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    # The children flushed before they exited: everything is in the hub's hands once the parent
    # returns (a barrier read, `/api/runs`, shows what was received).
    runs = _children(hub, "mp-children")
    stored = sum(r["eventCount"] for r in runs)
    figure(f"multiprocessing {how} ({client} client)", f"{stored} of {CHILDREN * PER_RUN} events stored")
    assert sorted(r["name"] for r in runs) == [f"child-{i}" for i in range(CHILDREN)]
    assert [(r["status"], r["eventCount"], r["dropped"]["count"]) for r in runs] == [
        ("finished", PER_RUN, 0)
    ] * CHILDREN
    assert "[graphmind]" not in proc.stderr  # no loss to report


def _fork_child(hub: HubProcess, dispose: bool) -> tuple[str, int]:
    """A bare os.fork() child of an attached app: a run of CALLS gated calls, then os._exit, after
    `graphmind.dispose()` or not. Without it the child waits until the hub has its run, so what
    follows is the hub's side of a connection that ended with no goodbye. Returns (its run's name,
    exit code)."""
    client = graphmind.Client(app="exit-children", url=hub.ingest_url)
    name = f"child-{'disposed' if dispose else 'cut'}"
    try:
        assert client.ready(5)
        pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            code = 1
            try:
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
                signal.alarm(60)
                step = client.wrap(lambda x: x, name="step")
                with client.run(name):
                    for n in range(CALLS):
                        step(n)
                    if not dispose:
                        wait_for(lambda: _children(hub, "exit-children"), 20, "the child's run on the hub")
                if dispose:
                    client.dispose()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        return name, os.waitstatus_to_exitcode(status)
    finally:
        client.dispose()


def test_an_os_exit_child_that_disposes_first_delivers_every_event(hub: HubProcess) -> None:
    name, code = _fork_child(hub, dispose=True)
    assert code == 0
    run = wait_for(
        lambda: (r := _children(hub, "exit-children")) and r[0]["status"] == "finished" and r[0],
        10,
        "the child's run finished",
    )
    assert (run["name"], run["eventCount"], run["dropped"]["count"]) == (name, PER_RUN, 0)
    figure("os.fork child, dispose() then os._exit", f"{run['eventCount']} of {PER_RUN} events stored")


@pytest.fixture
def quick_hub(tmp_path: Path, home: Path) -> Any:
    """A hub that gives a disconnected app 0.5 s to come back (GRAPHMIND_ABANDON_GRACE_MS)."""
    with HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_ABANDON_GRACE_MS": "500"}) as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


def test_an_os_exit_child_without_dispose_leaves_its_run_abandoned_with_the_reason(
    quick_hub: HubProcess,
) -> None:
    name, code = _fork_child(quick_hub, dispose=False)
    assert code == 0
    run = wait_for(
        lambda: (r := _children(quick_hub, "exit-children")) and r[0]["status"] == "abandoned" and r[0],
        15,
        "the child's run abandoned",
    )
    assert run["name"] == name
    reason = run["abandonedReason"]
    assert "ended without a goodbye" in reason and "os._exit" in reason
    assert "graphmind.dispose() before os._exit" in reason
    one = quick_hub.api("GET", f"/api/runs/{run['id']}")[1]
    assert one["abandonedReason"] == reason
    figure("os.fork child, os._exit without dispose()", f"{run['eventCount']} stored; abandoned: {reason}")


def test_a_run_left_open_by_a_client_that_closed_is_abandoned_saying_so(quick_hub: HubProcess) -> None:
    """The other reason: the app said goodbye (dispose) while a run was still open elsewhere."""
    client = graphmind.Client(app="exit-children", url=quick_hub.ingest_url)
    try:
        assert client.ready(5)
        scope = client.run("child-open")
        scope.__enter__()  # never exited: dispose() finishes only the implicit run
        client.dispose()
    finally:
        client.dispose()
    run = wait_for(
        lambda: (r := _children(quick_hub, "exit-children")) and r[0]["status"] == "abandoned" and r[0],
        15,
        "the open run abandoned",
    )
    assert run["abandonedReason"].startswith("its app closed its connection without finishing this run")
