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
# Past this many uncommitted events, or this much uncommitted event text, the hub stops reading
# from apps until the writer catches up: a flood slows the senders (TCP backpressure; the app's
# events wait in its own bounded ring) instead of growing the hub's memory (docs/hub.md).
BACKLOG_HIGH = 50_000
BACKLOG_LOW = 10_000
BACKLOG_HIGH_BYTES = 32 * 1024 * 1024
BACKLOG_LOW_BYTES = 8 * 1024 * 1024
MAX_SEQ = 2**63 - 1  # SQLite's INTEGER
MAX_TS = 2**63 - 1  # an integer ts beyond this would not fit a double's exact range anyway


class BadFrame(ValueError):
    pass


def _nonfinite(_: str) -> None:
    raise BadFrame("nonfinite")


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0:  # 1e400 parses as inf
        raise BadFrame(f"the number {text[:40]} is out of range (JSON numbers here must be finite doubles)")
    return value


# Built once: json.loads(text, parse_constant=...) would build a decoder per frame (the hot path).
# A float hook costs little (integers keep the C fast path): 1e400 is refused, not stored as Infinity.
_DECODER = json.JSONDecoder(parse_constant=_nonfinite, parse_float=_float)
_LENIENT = json.JSONDecoder(parse_constant=lambda _: None, parse_float=_float)


def parse_frame(text: str) -> tuple[dict[str, Any], str]:
    """The frame as an object and the text to store (BadFrame with a reason otherwise)."""
    try:
        try:
            obj = _DECODER.decode(text)
        except BadFrame as exc:
            if str(exc) != "nonfinite":
                raise
            # The literals NaN / Infinity are not JSON, but Python's json.dumps writes them: keep the
            # event and store those values as null, so every reader can parse what the hub hands back.
            obj = _LENIENT.decode(text)
            text = json.dumps(obj, separators=(",", ":"))
    except BadFrame:
        raise
    except (ValueError, RecursionError) as exc:
        raise BadFrame(f"frame is not JSON ({str(exc)[:200]})") from None
    if not isinstance(obj, dict):
        raise BadFrame("a frame must be a JSON object")
    if not isinstance(obj.get("type"), str):
        raise BadFrame("a frame needs a string field 'type'")
    return obj, text


def _error(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": proto.ERROR, "code": code, "message": message, **extra})


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
    if frame is None or frame.get("type") != proto.HELLO:
        await websocket.send_text(
            _error("hello_required", "the first frame must be a hello (see docs/protocol.md)")
        )
        await websocket.close(proto.CLOSE_HELLO_REQUIRED)
        return None
    if negotiate(frame) is None:
        await websocket.send_text(
            _error(
                "unsupported_protocol",
                f"this hub speaks protocol versions {list(proto.SUPPORTED_PROTOCOLS)}; upgrade the SDK or the hub",
                supported=list(proto.SUPPORTED_PROTOCOLS),
            )
        )
        await websocket.close(proto.CLOSE_UNSUPPORTED_PROTOCOL)
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
                or not 0 <= seq <= MAX_SEQ
                or not isinstance(run_id, str)
                or not run_id
            ):
                await websocket.send_text(
                    _error(
                        "bad_frame",
                        f"a {kind} event needs an integer 'seq' (0 to 2**63-1) and a string 'runId'",
                    )
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
            elif type(ts) is int and not -MAX_TS <= ts <= MAX_TS:
                await websocket.send_text(
                    _error("bad_frame", f"'ts' is out of range (milliseconds since 1970, at most {MAX_TS})")
                )
                continue
            store.put_event(conn.client_id, conn.app, frame, raw, float(ts))
            if kind == proto.EXEC_PAUSED:
                hub.on_paused(conn, frame)
            elif kind == proto.EXEC_RESUMED:
                hub.on_resumed(conn, frame)
            if store.backlog > BACKLOG_HIGH or store.backlog_bytes > BACKLOG_HIGH_BYTES:
                await store.wait_backlog_below(BACKLOG_LOW, BACKLOG_LOW_BYTES)
        elif kind == proto.DEBUG_ACK:
            version = frame.get("version")
            if isinstance(version, int) and not isinstance(version, bool):
                hub.on_ack(conn, version)
        elif kind == proto.GATE_UNKNOWN:
            hub.on_gate_unknown(conn, frame.get("gateId"))
        elif kind == proto.HELLO:
            await websocket.send_text(_error("bad_frame", "hello was already received on this connection"))
        else:
            await websocket.send_text(_error("unknown_type", f"unknown frame type {kind!r}; ignored"))
