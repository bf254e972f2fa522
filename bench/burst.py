"""The burst figures of docs/reliability.md (issue 38), full size, against real hub processes.

    uv run python bench/burst.py            # everything: the fault tests at full size, then ingest
    uv run python bench/burst.py ingest     # only the hub's ingest rate

- tests/faults/test_burst.py with GRAPHMIND_FAULT_SCALE=full: one thread and one asyncio task each
  emitting 100,000 events with the default ring (5,000) then dispose(): stored, total time, worst
  single call, longest wait for room, the loop's longest tick, app RSS; a hub SIGSTOPped during a
  burst of 50,000 calls of 4 KB (and an asyncio one of 25,000): the drops after the stall, counted
  and shown on the run once the hub resumes.
- ingest: one app bursting pre-encoded batch frames of 2,048 events (the SDK's frames, app cost
  excluded) as fast as the hub reads them: events per second until every one is stored, and the
  hub's CPU time per event (user + system, from /proc: steadier than wall time on a shared machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.sync.client import connect

from graphmind import protocol as proto
from graphmind._hub_link import find_token
from graphmind_server.testing import HubProcess

ROOT = Path(__file__).resolve().parent.parent
INGEST_EVENTS = int(os.environ.get("INGEST_EVENTS", "200000"))


def faults_at_full_size() -> None:
    env = {**os.environ, "GRAPHMIND_FAULT_SCALE": "full"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/faults/test_burst.py", "-s", "-q", "-p", "no:randomly"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("[fault figure]"):
            print(line)
    print(f"[faults] pytest exit code {proc.returncode} (load average {os.getloadavg()[0]:.1f})")
    if proc.returncode:
        print(proc.stdout[-4000:], proc.stderr[-2000:])


def _frames(total: int) -> tuple[list[str], int]:
    frames, seq = [], 0
    while seq < total:
        texts = []
        for _ in range(1024):
            i = seq // 2
            node = {"runId": "r1", "nodeId": "tool:burst", "instanceId": f"abcd-{i:x}", "kind": "tool"}
            seq += 1
            texts.append(
                proto.encode(
                    {"type": "node.started", **node, "name": "burst", "parentInstanceId": "r1",
                     "input": {"i": i}, "seq": seq, "ts": 1796124778820.1653}
                )
            )  # fmt: skip
            seq += 1
            texts.append(
                proto.encode(
                    {"type": "node.finished", **node, "name": "burst", "output": i, "durationMs": 0.01,
                     "heldMs": 0, "seq": seq, "ts": 1796124778820.1653}
                )
            )  # fmt: skip
        frames.append(proto.batch(texts))
    return frames, seq


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ingest() -> None:
    frames, total = _frames(INGEST_EVENTS)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GRAPHMIND_HOME"] = str(Path(tmp) / "home")
        with HubProcess(Path(tmp) / "hub.db") as hub:
            assert hub.proc is not None
            token = find_token(hub.ingest_url)
            headers = {"Authorization": f"Bearer {token}"} if token else None
            with connect(hub.ingest_url, max_size=None, compression=None, additional_headers=headers) as ws:
                hello = {"type": "hello", "protocol": 1, "app": "rate", "clientId": "rate-1", "pid": 0}
                ws.send(json.dumps({**hello, "sdk": {"name": "bench", "version": "0"}}))
                json.loads(ws.recv(timeout=5))
                cpu0, started = _cpu_s(hub.proc.pid), time.perf_counter()
                for frame in frames:
                    ws.send(frame)
                while hub.api("GET", "/api/runs/r1")[1].get("eventCount", 0) < total:
                    time.sleep(0.02)
                took, cpu = time.perf_counter() - started, _cpu_s(hub.proc.pid) - cpu0
    print(
        f"[ingest] one app bursting {total:,} events in batch frames: all stored in {took:.2f} s "
        f"-> {total / took:,.0f} events/s; hub CPU {cpu / total * 1e6:.1f} us/event "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    wanted = sys.argv[1:] or ["faults", "ingest"]
    if "faults" in wanted:
        faults_at_full_size()
    if "ingest" in wanted:
        ingest()
