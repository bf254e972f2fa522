"""The reliability figures of docs/reliability.md, measured against real hub processes.

    uv run python bench/faults.py                 # every figure, full size
    uv run python bench/faults.py restart dispose # some of them

Works with an older graphmind-core on PYTHONPATH too (it only uses `stats()` keys every version
has), which is how the "before" column was measured. Figures:

- restart: events lost after a hub SIGKILL + immediate restart at 2,000 events/s (default options)
- hub_rss: hub peak RSS while 8,000 events of 500 KB arrive (BIG_EVENTS to change)
- app_rss: app RSS growth in a 10 s tight loop of gated calls, attached
- dispose: events stored after 100,000 events + dispose()
- exit: how long a script takes to exit when its hub is SIGSTOPped, and whether its run arrives
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import graphmind
from graphmind_server.testing import HubProcess, wait_for

BIG_EVENTS = int(os.environ.get("BIG_EVENTS", "8000"))


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def runs(hub: HubProcess, app: str) -> list[dict[str, Any]]:
    return list(hub.api("GET", f"/api/runs?app={app}&limit=1000")[1]["runs"])


def restart(tmp: Path) -> str:
    hub = HubProcess(tmp / "restart.db", env={"GRAPHMIND_ABANDON_GRACE_MS": "120000"})
    client = graphmind.Client(app="restart", url=hub.ingest_url)
    try:
        assert client.ready(5)
        tool = client.wrap(lambda i: i, name="tick")
        seconds, rate = 25, 1000

        def emit() -> None:
            with client.run("steady"):
                t0 = time.perf_counter()
                for i in range(seconds * rate):
                    due = t0 + i / rate
                    if due > time.perf_counter():
                        time.sleep(due - time.perf_counter())
                    tool(i)

        t = threading.Thread(target=emit)
        t.start()
        time.sleep(5)
        hub.kill()
        hub.start(hub.port)
        t.join()
        client.dispose()
        emitted = client.stats()["events"]
        time.sleep(2)
        stored = sum(r["eventCount"] for r in runs(hub, "restart"))
        return f"{emitted - stored} of {emitted} lost (stats dropped={client.stats().get('dropped')})"
    finally:
        client.dispose()
        hub.stop()


def hub_rss(tmp: Path) -> str:
    from websockets.sync.client import connect

    hub = HubProcess(tmp / "rss.db")
    try:
        assert hub.proc is not None
        idle = rss_mb(hub.proc.pid)
        blob = "x" * (500 * 1024)
        with connect(hub.ingest_url, max_size=None, compression=None, open_timeout=5) as ws:
            ws.send(
                json.dumps(
                    {
                        "type": "hello",
                        "protocol": 1,
                        "app": "big",
                        "clientId": "big",
                        "sdk": {"name": "b", "version": "0"},
                        "pid": 0,
                    }
                )
            )
            ws.recv(timeout=5)
            for seq in range(1, BIG_EVENTS + 1):
                ws.send(
                    f'{{"type":"node.started","runId":"big","seq":{seq},"ts":1,"nodeId":"tool:t",'
                    f'"instanceId":"i{seq}","kind":"tool","name":"t","input":"{blob}"}}'
                )
        wait_for(lambda: hub.api("GET", "/api/runs/big")[1].get("eventCount") == BIG_EVENTS, 600, "stored")
        return (
            f"{BIG_EVENTS} x 500 KB: idle {idle:.0f} MB, peak {rss_mb(hub.proc.pid, 'VmHWM'):.0f} MB, "
            f"after {rss_mb(hub.proc.pid):.0f} MB"
        )
    finally:
        hub.stop()


APP = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import graphmind
    def rss():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    client = graphmind.Client(app="tight", url=sys.argv[1])
    client.ready(5)
    tool = client.wrap(lambda q, blob: len(blob), name="search")
    before = peak = rss(); calls = 0; deadline = time.monotonic() + float(sys.argv[2])
    with client.run("tight"):
        while time.monotonic() < deadline:
            tool(f"q{calls}", "x" * 1000); calls += 1
            if calls % 5000 == 0: peak = max(peak, rss())
    print(json.dumps({"before": before, "peak": max(peak, rss()), "calls": calls, "stats": client.stats()}))
    import os; os._exit(0)
""")


def app_rss(tmp: Path) -> str:
    hub = HubProcess(tmp / "app.db")
    try:
        script = tmp / "tight.py"
        script.write_text(APP)
        out = json.loads(
            subprocess.run(
                [sys.executable, str(script), hub.ingest_url, "10"],
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            ).stdout.splitlines()[-1]
        )
        s = out["stats"]
        return (
            f"{out['before']:.0f} MB -> peak {out['peak']:.0f} MB over 10 s ({out['calls']:,} calls, "
            f"{s['events']:,} events, dropped {s.get('dropped')}, unsent at the end {s.get('unsent', 'n/a')})"
        )
    finally:
        hub.stop()


def dispose(tmp: Path) -> str:
    hub = HubProcess(tmp / "dispose.db")
    client = graphmind.Client(app="burst", url=hub.ingest_url)
    try:
        assert client.ready(5)
        tool = client.wrap(lambda i: i, name="burst")
        with client.run("burst"):
            for i in range(49_999):
                tool(i)
        started = time.perf_counter()
        client.dispose()
        took = time.perf_counter() - started
        time.sleep(3)
        stored = sum(r["eventCount"] for r in runs(hub, "burst"))
        stats = client.stats()
        return (
            f"{stats['events']:,} emitted, {stored:,} stored, {stats.get('dropped')} counted as dropped, "
            f"dispose() took {took:.1f} s"
        )
    finally:
        hub.stop()


EXIT = textwrap.dedent("""
    import os, signal, sys
    import graphmind as gm
    gm.configure(app="exit", url=sys.argv[1]); gm.ready(5)
    if sys.argv[2] != "0":
        os.kill(int(sys.argv[2]), signal.SIGSTOP)
    with gm.run("short"):
        gm.wrap(lambda x: x * 2, name="double")(21)
""")


def exit_flush(tmp: Path) -> str:
    hub = HubProcess(tmp / "exit.db")
    try:
        script = tmp / "exit.py"
        script.write_text(EXIT)
        started = time.perf_counter()
        subprocess.run([sys.executable, str(script), hub.ingest_url, "0"], timeout=60, check=True)
        live = time.perf_counter() - started
        time.sleep(1)
        run = runs(hub, "exit")
        healthy = f"{run[0]['status']} with {run[0]['eventCount']} events" if run else "no run stored"
        assert hub.proc is not None
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(script), hub.ingest_url, str(hub.proc.pid)], timeout=60, check=True
        )
        stopped = time.perf_counter() - started
        hub.proc.send_signal(signal.SIGCONT)
        return f"hub up: exits in {live:.2f} s, run {healthy}; hub SIGSTOPped: exits in {stopped:.2f} s"
    finally:
        hub.stop()


FIGURES = {"restart": restart, "hub_rss": hub_rss, "app_rss": app_rss, "dispose": dispose, "exit": exit_flush}

if __name__ == "__main__":
    os.environ.setdefault("GRAPHMIND_HOME", tempfile.mkdtemp(prefix="graphmind-bench-"))
    wanted = sys.argv[1:] or list(FIGURES)
    with tempfile.TemporaryDirectory() as tmp_dir:
        for name in wanted:
            print(f"{name}: {FIGURES[name](Path(tmp_dir))}", flush=True)
