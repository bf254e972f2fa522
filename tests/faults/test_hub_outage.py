"""A hub SIGKILLed (and restarted at once on the same db) or SIGSTOPped while an app emits 2,000
events/s and a call is held: events sent = events stored, the held call goes on, the app's calls
stay fast. Default client options: the quick reconnect after losing a hub is what saves the ring."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, in_thread, wait_for

from .conftest import figure, scaled

RATE = 1000  # tool calls per second: two events each, 2,000 events/s
SECONDS = scaled(4, 12)
OUTAGE_AT = 1.5
STOP_FOR = 1.5


class Emitter:
    """Calls a wrapped tool RATE times a second inside one run; records the slowest call."""

    def __init__(self, client: graphmind.Client) -> None:
        self.client = client
        self.tool = client.wrap(lambda i: i, name="tick")
        self.worst_ms = 0.0
        self.calls = 0
        self.run_id = ""
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        with self.client.run("steady") as run:
            self.run_id = run.run_id
            self.started.set()
            t0 = time.perf_counter()
            total = RATE * SECONDS
            for i in range(total):
                due = t0 + i / RATE
                now = time.perf_counter()
                if due > now:
                    time.sleep(due - now)
                before = time.perf_counter()
                self.tool(i)
                self.worst_ms = max(self.worst_ms, (time.perf_counter() - before) * 1000)
                self.calls += 1


def _stored(hub: HubProcess, run_id: str) -> int:
    status, run = hub.api("GET", f"/api/runs/{run_id}")
    return int(run.get("eventCount", 0)) if status == 200 else 0


def _stored_all(hub: HubProcess) -> int:
    return sum(r["eventCount"] for r in hub.api("GET", "/api/runs?limit=10")[1]["runs"])


def _outage(tmp_path: Path, fault: str) -> dict[str, Any]:
    hub = HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_ABANDON_GRACE_MS": "60000"})
    client = graphmind.Client(
        app=f"outage-{fault}", url=hub.ingest_url
    )  # default options: retry 10 s, ring 5,000
    try:
        assert client.ready(5)
        assert (
            hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:held", "gate": "before"}]})[0]
            == 200
        )
        held_tool = client.wrap(lambda: "ran", name="held")
        emitter = Emitter(client)
        emitter.thread.start()
        emitter.started.wait(5)
        holder, out = in_thread(held_tool)
        hub.held_gates(1)
        time.sleep(OUTAGE_AT)
        t_fault = time.perf_counter()
        if fault == "kill":
            hub.kill()
            holder.join(5)
            released_ms = (time.perf_counter() - t_fault) * 1000
            hub.start(hub.port)
        else:
            assert hub.proc is not None
            hub.proc.send_signal(signal.SIGSTOP)
            time.sleep(STOP_FOR)
            hub.proc.send_signal(signal.SIGCONT)
            released_ms = float("nan")
        restarted_ms = (time.perf_counter() - t_fault) * 1000
        emitter.thread.join(SECONDS + 30)
        if fault == "stop":
            # The hub is back: answer the held call, as a person would.
            gate = hub.held_gates(1)[0]
            assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
            holder.join(5)
        assert out.get("value") == "ran", out
        client.dispose()
        stats = client.stats()
        emitted = stats["events"]
        run_id = emitter.run_id
        expected = emitted - stats["dropped"]
        wait_for(lambda: _stored_all(hub) >= expected, 15, "every event sent to be stored")
        stored_all = _stored_all(hub)
        stored = _stored(hub, run_id)
        return {
            "emitted": emitted,
            "stored": stored_all,
            "steady_stored": stored,
            "dropped": stats["dropped"],
            "worst_call_ms": round(emitter.worst_ms, 1),
            "released_ms": round(released_ms, 1),
            "outage_ms": round(restarted_ms),
            "stderr": hub.stderr,
        }
    finally:
        client.dispose()
        hub.stop()


@pytest.mark.faults
@pytest.mark.parametrize("fault", ["kill", "stop"])
def test_a_hub_outage_at_2000_events_per_second_loses_nothing(tmp_path: Path, fault: str) -> None:
    result = _outage(tmp_path, fault)
    lost = result["emitted"] - result["stored"]
    figure(
        f"SIG{fault.upper()} hub at 2,000 events/s: events lost",
        f"{lost} of {result['emitted']} "
        f"(dropped {result['dropped']}, outage {result['outage_ms']} ms, worst app call "
        f"{result['worst_call_ms']} ms, held call released in {result['released_ms']} ms)",
    )
    # Exact whatever the load: what is not stored is counted (issue 29, the hub's confirmations).
    assert lost == result["dropped"], result
    if result["outage_ms"] < 2000:  # the ring of 5,000 holds 2.5 s of events: nothing had to go
        assert result["dropped"] == 0, result
    assert result["worst_call_ms"] < 250, result  # the app never waits on the hub
    if fault == "kill":
        assert result["released_ms"] < 2000, result
    assert "Traceback" not in result["stderr"], result["stderr"]
