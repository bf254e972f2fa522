"""Memory is bounded on both sides: the hub's ingest holds a byte budget, the app's unsent backlog is
its ring. Budgets (docs/reliability.md): hub RSS under HUB_BUDGET_MB with any number of 500 KB
events; an app in a tight loop under APP_BUDGET_MB above its start."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, rss_mb, scaled

HUB_BUDGET_MB = 400
APP_BUDGET_MB = 150
BIG_EVENTS = scaled(600, 8000)
LOOP_SECONDS = scaled(3, 10)


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.faults
def test_big_events_keep_the_hub_under_its_memory_budget(hub: HubProcess) -> None:
    assert hub.proc is not None
    pid = hub.proc.pid
    idle = rss_mb(pid)
    blob = "x" * (500 * 1024)
    with connect(hub.ingest_url, max_size=None, compression=None, open_timeout=5) as ws:
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": 1,
                    "app": "big",
                    "clientId": "big-1",
                    "sdk": {"name": "t", "version": "0"},
                    "pid": 0,
                }
            )
        )
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
        started = time.perf_counter()
        for seq in range(1, BIG_EVENTS + 1):
            ws.send(
                f'{{"type":"node.started","runId":"big-run","seq":{seq},"ts":1,"nodeId":"tool:t",'
                f'"instanceId":"i{seq}","kind":"tool","name":"t","input":"{blob}"}}'
            )
        elapsed = time.perf_counter() - started
    wait_for(
        lambda: hub.api("GET", "/api/runs/big-run")[1].get("eventCount") == BIG_EVENTS,
        120,
        "every event stored",
    )
    peak = _hwm_mb(pid)
    after = rss_mb(pid)
    figure(
        f"hub RSS, {BIG_EVENTS:,} events of 500 KB",
        f"idle {idle:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB "
        f"({BIG_EVENTS * 0.5 / elapsed:.0f} MB/s in)",
    )
    assert peak < HUB_BUDGET_MB, peak


APP = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import graphmind

    def rss():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    client = graphmind.Client(app="tight", url=sys.argv[1])
    assert client.ready(5)
    tool = client.wrap(lambda q, blob: len(blob), name="search")
    before = rss()
    peak = before
    deadline = time.monotonic() + float(sys.argv[2])
    calls = 0
    with client.run("tight"):
        while time.monotonic() < deadline:
            tool(f"q{calls}", "x" * 1000)  # distinct args: identical calls in a row would trip the loop guard
            calls += 1
            if calls % 5000 == 0:
                peak = max(peak, rss())
    peak = max(peak, rss())
    stats = client.stats()
    print(json.dumps({"before": before, "peak": peak, "calls": calls, "stats": stats}))
""")


@pytest.mark.faults
def test_an_app_in_a_tight_loop_stays_under_its_memory_budget(hub: HubProcess, tmp_path: Path) -> None:
    script = tmp_path / "tight.py"
    script.write_text(APP)
    proc = subprocess.run(
        [sys.executable, str(script), hub.ingest_url, str(LOOP_SECONDS)],
        capture_output=True,
        text=True,
        timeout=LOOP_SECONDS + 60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    grown = out["peak"] - out["before"]
    stats = out["stats"]
    figure(
        f"app RSS, {LOOP_SECONDS} s tight loop",
        f"{out['before']:.0f} MB -> peak {out['peak']:.0f} MB "
        f"(+{grown:.0f} MB; {out['calls']:,} calls, {stats['events']:,} events, {stats['dropped']:,} dropped "
        f"and counted, {stats['unsent']:,} unsent at the end)",
    )
    assert grown < APP_BUDGET_MB, out
    assert (
        stats["unsent"] <= 5000 + 256
    )  # (+ the batch being written) the unsent backlog is the ring: bounded, whatever the loop does
