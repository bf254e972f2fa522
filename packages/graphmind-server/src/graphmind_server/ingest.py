"""`WS /ingest`: protocol v1 with the apps (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from graphmind import protocol as proto

from ._version import __version__
from .hub import AppConnection, Hub
from .store.derive import text as clean_text

EVENT_TYPES = proto.EVENT_TYPES
HELLO_TIMEOUT_S = 10.0
# Past this many uncommitted events the hub stops reading from apps until the writer catches up,
# so a flood slows the senders (TCP backpressure) instead of growing memory.
BACKLOG_HIGH = 50_000
BACKLOG_LOW = 10_000


class BadFrame(ValueError):
    pass


def _nonfinite(_: str) -> None:
    raise BadFrame("nonfinite")


# Built once: json.loads(text, parse_constant=...) would build a decoder per frame (the hot path).
_DECODER = json.JSONDecoder(parse_constant=_nonfinite)


def parse_frame(text: str) -> tuple[dict[str, Any], str]:
    """The frame as an object and the text to store (BadFrame with a reason otherwise)."""
    try:
        obj = _DECODER.decode(text)
    except BadFrame:
        # NaN / Infinity are not JSON, but Python's json.dumps writes them: keep the event and
        # store those values as null, so every reader can parse what the hub hands back.
        obj = json.loads(text, parse_constant=lambda _: None)
        text = json.dumps(obj, separators=(",", ":"))
    except (ValueError, RecursionError) as exc:
        raise BadFrame(f"frame is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise BadFrame("a frame must be a JSON object")
    if not isinstance(obj.get("type"), str):
        raise BadFrame("a frame needs a string field 'type'")
    return obj, text


def _error(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "code": code, "message": message, **extra})


def negotiate(hello: dict[str, Any]) -> int | None:
    return proto.negotiate(hello.get("protocols"), hello.get("protocol"))


async def ingest(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    await websocket.accept()
    try:
        hello = await _read_hello(websocket)
    except (asyncio.TimeoutError, WebSocketDisconnect):
        return
    if hello is None:
        return
    client_id = hello.get("clientId")
    if not isinstance(client_id, str) or not client_id:
        client_id = f"anon-{id(websocket):x}-{time.time_ns()}"
    app = hello.get("app")
    app = clean_text(app) if isinstance(app, str) and app else "unknown"
    client_id = clean_text(client_id)
    conn = hub.attach(client_id, app, hello.get("pid"), websocket.send_text)
    try:
        version = hub.debug.version
        await websocket.send_text(
            json.dumps(
                {
                    "type": proto.WELCOME,
                    "protocol": negotiate(hello),
                    "hub": {"name": "graphmind-server", "version": __version__},
                    "debug": hub.debug.to_json(),
                    "connectionId": conn.id,
                }
            )
        )
        await hub.mark_ready(conn, version)
        await _frames(websocket, hub, conn)
    except WebSocketDisconnect:
        pass
    finally:
        hub.detach(conn)


async def _read_hello(websocket: WebSocket) -> dict[str, Any] | None:
    message = await asyncio.wait_for(websocket.receive(), HELLO_TIMEOUT_S)
    if message["type"] == "websocket.disconnect":
        return None
    frame: dict[str, Any] | None = None
    if message.get("text") is not None:
        try:
            frame, _ = parse_frame(message["text"])
        except BadFrame:
            frame = None
    if frame is None or frame.get("type") != "hello":
        await websocket.send_text(
            _error("hello_required", "the first frame must be a hello (see docs/protocol.md)")
        )
        await websocket.close(4002)
        return None
    if negotiate(frame) is None:
        await websocket.send_text(
            _error(
                "unsupported_protocol",
                f"this hub speaks protocol versions {list(proto.SUPPORTED_PROTOCOLS)}; upgrade the SDK or the hub",
                supported=list(proto.SUPPORTED_PROTOCOLS),
            )
        )
        await websocket.close(4001)
        return None
    return frame


async def _frames(websocket: WebSocket, hub: Hub, conn: AppConnection) -> None:
    store = hub.store
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            await websocket.send_text(
                _error("bad_frame", "binary frames are not part of the protocol; send JSON text")
            )
            continue
        try:
            frame, raw = parse_frame(text)
        except BadFrame as exc:
            await websocket.send_text(_error("bad_frame", str(exc)))
            continue
        kind = frame["type"]
        if kind in EVENT_TYPES:
            seq, run_id = frame.get("seq"), frame.get("runId")
            if (
                not isinstance(seq, int)
                or isinstance(seq, bool)
                or seq < 0
                or not isinstance(run_id, str)
                or not run_id
            ):
                await websocket.send_text(
                    _error("bad_frame", f"a {kind} event needs an integer 'seq' and a string 'runId'")
                )
                continue
            if clean_text(run_id) != run_id:
                await websocket.send_text(
                    _error("bad_frame", "runId must be valid Unicode text (it has a lone surrogate)")
                )
                continue
            ts = frame.get("ts")
            if not isinstance(ts, (int, float)) or isinstance(ts, bool):
                ts = time.time() * 1000.0
            store.put_event(conn.client_id, conn.app, frame, raw, float(ts))
            if kind == "exec.paused":
                hub.on_paused(conn, frame)
            elif kind == "exec.resumed":
                hub.on_resumed(conn, frame)
            if store.backlog > BACKLOG_HIGH:
                await store.wait_backlog_below(BACKLOG_LOW)
        elif kind == "debug.ack":
            version = frame.get("version")
            if isinstance(version, int) and not isinstance(version, bool):
                hub.on_ack(conn, version)
        elif kind == "gate.unknown":
            hub.on_gate_unknown(conn, frame.get("gateId"))
        elif kind == "hello":
            await websocket.send_text(_error("bad_frame", "hello was already received on this connection"))
        else:
            await websocket.send_text(_error("unknown_type", f"unknown frame type {kind!r}; ignored"))
