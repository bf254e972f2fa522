"""Connections without the token cannot starve the hub (issue 28): with the hub at the default
1,024 open files, 1,100 idle sockets and 50 connections trickling their headers are open at once;
the token holder's `/api/runs` still answers in under a second, an app attaches, the trickling
connections are closed at the header deadline, and the hub's stderr stays under 100 lines."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind_server.access.limits import HANDSHAKE_TIMEOUT_S
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

IDLE = 1100
SLOW = 50
HUB_FILES = 1024


@contextlib.contextmanager
def open_files_limit(soft: int) -> Iterator[None]:
    old_soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (old_soft, hard))


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def accept_queue(port: int) -> int:
    """Connections the kernel holds for the hub's listening socket, not yet accepted (/proc/net/tcp:
    for a socket in LISTEN, rx_queue is the accept queue's length)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
            return int(fields[4].split(":")[1], 16)
    raise AssertionError(f"no listening socket on port {port}")


def timed_runs(hub: HubProcess, token: str) -> float:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(hub.url + "/api/runs", headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with opener.open(request, timeout=5) as response:
        assert response.status == 200
        response.read()
    return time.perf_counter() - started


@pytest.mark.faults
def test_idle_and_slow_connections_leave_the_hub_to_the_token_holder(tmp_path: Path, home: Path) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < IDLE + SLOW + 200:
        pytest.skip(f"this test process may open only {hard} files")
    with open_files_limit(HUB_FILES):  # the hub inherits the default limit: that is the point
        hub = HubProcess(tmp_path / "hub.db", args=["--token", "auto"])
    idle: list[socket.socket] = []
    slow: list[socket.socket] = []
    closed_at: dict[int, float] = {}
    stop = threading.Event()
    try:
        assert hub.proc is not None
        pid = hub.proc.pid
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert any(
            line.startswith("Max open files") and f" {HUB_FILES} " in line for line in limits.splitlines()
        )
        token = proto.token_file(hub.port).read_text().strip()
        with open_files_limit(IDLE + SLOW + 1024):
            for _ in range(IDLE):
                idle.append(socket.create_connection(("127.0.0.1", hub.port), timeout=5))
            opened = time.monotonic()
            for _ in range(SLOW):
                s = socket.create_connection(("127.0.0.1", hub.port), timeout=5)
                s.sendall(f"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\n".encode())
                slow.append(s)

            def trickle() -> None:  # one header byte per connection every 0.2 s, until the hub cuts it
                while not stop.is_set():
                    for n, s in enumerate(slow):
                        if n in closed_at:
                            continue
                        try:
                            with contextlib.suppress(BlockingIOError):
                                if not s.recv(1024, socket.MSG_DONTWAIT):
                                    raise ConnectionResetError  # the hub closed it
                            s.send(b"X")
                        except OSError:
                            closed_at[n] = time.monotonic()
                    stop.wait(0.2)

            trickler = threading.Thread(target=trickle, daemon=True)
            trickler.start()
            # The first request queues behind every connection the flood made (the kernel's accept
            # queue is first come, first served): its latency is how long the hub takes to accept
            # and shed them. Then the hub's steady state under the open flood.
            first = timed_runs(hub, token)
            queued = accept_queue(hub.port)
            latencies = [timed_runs(hub, token) for _ in range(10)]
            client = graphmind.Client(app="under-flood", url=hub.ingest_url)  # finds the token file
            try:
                attach_started = time.perf_counter()
                assert client.ready(5)
                attach_s = time.perf_counter() - attach_started
                with client.run("still-served"):
                    client.wrap(lambda: 1, name="t")()
            finally:
                client.dispose()
            hub_fds = open_fds(pid)
            wait_for(
                lambda: len(closed_at) == SLOW, HANDSHAKE_TIMEOUT_S + 10, "the trickling connections cut"
            )
            slowest_cut = max(closed_at.values()) - opened
            latencies += [timed_runs(hub, token) for _ in range(5)]
            bearer = {"Authorization": f"Bearer {token}"}
            assert [r["name"] for r in hub.api("GET", "/api/runs", headers=bearer)[1]["runs"]] == [
                "still-served"
            ]
    finally:
        stop.set()
        for s in idle + slow:
            s.close()
        hub.stop()
    stderr_lines = hub.stderr.splitlines()
    assert first < 1.0 and max(latencies) < 1.0, (first, latencies)
    assert queued == 0
    assert slowest_cut < HANDSHAKE_TIMEOUT_S + 3, slowest_cut
    assert hub_fds < HUB_FILES - 100, hub_fds
    assert len(stderr_lines) < 100, len(stderr_lines)
    assert "Traceback" not in hub.stderr
    figure(
        "flood",
        f"{IDLE} idle + {SLOW} trickling sockets: the first /api/runs {first * 1000:.0f} ms (behind the flood), "
        f"then max {max(latencies) * 1000:.0f} ms (all: {[round(x * 1000) for x in latencies]}), app attached in "
        f"{attach_s * 1000:.0f} ms, hub fds {hub_fds}/{HUB_FILES}, trickling cut by {slowest_cut:.1f} s, "
        f"hub stderr {len(stderr_lines)} line(s)",
    )
