"""Oversized ingest frames from a client that offers permessage-deflate (websockets' default;
issue 47): a compressed frame's header gives only its compressed length, so the hub inflated 16 MiB
of each 60 MB frame before it could refuse it, and kept it: four such frames left the hub at 119 MB
from 40, ten near 190. The hub no longer negotiates compression, so every frame's length is in its
header and an oversized one is refused there (1009), its payload never inflated nor held."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from graphmind import protocol as proto
from graphmind_server.testing import HubProcess

from .conftest import figure, rss_mb, scaled

BIG = 60 * 1024 * 1024
FRAMES = scaled(4, 10)
HELLO = {"type": "hello", "protocol": 1, "app": "big", "sdk": {"name": "t", "version": "0"}, "pid": 0}


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.faults
def test_compressed_oversized_frames_are_refused_at_the_header_and_cost_no_memory(hub: HubProcess) -> None:
    assert hub.proc is not None
    pid = hub.proc.pid
    with connect(hub.ingest_url, open_timeout=5, compression="deflate") as ws:  # warm, and negotiate
        ws.send(json.dumps({**HELLO, "clientId": "warm"}))
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
        assert ws.response is not None
        assert "permessage-deflate" not in (ws.response.headers.get("Sec-WebSocket-Extensions") or "")
    baseline, peak_before = rss_mb(pid), peak_mb(pid)
    big = '{"type":"node.started","runId":"r","seq":1,"input":"' + "x" * BIG + '"}'
    codes, took = [], []
    for n in range(FRAMES):
        started = time.perf_counter()
        with connect(
            hub.ingest_url, open_timeout=5, max_size=None, compression="deflate", close_timeout=5
        ) as ws:
            ws.send(json.dumps({**HELLO, "clientId": f"big-{n}"}))
            assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
            try:
                ws.send(big)
                ws.recv(timeout=10)
            except ConnectionClosed as exc:
                codes.append(exc.rcvd.code if exc.rcvd is not None else None)
        took.append(time.perf_counter() - started)
    after, peak = rss_mb(pid), peak_mb(pid)
    figure(
        f"{FRAMES} x 60 MB ingest frames from a client offering deflate",
        f"refused {set(codes)}; hub RSS {baseline:.0f} -> {after:.0f} MB, peak +{peak - peak_before:.0f} MB, "
        f"{max(took):.1f} s each at most (the 2 s drain after the close included)",
    )
    assert codes == [proto.CLOSE_TOO_BIG] * FRAMES, codes
    assert peak - peak_before < 10, (peak_before, peak)  # no frame inflated nor buffered
    assert after - baseline < 10, (baseline, after)
    assert hub.api("GET", "/api/runs")[1]["runs"] == []
