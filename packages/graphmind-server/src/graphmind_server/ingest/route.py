"""`WS /ingest`: protocol v1 with the apps (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from graphmind import protocol as proto

from .._version import __version__
from ..export.namespace import live_client
from ..hub.connections import AppConnection
from ..hub.control_first import ENTRIES_PER_LOOK
from ..hub.state import Hub
from ..store.derive import text as clean_text
from .auth import challenge_for
from .lossframe import take_dropped, take_stored_query

EVENT_TYPES = proto.EVENT_TYPES
GATE_EVENTS = frozenset({proto.EXEC_PAUSED, proto.EXEC_RESUMED})
HELLO_TIMEOUT_S = 5.0  # the upgrade and the hello together are also bounded by limits.HANDSHAKE_TIMEOUT_S
# Past this many uncommitted events, or this much uncommitted event text, the hub stops reading
# from apps until the writer catches up: a flood slows the senders (TCP backpressure; the app's
# events wait in its own bounded ring) instead of growing the hub's memory (docs/hub.md).
BACKLOG_HIGH = 50_000
BACKLOG_LOW = 10_000
BACKLOG_HIGH_BYTES = 32 * 1024 * 1024
BACKLOG_LOW_BYTES = 8 * 1024 * 1024
MAX_SEQ = 2**63 - 1  # SQLite's INTEGER
MAX_TS = 2**63 - 1  # an integer ts beyond this would not fit a double's exact range anyway


_BATCH_HEAD = '{"type":"batch",'


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
    return _checked(obj), text


def _checked(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise BadFrame("a frame must be a JSON object")
    if not isinstance(obj.get("type"), str):
        raise BadFrame("a frame needs a string field 'type'")
    return obj


Entry = tuple[dict[str, Any], str] | BadFrame
_PLAIN = json.JSONDecoder()  # reads NaN and 1e400 too: only to find where such an entry ends
# …and an integer of more than 4,300 digits (which int() refuses): an entry holding one is refused
# on its own, not the whole batch around it.
_ANY = json.JSONDecoder(parse_int=lambda _: 0)
_SPACE = re.compile(r"[ \t\n\r]*")
_WHITESPACE = frozenset(" \t\n\r")


def _skip(text: str, i: int) -> int:
    """The index of the first character at or after `i` that is not JSON whitespace."""
    if text[i : i + 1] not in _WHITESPACE:  # compact JSON (every SDK's): no regex call (issue 38)
        return i
    match = _SPACE.match(text, i)
    return match.end() if match else i


def parse_batch(text: str) -> list[Entry]:
    """A batch frame's entries, each as parse_frame would return it had it come alone (the object
    and the exact text to store), or the BadFrame it would have raised. BadFrame for a frame that is
    not a well-formed batch: then none of its entries is taken."""
    try:
        entries = _scan_batch(text)
    except BadFrame:
        raise
    except (ValueError, IndexError, RecursionError) as exc:
        raise BadFrame(
            f"a batch frame must be a JSON object with a list 'events' ({str(exc)[:200]})"
        ) from None
    if entries is None:
        raise BadFrame("a batch frame needs a list 'events'")
    return entries


def _scan_batch(text: str) -> list[Entry] | None:
    """Walks the top-level object key by key (any order, any spacing), decoding each entry of
    `events` on its own so its text is known; json.loads would lose where each one starts and ends."""
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        raise ValueError("not an object")
    i = _skip(text, i + 1)
    kind: Any = None
    entries: list[Entry] | None = None
    if text[i : i + 1] == "}":
        i += 1
    else:
        while True:
            if text[i : i + 1] != '"':
                raise ValueError(f"expected a key at {i}")
            key, i = scanstring(text, i + 1)
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise ValueError(f"expected ':' at {i}")
            i = _skip(text, i + 1)
            if key == "events" and text[i : i + 1] == "[":
                entries, i = _scan_entries(text, i + 1)
            else:
                value, i = _PLAIN.raw_decode(text, i)
                if key == "type":
                    kind = value
                elif key == "events":
                    entries = None  # not a list
            i = _skip(text, i)
            sep = text[i : i + 1]
            i = _skip(text, i + 1)
            if sep == "}":
                break
            if sep != ",":
                raise ValueError(f"expected ',' or '}}' at {i}")
    if _skip(text, i) != len(text):
        raise ValueError("extra data after the object")
    if kind != proto.BATCH:
        raise BadFrame("not a batch frame")
    return entries


def _scan_entries(text: str, i: int) -> tuple[list[Entry], int]:
    entries: list[Entry] = []
    i = _skip(text, i)
    if text[i : i + 1] == "]":
        return entries, i + 1
    while True:
        start = i
        try:
            obj, i = _DECODER.raw_decode(text, start)
            entry: Entry = (_checked(obj), text[start:i])
        except BadFrame as exc:
            if i == start:  # the decoder refused NaN or 1e400: decided as parse_frame would
                _, i = _ANY.raw_decode(text, start)
                try:
                    entry = parse_frame(text[start:i])
                except BadFrame as inner:
                    entry = inner
            else:
                entry = exc
        except ValueError as exc:
            if "digits" not in str(exc):
                raise  # not JSON at all: the batch is not well formed
            _, i = _ANY.raw_decode(text, start)
            entry = BadFrame(f"frame is not JSON ({str(exc)[:200]})")
        entries.append(entry)
        sep = text[i : i + 1]
        if sep != ",":  # the compact case is one comparison; anything else takes the general path
            i = _skip(text, i)
            sep = text[i : i + 1]
        i = _skip(text, i + 1)
        if sep == "]":
            return entries, i
        if sep != ",":
            raise ValueError(f"expected ',' or ']' at {i}")


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
    while True:
        # A turn for every other connection between two frames: a queued receive() returns without
        # yielding, so a busy app's task would take its whole queue while a held gate's frame, read
        # on its own connection, waited behind it (the gate lane, hub/control_first.py).
        await asyncio.sleep(0)
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            conn.close_code = message.get("code")  # 1005/1006: no close frame (hub/state.py abandon_reason)
            return
        if hub.control.answering:  # an answer to a gate goes first (hub/control_first.py)
            await hub.control.wait(conn)
        text = message.get("text")
        if text is None:
            await websocket.send_text(
                _error("bad_frame", "binary frames are not part of the protocol; send JSON text")
            )
            continue
        try:
            if text.startswith(_BATCH_HEAD):  # the SDK's spelling: skip the whole-frame parse
                await _batch(websocket, hub, conn, parse_batch(text))
                continue
            frame, raw = parse_frame(text)
            if frame["type"] == proto.BATCH:  # another client's spelling of a batch
                await _batch(websocket, hub, conn, parse_batch(text))
                continue
        except BadFrame as exc:
            await websocket.send_text(_error("bad_frame", str(exc)))
            continue
        await _frame(websocket, hub, conn, frame, raw)


async def _batch(websocket: WebSocket, hub: Hub, conn: AppConnection, entries: list[Entry]) -> None:
    """Each entry exactly as if it had come alone, in order; a bad one is answered and skipped.
    An event takes the synchronous path (`_take_event`): no coroutine per entry (issue 38)."""
    store, control = hub.store, hub.control
    gate = _carries_gate(entries)
    for n, entry in enumerate(entries):
        if n and not n % ENTRIES_PER_LOOK:
            if control.answering:
                await control.wait(conn)
            elif not gate:
                await asyncio.sleep(0)  # a turn for a gate arriving on another connection
        if isinstance(entry, BadFrame):
            await websocket.send_text(_error("bad_frame", f"batch entry {n}: {entry}"))
            continue
        frame, raw = entry
        kind = frame["type"]
        if kind in EVENT_TYPES:
            problem = _take_event(hub, conn, frame, raw)
            if problem is not None:
                await websocket.send_text(_error("bad_frame", f"batch entry {n}: {problem}"))
            elif not gate and (store.backlog > BACKLOG_HIGH or store.backlog_bytes > BACKLOG_HIGH_BYTES):
                await store.wait_backlog_below(BACKLOG_LOW, BACKLOG_LOW_BYTES)
        elif kind in (proto.BATCH, proto.HELLO):
            await websocket.send_text(
                _error("bad_frame", f"batch entry {n}: a {kind} cannot be inside a batch")
            )
        else:
            await _frame(websocket, hub, conn, frame, raw, f"batch entry {n}: ")


def _carries_gate(entries: list[Entry]) -> bool:
    """Whether a batch holds a gate (exec.paused) or a gate's release (exec.resumed): such a batch is
    the gate lane's, taken whole, without waiting for the store's backlog or yielding to bulk work
    (docs/protocol.md, "Batch frames"). The SDK's write loop sends an exec.paused at once, in the
    batch with its node.started (graphmind/_wire/write_loop.py); looked for from the end, where it is."""
    return any(type(entry) is tuple and entry[0]["type"] in GATE_EVENTS for entry in reversed(entries))


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
        elif kind not in GATE_EVENTS and (
            store.backlog > BACKLOG_HIGH or store.backlog_bytes > BACKLOG_HIGH_BYTES
        ):
            await store.wait_backlog_below(BACKLOG_LOW, BACKLOG_LOW_BYTES)
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
