"""Benchmark the hub: events persisted per second from N concurrent apps, and the gate round trip.

    uv run python bench/hub.py [--apps 8] [--events 10000] [--gates 500]

Starts a real hub (`python -m graphmind_server serve --port 0`) on a temporary database. Apps are
raw protocol-v1 WebSocket clients (one thread each) sending pre-encoded node events as fast as
they can; "persisted" means committed to SQLite and visible through the API.

The gate round trip is a held call answered through the API: the viewer sees `gate.held` on the
live feed, POSTs `continue`, the app gets `gate.resolve` and answers `exec.resumed`, and the POST
returns 200. Targets (issue 4): 20,000 events/s, p99 under 5 ms on loopback.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from graphmind_server.testing import FakeApp, HubProcess


def _frames(app_index: int, count: int) -> list[str]:
    run_id = f"bench-{app_index}"
    frames = [
        json.dumps(
            {
                "type": "run.started",
                "seq": 1,
                "ts": time.time() * 1000,
                "runId": run_id,
                "name": "bench",
                "nodeId": "agent:bench",
                "instanceId": run_id,
                "kind": "agent",
            }
        )
    ]
    payload = json.dumps({"query": "x" * 100})
    for seq in range(2, count + 1):
        kind = "node.started" if seq % 2 == 0 else "node.finished"
        frames.append(
            f'{{"type":"{kind}","seq":{seq},"ts":{time.time() * 1000:.2f},"runId":"{run_id}",'
            f'"nodeId":"tool:search","instanceId":"i{seq // 2}","kind":"tool","name":"search",'
            f'"input":{payload},"output":null,"durationMs":0.5}}'
        )
    return frames


def _send_all(url: str, app_index: int, frames: list[str], ready: threading.Barrier) -> None:
    with connect(url, max_size=None, compression=None) as ws:
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": 1,
                    "app": f"bench-{app_index}",
                    "clientId": f"bench-client-{app_index}",
                    "pid": 0,
                    "sdk": {"name": "bench", "version": "0"},
                }
            )
        )
        ws.recv(timeout=5)
        ready.wait()
        for frame in frames:
            ws.send(frame)


def bench_ingest(hub: HubProcess, apps: int, per_app: int) -> float:
    all_frames = [_frames(i, per_app) for i in range(apps)]
    ready = threading.Barrier(apps + 1)
    threads = [
        threading.Thread(target=_send_all, args=(hub.ingest_url, i, all_frames[i], ready))
        for i in range(apps)
    ]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    total = apps * per_app

    # Poll every 50 ms (not faster: the polls would compete with the apps for the hub's CPU).
    deadline = started + 300
    while True:
        runs = hub.api("GET", "/api/runs?limit=1000")[1]["runs"]
        if sum(r["eventCount"] for r in runs) == total:
            break
        if time.perf_counter() > deadline:
            raise SystemExit(f"the hub did not persist {total} events within 300 s")
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    for t in threads:
        t.join()
    return total / elapsed


class TimedApp(FakeApp):
    """A FakeApp that notes when each gate.resolve reaches it: the moment the held call resumes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.resolved_at: list[float] = []
        super().__init__(*args, **kwargs)

    def _on_frame(self, frame: dict[str, Any]) -> None:
        if frame.get("type") == "gate.resolve":
            self.resolved_at.append(time.perf_counter())
        super()._on_frame(frame)


def bench_gates(hub: HubProcess, count: int) -> tuple[list[float], list[float]]:
    """(POST sent -> app has the answer, POST sent -> POST answered 200) in seconds, per gate."""
    app = TimedApp(hub.ingest_url, app="bench-gates", auto_resume=True)
    conn_id = app.welcome["connectionId"]
    app.run_started("gates")
    http_conn = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=10)
    resumed: list[float] = []
    confirmed: list[float] = []
    body = json.dumps({"action": "continue"})
    with connect(hub.live_url) as live:
        live.recv(timeout=5)  # hello
        for i in range(count):
            gate_id = f"{conn_id}-g{i}"
            app.hold("gates", "tool:search", f"i{i}", gate_id=f"g{i}")
            while True:  # what a viewer waits for before the person can click
                frame = json.loads(live.recv(timeout=5))
                if frame["type"] == "gate.held" and frame["gate"]["gateId"] == gate_id:
                    break
            started = time.perf_counter()
            http_conn.request("POST", f"/api/gates/{gate_id}", body, {"Content-Type": "application/json"})
            response = http_conn.getresponse()
            response.read()
            done = time.perf_counter()
            assert response.status == 200, response.status
            confirmed.append(done - started)
            resumed.append(app.resolved_at[-1] - started)
    http_conn.close()
    app.close()
    return resumed, confirmed


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=8)
    parser.add_argument("--events", type=int, default=10000, help="events per app")
    parser.add_argument("--gates", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with HubProcess(Path(tmp) / "bench.db") as hub:
            rate = bench_ingest(hub, args.apps, args.events)
            print(
                f"ingest: {args.apps} apps x {args.events} events: {rate:,.0f} events/s persisted (target 20,000)"
            )
        with HubProcess(Path(tmp) / "gates.db") as hub:
            bench_gates(hub, 50)  # warm-up
            resumed, confirmed = bench_gates(hub, args.gates)
            print(
                f"gate round trip ({args.gates} gates): app resumed p50 {_pct(resumed, 50):.2f} ms, "
                f"p99 {_pct(resumed, 99):.2f} ms; POST answered (app confirmed) p50 {_pct(confirmed, 50):.2f} ms, "
                f"p99 {_pct(confirmed, 99):.2f} ms, mean {statistics.mean(confirmed) * 1000:.2f} ms (target p99 < 5 ms)"
            )


if __name__ == "__main__":
    main()
