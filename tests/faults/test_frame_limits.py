"""Frame limits on both sides (issue 28, docs/protocol.md "Frame sizes"): the hub refuses an ingest
frame over INGEST_MAX_FRAME at its header (close 1009) and its memory comes back to its baseline;
an app refuses a hub frame over HUB_MAX_FRAME the same way, its memory stays put, and it attaches
again at once (the frame cost it one connection, nothing else)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

from graphmind import protocol as proto
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, rss_mb

BIG_INGEST = 60 * 1024 * 1024
BIG_HUB_FRAME = 200 * 1024 * 1024
HELLO = {"type": "hello", "protocol": 1, "app": "big", "sdk": {"name": "t", "version": "0"}, "pid": 0}


@pytest.mark.faults
def test_the_hub_refuses_four_60_mb_frames_and_its_memory_comes_back(hub: HubProcess) -> None:
    assert hub.proc is not None
    pid = hub.proc.pid
    with connect(hub.ingest_url, open_timeout=5) as ws:  # warm: one app served end to end
        ws.send(json.dumps({**HELLO, "clientId": "warm"}))
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
    baseline = rss_mb(pid)
    big = '{"type":"node.started","runId":"r","seq":1,"input":"' + "x" * BIG_INGEST + '"}'
    codes = []
    for n in range(4):
        with connect(hub.ingest_url, open_timeout=5, max_size=None, compression=None, close_timeout=5) as ws:
            ws.send(json.dumps({**HELLO, "clientId": f"big-{n}"}))
            assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
            try:
                ws.send(big)
                ws.recv(timeout=10)
            except ConnectionClosed as exc:
                codes.append(exc.rcvd.code if exc.rcvd is not None else None)
            except OSError:
                codes.append(ws.close_code)
    assert codes == [proto.CLOSE_TOO_BIG] * 4, codes
    after = wait_for(
        lambda: (lambda r: r if r - baseline < 20 else None)(rss_mb(pid)), 10, "the hub's memory back"
    )
    assert hub.api("GET", "/api/health")[0] == 200
    status, body = hub.api("GET", "/api/runs")
    assert status == 200 and body["runs"] == []  # nothing of them was taken
    figure("4 x 60 MB ingest frames", f"refused 1009; hub RSS {baseline:.0f} MB -> {after:.0f} MB")


APP = textwrap.dedent("""
    import json, sys, graphmind
    def mem():
        out = {}
        for line in open("/proc/self/status"):
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
        return out
    client = graphmind.Client(app="small-frames", url=sys.argv[1], retry_interval=0.2)
    assert client.ready(5)
    with client.run("before"):
        client.wrap(lambda: 1, name="t")()
    print(json.dumps({"before": mem()}), flush=True)
    sys.stdin.readline()  # the hub sent its big frame
    import time
    deadline = time.monotonic() + 10
    while client.stats()["connects"] < 2 and time.monotonic() < deadline:  # the refusal closed the first
        time.sleep(0.02)
    assert client.ready(5), "not attached again"
    with client.run("after"):
        client.wrap(lambda: 2, name="t")()
    print(json.dumps({"after": mem(), "stats": client.stats()}), flush=True)
    client.dispose()
""")


class BigFrameHub:
    """Speaks just enough protocol; its first connection gets one 200 MB frame after the welcome."""

    def __init__(self) -> None:
        self.connections = 0
        self.frames: list[list[dict[str, Any]]] = []
        self.big_sent = threading.Event()
        self.send_big = threading.Event()
        self.lock = threading.Lock()

        def handler(ws: ServerConnection) -> None:
            with self.lock:
                self.connections += 1
                number = self.connections
                mine: list[dict[str, Any]] = []
                self.frames.append(mine)
            hello = json.loads(ws.recv(timeout=5))
            assert hello["type"] == "hello"
            welcome = {
                "type": "welcome",
                "protocol": 1,
                "hub": {"name": "big", "version": "0"},
                "debug": {"version": 1, "breakpoints": [], "mode": "run", "pauseOnError": "off"},
            }
            ws.send(json.dumps(welcome))
            reader = threading.Thread(target=self._read, args=(ws, mine), daemon=True)
            reader.start()
            if number == 1:
                self.send_big.wait(30)
                try:
                    ws.send('{"type":"debug.state","x":"' + "y" * BIG_HUB_FRAME + '"}')
                except Exception:
                    pass
                finally:
                    self.big_sent.set()
            reader.join(60)

        self.server = serve(handler, "127.0.0.1", 0, max_size=None, compression=None)
        self.port = self.server.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def _read(ws: ServerConnection, into: list[dict[str, Any]]) -> None:
        try:
            for message in ws:
                frame = json.loads(message)
                into.extend(frame["events"] if frame.get("type") == "batch" else [frame])
        except (ConnectionClosed, OSError):
            pass

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(5)


@pytest.fixture
def big_hub() -> Iterator[BigFrameHub]:
    hub = BigFrameHub()
    try:
        yield hub
    finally:
        hub.stop()


@pytest.mark.faults
def test_the_app_refuses_a_200_mb_hub_frame_keeps_its_memory_and_attaches_again(
    big_hub: BigFrameHub, home: Path
) -> None:
    app = subprocess.Popen(
        [sys.executable, "-c", APP, f"ws://127.0.0.1:{big_hub.port}/ingest"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert app.stdout is not None and app.stdin is not None
        before = json.loads(app.stdout.readline())["before"]
        big_hub.send_big.set()
        assert big_hub.big_sent.wait(60)
        app.stdin.write("sent\n")
        app.stdin.flush()
        line = app.stdout.readline()
        assert line, app.stderr.read() if app.stderr else ""
        result = json.loads(line)
        app.wait(30)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    after, stats = result["after"], result["stats"]
    assert after["VmRSS"] - before["VmRSS"] < 20, (before, after)
    assert after["VmHWM"] - max(before["VmHWM"], before["VmRSS"]) < 20, (before, after)
    assert stats["connects"] == 2 and big_hub.connections == 2
    wait_for(
        lambda: any(e.get("type") == "run.finished" for e in big_hub.frames[1]),
        10,
        "the events after it delivered",
    )
    names = {e.get("name") for e in big_hub.frames[1] if e.get("type") == "run.started"}
    assert names == {"before", "after"}  # replayed, then the new one
    figure(
        "200 MB hub frame",
        f"refused at its header; app RSS {before['VmRSS']:.0f} -> {after['VmRSS']:.0f} MB "
        f"(peak {after['VmHWM']:.0f} MB); attached again at once",
    )
