"""A port squatter learns nothing (issue 28): an app with GRAPHMIND_TOKEN facing a listener on its
hub's port (the hub is down) sends it neither the token nor any event (the listener must prove it
knows the token first, docs/protocol.md "Authentication"), warns once in one line and runs
detached; when the real hub comes back on that port, the app attaches and replays."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.server import ServerConnection, serve

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

TOKEN = "the-apps-secret-token-1234567890"


class Squatter:
    """Listens where the hub should be; keeps every byte and every frame anyone sends it.

    `kind`: "accept" (any upgrade, no proof), "forge" (a made-up proof), "refuse" (401, as an
    older hub would)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.raw = bytearray()
        self.frames: list[Any] = []
        self.upgrades = 0
        self.lock = threading.Lock()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.port = sock.getsockname()[1]

        def process_request(conn: ServerConnection, request: Any) -> Any:
            with self.lock:
                self.upgrades += 1
                self.raw += str(request.headers).encode() + request.path.encode()
            if kind == "refuse":
                return conn.respond(401, "token required\n")
            return None

        def process_response(conn: ServerConnection, request: Any, response: Any) -> Any:
            if kind == "forge":
                response.headers["x-graphmind-auth"] = "graphmind-hmac-sha256-v1"
                response.headers["x-graphmind-server-nonce"] = "A" * 43
                response.headers["x-graphmind-server-proof"] = "0" * 64
            return None

        def handler(ws: ServerConnection) -> None:
            for message in ws:
                with self.lock:
                    self.frames.append(message)

        self.server = serve(
            handler,
            sock=sock,
            process_request=process_request,
            process_response=process_response,
            max_size=None,
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(5)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def warnings_seen() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("graphmind")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


@pytest.mark.faults
@pytest.mark.parametrize("kind", ["accept", "forge", "refuse"])
def test_a_squatter_gets_neither_the_token_nor_an_event_and_the_real_hub_gets_the_replay(
    kind: str, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, warnings_seen: Lines
) -> None:
    monkeypatch.setenv("GRAPHMIND_TOKEN", TOKEN)
    squatter = Squatter(kind)
    client = graphmind.Client(
        app="squatted", url=f"ws://127.0.0.1:{squatter.port}/ingest", retry_interval=0.2
    )
    hub: HubProcess | None = None
    try:
        assert not client.ready(3)  # it tried: the squatter answered, and was not believed
        with client.run("secret-run"):
            assert client.wrap(lambda q: f"answer to {q}", name="search")("the prompt nobody may read") == (
                "answer to the prompt nobody may read"
            )
        wait_for(lambda: squatter.upgrades >= 3, 10, "a few reconnect attempts")  # every one of them refused
        with squatter.lock:
            raw, frames = bytes(squatter.raw), list(squatter.frames)
        assert TOKEN.encode() not in raw and b"authorization" not in raw.lower()
        assert frames == []  # no hello, no event: nothing at all after the upgrade
        mine = [line for line in warnings_seen.lines if "not your hub" in line]
        assert len(mine) == 1 and "\n" not in mine[0], warnings_seen.lines
        squatter.stop()
        hub = HubProcess(tmp_path / "hub.db", port=squatter.port, env={"GRAPHMIND_TOKEN": TOKEN})
        assert client.ready(10)
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        wait_for(
            lambda: (
                [r["name"] for r in hub.api("GET", "/api/runs", headers=bearer)[1]["runs"]] == ["secret-run"]
            ),  # type: ignore[union-attr]
            10,
            "the replayed run",
        )
        run = hub.api("GET", "/api/runs", headers=bearer)[1]["runs"][0]
        assert run["status"] == "finished"
    finally:
        client.dispose()
        if hub is not None:
            hub.stop()
        squatter.stop()
    figure(
        f"squatter ({kind})",
        f"{squatter.upgrades} upgrade(s) seen, 0 frames, no token; 1 warning; replayed to the real hub",
    )


@pytest.mark.faults
def test_the_real_hub_refuses_an_app_that_cannot_prove_the_token(tmp_path: Path, home: Path) -> None:
    """The other half: a client that sends the nonce but cannot prove the token is closed 4401
    before the hub takes any frame, and learns nothing from the hub's proof (it is bound to the
    client's nonce and a fresh server nonce)."""
    import json

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from graphmind import protocol as proto

    with HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_TOKEN": TOKEN}) as hub:
        nonce = proto.new_nonce()
        headers = {proto.AUTH_HEADER: proto.AUTH_SCHEME, proto.CLIENT_NONCE_HEADER: nonce}
        with connect(hub.ingest_url, additional_headers=headers, open_timeout=5) as ws:
            server_nonce = ws.response.headers[proto.SERVER_NONCE_HEADER]
            assert ws.response.headers[proto.SERVER_PROOF_HEADER] == proto.proof(
                TOKEN, proto.HUB_PROOF_LABEL, nonce, server_nonce
            )
            hello = proto.hello(app="x", sdk={"name": "t", "version": "0"}, pid=1, client_id="c1", meta={})
            hello["auth"] = {
                "scheme": proto.AUTH_SCHEME,
                "proof": proto.proof("a-wrong-token-xxxxxxxx", proto.APP_PROOF_LABEL, nonce, server_nonce),
            }
            ws.send(json.dumps(hello))
            ws.send(json.dumps({"type": "run.started", "seq": 1, "runId": "r1", "ts": 1, "name": "x"}))
            answer = json.loads(ws.recv(timeout=5))
            assert answer["code"] == "unauthorized"
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=5)
            assert ws.close_code == proto.CLOSE_UNAUTHORIZED
        second = proto.new_nonce()
        with connect(
            hub.ingest_url, additional_headers={**headers, proto.CLIENT_NONCE_HEADER: second}, open_timeout=5
        ) as ws:
            assert ws.response.headers[proto.SERVER_NONCE_HEADER] != server_nonce  # nothing to replay
        assert hub.api("GET", "/api/runs", headers={"Authorization": f"Bearer {TOKEN}"})[1]["runs"] == []
        # An app of an older SDK (the bearer token on the upgrade, no proof) still attaches.
        with connect(
            hub.ingest_url, additional_headers={"Authorization": f"Bearer {TOKEN}"}, open_timeout=5
        ) as ws:
            ws.send(json.dumps({k: v for k, v in hello.items() if k != "auth"}))
            assert json.loads(ws.recv(timeout=5))["type"] == "welcome"


@pytest.mark.faults
def test_a_stale_token_file_names_itself_and_a_tokenless_hub_on_its_port_removes_it(
    tmp_path: Path, home: Path, warnings_seen: Lines
) -> None:
    """A hub killed with SIGKILL leaves its token file: the app then expects a token on that port
    and refuses a tokenless listener there (it may be a squatter), saying which file to delete; a
    tokenless hub of ours starting on that port removes it, and the app attaches."""
    from graphmind import protocol as proto

    squatter = Squatter("accept")
    port = squatter.port
    stale = proto.token_file(port)
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text(TOKEN)
    client = graphmind.Client(app="stale", url=f"ws://127.0.0.1:{port}/ingest", retry_interval=0.2)
    hub: HubProcess | None = None
    try:
        assert not client.ready(3)
        mine = [line for line in warnings_seen.lines if "not your hub" in line]
        assert len(mine) == 1 and str(stale) in mine[0] and "delete it" in mine[0], warnings_seen.lines
        assert squatter.frames == []
        squatter.stop()
        hub = HubProcess(tmp_path / "hub.db", port=port)
        assert not stale.exists()
        assert client.ready(10)
    finally:
        client.dispose()
        if hub is not None:
            hub.stop()
        squatter.stop()
