"""Where a process's first GraphMind call spends its time (issue 18's leftover), in fresh processes.

Each round starts one fresh Python process per case, interleaved, against one real hub
(`graphmind serve` on a loopback port) and a refused loopback port:

- `bare`: the same lambda, no GraphMind (the floor a process's first call of anything pays);
- `attached`: `gm.wrap(...)` then its first call with default options: the default client is made on
  first use, probes the loopback port, waits for the handshake (default `wait_for_attach`);
- `detached`: the same with nothing listening (the probe is refused, no wait).

Each process reports its phases: `import graphmind` (websockets included, unless the kill switch is
on), the default client's creation, the probe, the wait for the hub, the whole first call (client
creation included), and the median later call. Medians over the rounds. To compare with another
version of graphmind-core, put its `src` first: `PYTHONPATH=<old>/src uv run python bench/first_call.py`.

Run: `uv run python bench/first_call.py [rounds]`. Not a timed test: numbers depend on the machine.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from graphmind_server.testing import HubProcess

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import graphmind as gm
from graphmind._hub import attach_wait as _attach_wait
from graphmind._wire import transport as _transport
t1 = time.perf_counter()
phases = {"import_ms": (t1 - t0) * 1e3}

def timed(owner, name, key):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            phases[key] = phases.get(key, 0.0) + (time.perf_counter() - started) * 1e3
    setattr(owner, name, wrapper)

timed(_attach_wait, "something_listens", "probe_ms")
timed(_transport.Transport, "ready", "wait_ms")
timed(gm.Client, "__init__", "client_ms")
started = time.perf_counter()
if sys.argv[1] == "bare":
    search = lambda q: q
else:
    search = gm.wrap(lambda q: q, name="search")  # the default client is made here, in the first call
search("first")
phases["first_ms"] = (time.perf_counter() - started) * 1e3
later = []
for i in range(200):
    started = time.perf_counter()
    search(f"later {i}")
    later.append((time.perf_counter() - started) * 1e3)
phases["later_ms"] = sorted(later)[len(later) // 2]
if sys.argv[1] != "bare":
    phases["attached"] = gm.get_client().attached
print(json.dumps(phases))
"""


def refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"ws://127.0.0.1:{port}/ingest"


def run_child(case: str, url: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["GRAPHMIND_URL"] = url
    out = subprocess.run(
        [sys.executable, "-c", CHILD, case], capture_output=True, text=True, env=env, check=True, timeout=60
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with tempfile.TemporaryDirectory() as tmp, HubProcess(Path(tmp) / "hub.db") as hub:
        cases = {"bare": hub.ingest_url, "attached": hub.ingest_url, "detached": refused_url()}
        run_child("attached", hub.ingest_url)  # the hub's own first connection is not the app's cost
        samples: dict[str, list[dict[str, float]]] = {case: [] for case in cases}
        for i in range(rounds):
            order = list(cases) if i % 2 else list(reversed(cases))
            for case in order:
                samples[case].append(run_child(case, cases[case]))
    keys = ["import_ms", "client_ms", "probe_ms", "wait_ms", "first_ms", "later_ms"]
    print(f"first call of a fresh process, median of {rounds} processes per case (ms):")
    print(f"  {'case':9}" + "".join(f"{k[:-3]:>10}" for k in keys) + f"{'first-later':>13}")
    for case, runs in samples.items():
        row = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}
        extra = statistics.median(r["first_ms"] - r["later_ms"] for r in runs)
        print(f"  {case:9}" + "".join(f"{row[k]:10.2f}" for k in keys) + f"{extra:13.2f}")
    attached = sum(bool(r.get("attached")) for r in samples["attached"])
    print(f"  attached on the first call: {attached}/{rounds}; detached: 0/{rounds} expected")


if __name__ == "__main__":
    main()
