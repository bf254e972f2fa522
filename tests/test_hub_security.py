"""Issue 4 acceptance, who may connect, and malformed input, against the real hub process."""

from __future__ import annotations

import json
import random
import socket

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import graphmind
from graphmind_server.testing import FakeApp, HubProcess, wait_for

FOREIGN = "https://attacker.example"


@pytest.mark.parametrize("path", ["/ingest", "/api/live"])
def test_a_foreign_origin_gets_403_on_the_sockets(hub: HubProcess, path: str) -> None:
    with (
        pytest.raises(InvalidStatus) as info,
        connect(f"ws://127.0.0.1:{hub.port}{path}", origin=FOREIGN, open_timeout=5),
    ):
        pass
    assert info.value.response.status_code == 403
    assert b"GRAPHMIND_ALLOWED_ORIGINS" in info.value.response.body


def test_a_foreign_origin_cannot_answer_a_gate(hub: HubProcess) -> None:
    client = graphmind.Client(app="victim", url=hub.ingest_url)
    try:
        assert client.ready(5)
        hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:secret", "gate": "before"}]})
        answered: list[str] = []
        gated = client.wrap(lambda: "real", name="secret")
        import threading

        t = threading.Thread(target=lambda: answered.append(gated()), daemon=True)
        t.start()
        gate = hub.held_gates()[0]
        status, body = hub.api(
            "POST",
            f"/api/gates/{gate['gateId']}",
            {"action": "inject", "value": "evil"},
            headers={"Origin": FOREIGN},
        )
        assert status == 403 and "GRAPHMIND_ALLOWED_ORIGINS" in body["error"]
        assert hub.api("GET", "/api/gates")[1]["gates"] == [gate]
        assert (
            hub.api(
                "POST", f"/api/gates/{gate['gateId']}", {"action": "continue"}, headers={"Origin": hub.url}
            )[0]
            == 200
        )
        t.join(10)
        assert answered == ["real"]
    finally:
        client.dispose()


def test_a_rebinding_host_is_refused(hub: HubProcess) -> None:
    with socket.create_connection(("127.0.0.1", hub.port), timeout=5) as sock:
        sock.sendall(
            f"GET /api/runs HTTP/1.1\r\nHost: rebind.attacker.example:{hub.port}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        response = b""
        while chunk := sock.recv(65536):
            response += chunk
    assert response.startswith(b"HTTP/1.1 403")
    assert b"GRAPHMIND_ALLOWED_ORIGINS" in response


def test_500_random_malformed_frames_leave_the_hub_serving_and_the_store_intact(hub: HubProcess) -> None:
    rng = random.Random(500)
    app = FakeApp(hub.ingest_url)
    try:
        app.run_started("r1")
        app.node_started("r1", "tool:a", "i1", input={"kept": True})
        wait_for(lambda: hub.api("GET", "/api/runs/r1")[1].get("eventCount") == 2, 10, "2 events")
        before = hub.api("GET", "/api/runs/r1/events")[1]["events"]
        shapes = [
            lambda: "".join(chr(rng.randrange(1, 0xD7FF)) for _ in range(rng.randrange(1, 200))),
            lambda: json.dumps([rng.random() for _ in range(5)]),
            lambda: json.dumps(
                {
                    "type": rng.choice(["node.started", "run.finished", "exec.paused"]),
                    "seq": rng.choice([None, "7", -4, 1.5, True]),
                    "runId": "r1",
                }
            ),
            lambda: json.dumps(
                {
                    "type": rng.choice(["node.started", "exec.resumed"]),
                    "seq": rng.randrange(10**6),
                    "runId": rng.choice([None, 5, "", ["r1"]]),
                }
            ),
            lambda: json.dumps({"type": rng.choice([None, 3, {"x": 1}])}),
            lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))),
            lambda: '{"type": "node.started", "seq": 9, "runId": "r1", "input": ' + "[" * 3000,
            lambda: json.dumps({"type": f"no.such.{rng.randrange(100)}"}),
        ]
        for _ in range(500):
            app.send(rng.choice(shapes)())
        codes = [app.expect("error", timeout=10)["code"] for _ in range(500)]
        assert set(codes) <= {"bad_frame", "unknown_type"}
        app.node_finished("r1", "tool:a", "i1", output="still fine")
        wait_for(lambda: hub.api("GET", "/api/runs/r1")[1].get("eventCount") == 3, 10, "the next event")
        events = hub.api("GET", "/api/runs/r1/events")[1]["events"]
        assert events[:2] == before and events[2]["output"] == "still fine"
        assert hub.api("GET", "/api/health")[0] == 200
        assert hub.running and "Traceback" not in hub.stderr
    finally:
        app.close()
