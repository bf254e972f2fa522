"""`WS /ingest`: protocol v1 with the apps (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from graphmind import protocol as proto

from .._version import __version__
from ..export.namespace import live_client
from ..http.wsprotocol import PEEK_EXTENSION
from ..hub.connections import AppConnection
from ..hub.control_first import ENTRIES_PER_LOOK
from ..hub.state import Hub
from ..store.derive import text as clean_text
from . import lane
from .auth import challenge_for
from .lossframe import take_dropped, take_stored_query
from .parse import BATCH_HEAD, BadFrame, Entry, parse_batch, parse_frame

__all__ = ["BadFrame", "ingest", "parse_batch", "parse_frame"]  # parse_*: also named here (tests, tools)

EVENT_TYPES = proto.EVENT_TYPES
HELLO_TIMEOUT_S = 5.0  # the upgrade and the hello together are also bounded by limits.HANDSHAKE_TIMEOUT_S
MAX_SEQ = 2**63 - 1  # SQLite's INTEGER
MAX_TS = 2**63 - 1  # an integer ts beyond this would not fit a double's exact range anyway


def _error(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": proto.ERROR, "code": code, "message": message, **extra})


def negotiate(hello: dict[str, Any]) -> int | None:
    return proto.negotiate(hello.get("protocols"), hello.get("protocol"))


async def ingest(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    challenge = challenge_for(websocket.scope, hub.settings.token)
    await websocket.accept(headers=challenge.headers() if challenge is not None else None)
    try:
        hello = await _read_hello(websocket)
    except (asyncio.TimeoutError, WebSocketDisconnect):
        return
    if hello is None:
        return
    if challenge is not None:
        if not challenge.hello_ok(hello):
            await websocket.send_text(
                _error(
                    "unauthorized",
                    "the hello's auth proof does not match this hub's token (docs/protocol.md)",
                )
            )
            await websocket.close(proto.CLOSE_UNAUTHORIZED)
            return
        trust = getattr(websocket.app.state, "trust", None)
        if trust is not None:
            trust(websocket.scope.get("client"))
    client_id = hello.get("clientId")
    if not isinstance(client_id, str) or not client_id:
        client_id = f"anon-{id(websocket):x}-{time.time_ns()}"
    app = hello.get("app")
    app = clean_text(app) if isinstance(app, str) and app else "unknown"
    client_id = live_client(clean_text(client_id))  # never in the import namespace
    conn = hub.attach(client_id, app, hello.get("pid"), websocket.send_text)
    control = hub.control
    show = websocket.scope.get("extensions", {}).get(PEEK_EXTENSION)
    if show is not None:  # the gate lane reads ahead (ingest/lane.py)
        show(lambda parts: lane.peek(control, conn, parts))
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
                    proto.CAPABILITIES: [proto.BATCH, proto.DROPPED, proto.STORED],
                }
            )
        )
        await hub.mark_ready(conn, version)
        await _frames(websocket, hub, conn)
    except WebSocketDisconnect:
        pass
    finally:
        if show is not None:
            show(None)  # what the socket still reads after this is never handled: no gate coming
        control.forget(conn)
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
    control = hub.control
    while True:
        await lane.turn()
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            conn.close_code = message.get("code")  # 1005/1006: no close frame (hub/state.py abandon_reason)
            return
        await lane.after_receive(control, conn)  # a gate coming in, or an answer, goes first
        text = message.get("text")
        if text is None:
            await websocket.send_text(
                _error("bad_frame", "binary frames are not part of the protocol; send JSON text")
            )
            continue
        try:
            await _message(websocket, hub, conn, text)
        finally:
            lane.taken(control, conn, text)


async def _message(websocket: WebSocket, hub: Hub, conn: AppConnection, text: str) -> None:
    """One text frame: a batch's entries, or one frame."""
    try:
        if text.startswith(BATCH_HEAD):  # the SDK's spelling: skip the whole-frame parse
            await _batch(websocket, hub, conn, parse_batch(text))
            return
        frame, raw = parse_frame(text)
        if frame["type"] == proto.BATCH:  # another client's spelling of a batch
            await _batch(websocket, hub, conn, parse_batch(text))
            return
    except BadFrame as exc:
        await websocket.send_text(_error("bad_frame", str(exc)))
        return
    await _frame(websocket, hub, conn, frame, raw)


async def _batch(websocket: WebSocket, hub: Hub, conn: AppConnection, entries: list[Entry]) -> None:
    """Each entry exactly as if it had come alone, in order; a bad one is answered and skipped.
    An event takes the synchronous path (`_take_event`): no coroutine per entry (issue 38)."""
    store, control = hub.store, hub.control
    gate = lane.carries_gate(entries)
    for n, entry in enumerate(entries):
        if n and not n % ENTRIES_PER_LOOK:
            await lane.look(control, conn, gate)
        if isinstance(entry, BadFrame):
            await websocket.send_text(_error("bad_frame", f"batch entry {n}: {entry}"))
            continue
        frame, raw = entry
        kind = frame["type"]
        if kind in EVENT_TYPES:
            problem = _take_event(hub, conn, frame, raw)
            if problem is not None:
                await websocket.send_text(_error("bad_frame", f"batch entry {n}: {problem}"))
            elif not gate and lane.backlogged(store):
                await lane.wait_backlog(store)
        elif kind in (proto.BATCH, proto.HELLO):
            await websocket.send_text(
                _error("bad_frame", f"batch entry {n}: a {kind} cannot be inside a batch")
            )
        else:
            await _frame(websocket, hub, conn, frame, raw, f"batch entry {n}: ")


def _take_event(hub: Hub, conn: AppConnection, frame: dict[str, Any], raw: str) -> str | None:
    """Stores one event; or why it is refused (the `bad_frame` message), storing nothing."""
    kind = frame["type"]
    seq, run_id = frame.get("seq"), frame.get("runId")
    if (
        not isinstance(seq, int)
        or isinstance(seq, bool)
        or not 0 <= seq <= MAX_SEQ
        or not isinstance(run_id, str)
        or not run_id
    ):
        return f"a {kind} event needs an integer 'seq' (0 to 2**63-1) and a string 'runId'"
    if clean_text(run_id) != run_id:
        return "runId must be valid Unicode text (it has a lone surrogate)"
    ts = frame.get("ts")
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        ts = time.time() * 1000.0
    elif type(ts) is int and not -MAX_TS <= ts <= MAX_TS:
        return f"'ts' is out of range (milliseconds since 1970, at most {MAX_TS})"
    hub.store.put_event(conn.client_id, conn.app, frame, raw, float(ts))
    hub.on_event(conn, frame)
    return None


async def _frame(
    websocket: WebSocket, hub: Hub, conn: AppConnection, frame: dict[str, Any], raw: str, where: str = ""
) -> None:
    """One frame handled (or one batch entry: `where` names it in an error)."""
    store = hub.store
    kind = frame["type"]
    if kind in EVENT_TYPES:
        problem = _take_event(hub, conn, frame, raw)
        if problem is not None:
            await websocket.send_text(_error("bad_frame", where + problem))
        elif kind not in lane.GATE_EVENTS and lane.backlogged(store):
            await lane.wait_backlog(store)
    elif kind == proto.DEBUG_ACK:
        version = frame.get("version")
        if isinstance(version, int) and not isinstance(version, bool):
            hub.on_ack(conn, version)
    elif kind == proto.GATE_UNKNOWN:
        hub.on_gate_unknown(conn, frame.get("gateId"))
    elif kind == proto.DROPPED:
        problem = take_dropped(store, conn.client_id, conn.app, frame)
        if problem is not None:
            await websocket.send_text(_error("bad_frame", where + problem))
    elif kind == proto.STORED_QUERY:
        problem = take_stored_query(store, conn.client_id, frame, websocket.send_text)
        if problem is not None:
            await websocket.send_text(_error("bad_frame", where + problem))
    elif kind == proto.HELLO:
        await websocket.send_text(
            _error("bad_frame", where + "hello was already received on this connection")
        )
    else:
        await websocket.send_text(_error("unknown_type", where + f"unknown frame type {kind!r}; ignored"))
