"""Nothing lost at the end: the exit flush of a short script (issue 11) and dispose() after a burst
(issue 19), both the one bounded flush: wait while the hub keeps taking events, give up after
FLUSH_IDLE_S without progress, report what could not be sent."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import graphmind
from graphmind._wire.transport import FLUSH_IDLE_S
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, scaled

BURST = scaled(20_000, 100_000)

THREE_LINES = textwrap.dedent("""
    import graphmind as gm, sys
    gm.configure(app="three-lines", url=sys.argv[1])
    with gm.run("short"): gm.wrap(lambda x: x * 2, name="double")(21)
""")


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "three_lines.py"
    path.write_text(THREE_LINES)
    return path


@pytest.mark.faults
def test_a_three_line_script_exits_and_its_run_is_finished_with_every_event(
    hub: HubProcess, tmp_path: Path
) -> None:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(_script(tmp_path)), hub.ingest_url], capture_output=True, text=True, timeout=30
    )
    took = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr
    runs = wait_for(lambda: hub.api("GET", "/api/runs?app=three-lines")[1]["runs"], 5, "the script's run")
    run = wait_for(
        lambda: (r := hub.api("GET", f"/api/runs/{runs[0]['id']}")[1])["status"] == "finished" and r,
        5,
        "the run to be finished",
    )
    events = hub.api("GET", f"/api/runs/{run['id']}/events")[1]["events"]
    assert [e["type"] for e in events] == ["run.started", "node.started", "node.finished", "run.finished"]
    assert run["eventCount"] == 4 and run["status"] == "finished"
    figure("three-line script against a live hub", f"exits in {took:.2f} s, run finished with 4 of 4 events")


@pytest.mark.faults
def test_a_script_exits_within_the_bound_when_the_hub_is_stopped(hub: HubProcess, tmp_path: Path) -> None:
    script = tmp_path / "stopped.py"
    script.write_text(
        THREE_LINES.replace(
            'with gm.run("short")',
            'import os, signal; gm.ready(5)\nos.kill(int(sys.argv[2]), signal.SIGSTOP)\nwith gm.run("short")',
        )
    )
    assert hub.proc is not None
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(script), hub.ingest_url, str(hub.proc.pid)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        took = time.perf_counter() - started
    finally:
        hub.proc.send_signal(signal.SIGCONT)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    figure(
        "exit with the hub SIGSTOPped",
        f"script exits in {took:.2f} s (flush gives up after {FLUSH_IDLE_S} s without progress)",
    )
    assert took < 6.0  # interpreter start + the flush bound (1 s without progress) + the socket cut


@pytest.mark.faults
def test_dispose_after_a_burst_stores_everything_it_does_not_count_as_dropped(hub: HubProcess) -> None:
    client = graphmind.Client(app="burst", url=hub.ingest_url)
    assert client.ready(5)
    tool = client.wrap(lambda i: i, name="burst")
    started = time.perf_counter()
    with client.run("burst"):
        for i in range(BURST // 2 - 1):
            tool(i)
    emitted_in = time.perf_counter() - started
    client.dispose()
    flushed_in = time.perf_counter() - started - emitted_in
    stats = client.stats()
    emitted, dropped = stats["events"], stats["dropped"]
    stored = wait_for(
        lambda: (
            (n := hub.api("GET", "/api/runs?app=burst")[1]["runs"][0]["eventCount"]) >= emitted - dropped
            and n
        ),
        30,
        "every event dispose() sent",
    )
    figure(
        f"{emitted:,} events then dispose()",
        f"{stored:,} stored, {dropped:,} dropped and counted "
        f"(emitted in {emitted_in:.1f} s, dispose took {flushed_in:.1f} s)",
    )
    assert stored + dropped == emitted
    assert stats["unsent"] == 0
