"""Refused WebSocket upgrades do not flood the hub's log (issue 47): each upgrade without the token
wrote uvicorn's "ASGI callable returned without completing handshake." to stderr (300 lines in about
a second, from another user). Now the first refusal is one line and the rest one summary line per
30 s (and at shutdown)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess

from .conftest import figure, scaled

ATTEMPTS = scaled(100, 300)


def upgrade(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET /ingest HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        return sock.recv(64)


@pytest.mark.faults
def test_upgrades_refused_without_a_token_are_one_line_and_a_summary(tmp_path: Path, home: Path) -> None:
    hub = HubProcess(tmp_path / "hub.db", args=["--token", "auto"])
    try:
        started = time.perf_counter()
        answers = [upgrade(hub.port) for _ in range(ATTEMPTS)]
        took = time.perf_counter() - started
        assert all(a.startswith(b"HTTP/1.1 401") for a in answers), set(answers)
    finally:
        hub.stop()
    lines = hub.stderr.splitlines()
    figure(f"{ATTEMPTS} upgrades without a token in {took:.1f} s", f"{len(lines)} stderr line(s): {lines}")
    assert not [line for line in lines if "without completing handshake" in line], lines
    refused = [line for line in lines if "WebSocket upgrade" in line]
    assert len(refused) == 2, lines
    assert "from 127.0.0.1 with HTTP 401 (no valid token)" in refused[0], refused
    assert f"refused {ATTEMPTS - 1} more WebSocket upgrade(s)" in refused[1], refused
    assert f"({ATTEMPTS - 1} with HTTP 401)" in refused[1], refused
