"""Who may connect: foreign Origins and rebinding Hosts are refused with 403 (docs/api.md)."""

from __future__ import annotations

import base64
import os
import socket

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

EVIL = "http://evil.example"


def _raw(port: int, request: str) -> tuple[int, str]:
    """Send a raw HTTP/1.1 request; (status, whole response text)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request.encode())
        data = b""
        while b"\r\n\r\n" not in data or (b"content-length" in data.lower() and not data.endswith(b"}")):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    text = data.decode("latin-1")
    return int(text.split(" ", 2)[1]), text


def _upgrade(port: int, path: str, host: str, origin: str | None = None) -> tuple[int, str]:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin:
        lines.append(f"Origin: {origin}")
    return _raw(port, "\r\n".join(lines) + "\r\n\r\n")


@pytest.mark.parametrize("path", ["/ingest", "/api/live"])
def test_a_foreign_origin_gets_403_on_the_websockets(thub, path):
    with (
        pytest.raises(InvalidStatus) as info,
        connect(f"ws://127.0.0.1:{thub.port}{path}", origin=EVIL, open_timeout=5),
    ):
        pass
    assert info.value.response.status_code == 403
    assert b"GRAPHMIND_ALLOWED_ORIGINS" in info.value.response.body


def test_a_foreign_origin_gets_403_on_state_changing_routes(thub):
    app = thub.app()
    app.run_started("r1")
    app.hold("r1", "tool:a", "i1")
    gate = thub.wait_for(thub.gates, what="a gate")[0]
    for method, path, body in [
        ("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"}),
        ("PUT", "/api/debug", {"mode": "step"}),
        ("POST", "/api/pause", {}),
        ("POST", "/api/runs/r1/abort", None),
        ("DELETE", "/api/runs/r1", None),
    ]:
        status, err = thub.api(method, path, body, headers={"Origin": EVIL})
        assert status == 403, (method, path)
        assert "GRAPHMIND_ALLOWED_ORIGINS" in err["error"]
    assert thub.gates() == [gate]
    assert thub.api("GET", "/api/debug")[1]["mode"] == "run"


def test_the_hubs_own_loopback_origins_and_no_origin_are_allowed(thub):
    for origin in (
        None,
        f"http://127.0.0.1:{thub.port}",
        f"http://localhost:{thub.port}",
        f"http://[::1]:{thub.port}",
    ):
        headers = {"Origin": origin} if origin else {}
        assert thub.api("PUT", "/api/debug", {"mode": "run"}, headers=headers)[0] == 200, origin
        with connect(thub.live_url, origin=origin, open_timeout=5) as ws:  # type: ignore[arg-type]
            assert b"hello" in ws.recv(timeout=5).encode()
    # Another port on loopback is another site.
    assert thub.api("PUT", "/api/debug", {}, headers={"Origin": "http://127.0.0.1:1"})[0] == 403


def test_a_rebinding_host_is_refused_everywhere(thub):
    for path in ("/api/health", "/api/runs", "/"):
        status, text = _raw(
            thub.port, f"GET {path} HTTP/1.1\r\nHost: evil.example:{thub.port}\r\nConnection: close\r\n\r\n"
        )
        assert status == 403, path
        assert "GRAPHMIND_ALLOWED_ORIGINS" in text
    assert _upgrade(thub.port, "/ingest", f"evil.example:{thub.port}")[0] == 403
    assert _upgrade(thub.port, "/api/live", f"attacker.test:{thub.port}")[0] == 403
    for host in (f"127.0.0.1:{thub.port}", f"localhost:{thub.port}", "localhost", f"[::1]:{thub.port}"):
        assert (
            _raw(thub.port, f"GET /api/health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")[0]
            == 200
        )


def test_allowed_origins_let_a_named_origin_and_its_host_in(make_hub):
    hub = make_hub(allowed_origins=["http://host.docker.internal:4747"])
    ok = {"Origin": "http://host.docker.internal:4747", "Host": "host.docker.internal:4747"}
    assert hub.api("PUT", "/api/debug", {"mode": "step"}, headers=ok)[0] == 200
    assert (
        _upgrade(hub.port, "/ingest", "host.docker.internal:4747", "http://host.docker.internal:4747")[0]
        == 101
    )
    assert hub.api("PUT", "/api/debug", {}, headers={"Origin": EVIL})[0] == 403


def test_a_star_turns_the_checks_off(make_hub):
    hub = make_hub(allowed_origins=None)
    assert hub.api("PUT", "/api/debug", {"mode": "step"}, headers={"Origin": EVIL})[0] == 200
    assert _upgrade(hub.port, "/ingest", "evil.example", EVIL)[0] == 101


def test_responses_forbid_framing(thub):
    status, text = _raw(
        thub.port, f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{thub.port}\r\nConnection: close\r\n\r\n"
    )
    assert status == 200 and "frame-ancestors 'none'" in text
