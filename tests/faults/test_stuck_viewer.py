"""A viewer that never reads is cut at its send deadline and its memory is freed (issue 19, item 5)."""

from __future__ import annotations

import base64
import os
import socket
import time

import pytest

from graphmind_server.http.live import SEND_DEADLINE_S
from graphmind_server.testing import FakeApp, HubProcess, wait_for

from .conftest import figure, rss_mb, scaled

EVENTS = scaled(600, 3000)
BLOB = "y" * (50 * 1024)


def _open_stuck_viewer(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a tiny window, never read from
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /api/live HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _closed(sock: socket.socket) -> bool:
    """True once the hub has cut the connection; peeks only, so the viewer stays stuck."""
    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
        return True
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@pytest.mark.faults
def test_a_viewer_that_never_reads_is_closed_and_its_memory_freed(hub: HubProcess) -> None:
    assert hub.proc is not None
    pid = hub.proc.pid
    viewer = _open_stuck_viewer(hub.port)
    time.sleep(0.3)
    baseline = rss_mb(pid)
    with FakeApp(hub.ingest_url, app="flood") as app:
        app.run_started("flood")
        for i in range(EVENTS):
            app.event(
                "node.started",
                "flood",
                nodeId="tool:t",
                instanceId=f"i{i}",
                kind="tool",
                name="t",
                input=BLOB,
            )
        app.sent.clear()
        fed = time.perf_counter()
        wait_for(
            lambda: hub.api("GET", "/api/runs/flood")[1].get("eventCount") == EVENTS + 1, 60, "events stored"
        )
    peak = rss_mb(pid)
    wait_for(lambda: _closed(viewer), SEND_DEADLINE_S + 10, "the hub to cut the stuck viewer")
    closed_after = time.perf_counter() - fed
    time.sleep(0.5)
    after = rss_mb(pid)
    viewer.close()
    figure(
        "stuck viewer",
        f"cut {closed_after:.1f} s after the flood (deadline {SEND_DEADLINE_S:.0f} s); hub RSS "
        f"{baseline:.0f} MB -> {peak:.0f} MB with it -> {after:.0f} MB after ({EVENTS} events of 50 KB)",
    )
    assert closed_after < SEND_DEADLINE_S + 8
    assert after < baseline + 60, (baseline, peak, after)
    # The hub still serves everyone else.
    assert hub.api("GET", "/api/health")[0] == 200


@pytest.mark.faults
def test_ctrl_c_does_not_wait_on_a_stuck_viewer(hub: HubProcess) -> None:
    viewer = _open_stuck_viewer(hub.port)
    with FakeApp(hub.ingest_url, app="flood") as app:
        app.run_started("flood")
        for i in range(200):  # 10 MB of live frames: the viewer's socket is full long before
            app.event(
                "node.started",
                "flood",
                nodeId="tool:t",
                instanceId=f"i{i}",
                kind="tool",
                name="t",
                input=BLOB,
            )
        app.sent.clear()
        wait_for(lambda: hub.api("GET", "/api/runs/flood")[1].get("eventCount") == 201, 30, "events stored")
    started = time.perf_counter()
    assert hub.stop(timeout=10) == 0
    took = time.perf_counter() - started
    viewer.close()
    figure("Ctrl-C with a stuck viewer", f"hub exits in {took:.2f} s")
    assert took < 2.5
