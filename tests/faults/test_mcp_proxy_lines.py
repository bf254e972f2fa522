"""A JSON-RPC line over the proxy's 64 MiB bound (issue 47): `graphmind mcp-proxy` crashed with a
traceback and said the server had exited. Now the line is read and dropped a buffer at a time, the
request it answers gets a JSON-RPC error, one line on stderr says so, and the session goes on."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind_mcp._wire import LIMIT

from .conftest import figure

SERVER = textwrap.dedent("""
    import json, sys
    BIG = int(sys.argv[1])
    for line in sys.stdin:
        msg = json.loads(line)
        rid, method = msg.get("id"), msg.get("method")
        if rid is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "big"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("big", "small")]}
        elif msg["params"]["name"] == "big":
            head = json.dumps({"jsonrpc": "2.0", "id": rid})[:-1]
            sys.stdout.write(head + ',"result":{"content":[{"type":"text","text":"')
            sys.stdout.write("x" * BIG)
            sys.stdout.write('"}]}}\\n')
            sys.stdout.flush()
            continue
        else:
            result = {"content": [{"type": "text", "text": "small answer"}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\\n")
        sys.stdout.flush()
""")


class Host:
    """The host's side of the proxy's stdio, one JSON-RPC line at a time."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the proxy closed its stdout"
        return dict(json.loads(line))

    def call(self, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.answer()


@pytest.fixture
def proxy_cmd(tmp_path: Path) -> list[str]:
    server = tmp_path / "big_server.py"
    server.write_text(SERVER)
    graphmind = shutil.which("graphmind", path=str(Path(sys.executable).parent))
    assert graphmind is not None
    return [graphmind, "mcp-proxy", "--", sys.executable, str(server), str(LIMIT + 1024 * 1024)]


@contextlib.contextmanager
def _session(cmd: list[str], stderr: Path) -> Iterator[Host]:
    """The proxy with no hub (its calls are still nodes, sent under the proxy's own ids)."""
    env = {**os.environ, "GRAPHMIND_URL": "ws://127.0.0.1:9/ingest"}
    with stderr.open("wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env)
        try:
            yield Host(proc)
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            code = proc.wait(30)
    assert code == 0


@pytest.mark.faults
def test_a_line_over_the_bound_is_one_error_and_the_session_goes_on(
    proxy_cmd: list[str], tmp_path: Path
) -> None:
    stderr = tmp_path / "proxy.stderr"
    with _session(proxy_cmd, stderr) as host:
        info = {"name": "t", "version": "0"}
        init = host.call(
            1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        )
        assert init["result"]["serverInfo"]["name"] == "big"
        host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.perf_counter()
        big = host.call(2, "tools/call", {"name": "big", "arguments": {}})
        took = time.perf_counter() - started
        small = host.call(3, "tools/call", {"name": "small", "arguments": {}})
    assert big["id"] == 2 and "over the 64 MiB a line may hold" in json.dumps(big), big
    assert small["id"] == 3 and small["result"]["content"][0]["text"] == "small answer", small
    said = stderr.read_text()
    lines = [line for line in said.splitlines() if line.startswith("graphmind mcp-proxy:")]
    figure(f"a {(LIMIT + 2**20) / 2**20:.0f} MiB answer through mcp-proxy", f"{took:.2f} s; {lines}")
    assert "Traceback" not in said and "exited" not in said, said
    assert len(lines) == 1 and "dropped a 65 MiB message from the MCP server" in lines[0], lines
