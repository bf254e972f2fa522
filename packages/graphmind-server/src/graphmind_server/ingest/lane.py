"""The gate lane of `/ingest`: a held gate goes ahead of every app's bulk events, end to end in the
hub (docs/performance.md, "Where users wait"; the answer's way back is hub/control_first.py).

One event loop reads every app's connection, and asyncio runs what is ready in turn: a gate's frame
read from its socket waited for every busy app's next slice of bulk work before its own ingest task
ran, and flow control (the store's backlog) could stop a connection mid-batch with the gate in it.
The lane, in the order a gate's frame meets it:

- **Read ahead** (`peek`): the WebSocket protocol shows each text message to its connection's ingest
  before queueing it (http/wsprotocol.py, `PEEK_EXTENSION`). A message that holds an `exec.paused`
  puts its connection in `ControlFirst` at once, as an answer's round trip does: every other
  connection's bulk ingest waits at its next look (before a frame, every ENTRIES_PER_LOOK batch
  entries) and the store writer before its next transaction, until that frame is handled
  (`taken`) or MAX_WAIT_S has passed. So the gate's ingest task is the next real work the loop does.
- **Taken whole** (`carries_gate`): a frame or batch holding an `exec.paused` or `exec.resumed` never
  waits for the store's backlog and never yields to bulk work half way through.
- **Bulk yields** (`turn`, `look`): every ingest task gives the loop a turn before each
  frame (a queued `receive()` returns without yielding) and every ENTRIES_PER_LOOK batch entries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from graphmind import protocol as proto

from ..hub.connections import AppConnection
from ..hub.control_first import ControlFirst
from ..store import Store

GATE_EVENTS = frozenset({proto.EXEC_PAUSED, proto.EXEC_RESUMED})
# Past this many uncommitted events, or this much uncommitted event text, the hub stops reading
# from apps until the writer catches up: a flood slows the senders (TCP backpressure; the app's
# events wait in its own bounded ring) instead of growing the hub's memory (docs/hub.md).
BACKLOG_HIGH = 50_000
BACKLOG_LOW = 10_000
BACKLOG_HIGH_BYTES = 32 * 1024 * 1024
BACKLOG_LOW_BYTES = 8 * 1024 * 1024
# How a held gate reads in a frame's text: the SDK's compact JSON, and any client's `"type": "…"`.
# A quote inside a string value is escaped (\"), so a payload mentioning the word does not match;
# a value that is exactly "exec.paused" does, and costs bulk one short wait.
_PAUSED = b'"exec.paused"'
_PAUSED_TEXT = '"exec.paused"'


def carries_gate(entries: Sequence[Any]) -> bool:
    """Whether a batch holds a gate (exec.paused) or a gate's release (exec.resumed): such a batch is
    taken whole, without waiting for the store's backlog or yielding to bulk work (docs/protocol.md,
    "Batch frames"). The SDK's write loop sends an exec.paused at once, in the batch with its
    node.started (graphmind/_wire/write_loop.py); looked for from the end, where it is."""
    return any(type(entry) is tuple and entry[0]["type"] in GATE_EVENTS for entry in reversed(entries))


def peek(control: ControlFirst, conn: AppConnection, parts: Sequence[bytes]) -> None:
    """Called by the WebSocket protocol with a text message's bytes as it is read from the socket,
    before it waits in the connection's queue: a held gate puts bulk work behind it from now on."""
    if any(_PAUSED in part for part in parts):
        control.coming(conn)


def taken(control: ControlFirst, conn: AppConnection, text: str) -> None:
    """After `conn`'s ingest handled a message: the gate `peek` saw in it is in the hub now."""
    if conn in control.incoming and _PAUSED_TEXT in text:
        control.taken(conn)


async def turn() -> None:
    """A turn for every other task before the next frame: a queued `receive()` returns without
    yielding, so a busy app's task would take its whole queue while a gate's frame, read on its own
    connection, waited behind it."""
    await asyncio.sleep(0)


async def after_receive(control: ControlFirst, conn: AppConnection) -> None:
    """Before a frame is handled: a gate coming in, or an answer on its way, goes first."""
    if control.answering:
        await control.wait(conn)


async def look(control: ControlFirst, conn: AppConnection, gate: bool) -> None:
    """Every ENTRIES_PER_LOOK entries of a batch (hub/control_first.py) (the caller counts: no coroutine per entry): a gate
    coming in or an answer goes first; else a turn for a gate's frame on another connection. A
    gate's own batch never yields: it is taken whole."""
    if not gate and not control.answering:
        await asyncio.sleep(0)
    # Looked at after the turn too: the gate's frame may have been read during it, and its ingest
    # task runs after this one's next slice otherwise.
    if control.answering:
        await control.wait(conn)


def backlogged(store: Store) -> bool:
    """Whether the store's writer is this far behind: bulk events wait (`wait_backlog`), never a
    gate's frame (the gate must reach /api/gates without waiting for the writer)."""
    return store.backlog > BACKLOG_HIGH or store.backlog_bytes > BACKLOG_HIGH_BYTES


async def wait_backlog(store: Store) -> None:
    await store.wait_backlog_below(BACKLOG_LOW, BACKLOG_LOW_BYTES)
