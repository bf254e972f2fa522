"""`WS /api/live`: the viewer's feed, with catch-up from a cursor (docs/api.md, "The live feed").

Each viewer is bounded: at most QUEUE_MAX frames and QUEUE_MAX_BYTES of text wait for it, and a
send that cannot complete within SEND_DEADLINE_S (a viewer that stopped reading: its socket buffer
is full) closes it. Either way its queue is freed at once and the connection is cut, not left to a
close frame that would wait behind the stuck send; the viewer reconnects with `?after=`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket

from graphmind import protocol as proto

from ..base.jsontext import dumps
from ..hub.state import Hub
from ..store import reads
from .wsprotocol import ABORT_EXTENSION  # set by serve.py's protocol: cuts the TCP connection now

QUEUE_MAX = 20_000  # frames a viewer may fall behind before the hub closes it (it reconnects with ?after=)
QUEUE_MAX_BYTES = 16 * 1024 * 1024  # and characters of frame text
SEND_DEADLINE_S = 5.0  # a send (or the close) that takes longer than this closes the viewer
CATCH_UP_PAGE = 1000
CLOSE_FELL_BEHIND = 1013
CLOSE_BAD_CURSOR = 1008

_log = logging.getLogger("graphmind.live")


class Viewer:
    def __init__(self) -> None:
        self.frames: deque[str] = deque()
        self.bytes = 0
        self.overflowed = False
        self.wakeup = asyncio.Event()

    def offer(self, text: str) -> None:
        if self.overflowed:
            return
        if len(self.frames) >= QUEUE_MAX or self.bytes + len(text) > QUEUE_MAX_BYTES:
            self.overflowed = True
            self.frames.clear()  # freed now, not when the stuck socket finally gives up
            self.bytes = 0
        else:
            self.frames.append(text)
            self.bytes += len(text)
        self.wakeup.set()

    async def next(self) -> str | None:
        """The next frame, or None once the viewer fell behind."""
        while not self.frames and not self.overflowed:
            self.wakeup.clear()
            await self.wakeup.wait()
        if self.overflowed:
            return None
        text = self.frames.popleft()
        self.bytes -= len(text)
        return text


class StuckViewer(Exception):
    pass


class Sender:
    """Sends a viewer's frames and remembers since when the current send has been waiting.

    A watchdog (`watch`) checks that once a second, so the common send costs one attribute write
    instead of an `asyncio.wait_for` (a task per frame; 10,000 frames of catch-up would feel it)."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.since: float | None = None
        self.loop = asyncio.get_running_loop()

    async def send(self, text: str) -> None:
        self.since = self.loop.time()
        await self.websocket.send_text(text)
        self.since = None

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, SEND_DEADLINE_S / 4))
            since = self.since
            if since is not None and self.loop.time() - since > SEND_DEADLINE_S:
                raise StuckViewer


async def live(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    store = hub.store
    after_text = websocket.query_params.get("after")
    # The viewer offers graphmind.v1 (and its token as a second subprotocol, access/guard.py): a browser
    # fails the connection unless the hub picks one of the subprotocols it offered.
    offered = websocket.scope.get("subprotocols") or []
    await websocket.accept(subprotocol=proto.LIVE_SUBPROTOCOL if proto.LIVE_SUBPROTOCOL in offered else None)
    after: int | None = None
    if after_text is not None:
        try:
            after = int(after_text)
        except ValueError:
            await websocket.send_text(
                json.dumps(
                    {
                        "type": "error",
                        "code": "bad_cursor",
                        "message": f"?after= must be a whole number (got {after_text!r})",
                    }
                )
            )
            await websocket.close(CLOSE_BAD_CURSOR)
            return
    viewer = Viewer()
    # Registering and reading the committed cursor happen without an await in between: every live
    # event frame queued from here on has a cursor above `upto`, so catch-up and live never overlap.
    hub.viewers.add(viewer)
    upto = store.last_cursor
    sender = Sender(websocket)
    tasks = [
        asyncio.ensure_future(_feed(sender, hub, viewer, after, upto)),
        asyncio.ensure_future(_drain(websocket)),
        asyncio.ensure_future(sender.watch()),
    ]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for task in done:  # retrieved here, so a viewer leaving mid-send is never "never retrieved"
            exc = None if task.cancelled() else task.exception()
            if isinstance(exc, StuckViewer):
                raise exc
    except StuckViewer:
        _log.info("graphmind: closed a viewer that stopped reading for %.0f s", SEND_DEADLINE_S)
        _abort(websocket)
    except Exception as exc:  # the viewer went away
        _log.debug("graphmind: viewer gone (%r)", exc)
    finally:
        hub.viewers.discard(viewer)
        viewer.frames.clear()


def _abort(websocket: WebSocket) -> None:
    abort: Callable[[], None] | None = websocket.scope.get("extensions", {}).get(ABORT_EXTENSION)
    if abort is not None:
        abort()


async def _feed(sender: Sender, hub: Hub, viewer: Viewer, after: int | None, upto: int) -> None:
    """hello, the catch-up from `after`, then the live frames until the viewer falls behind."""
    await sender.send(
        dumps(
            {
                "type": "hello",
                "cursor": upto,
                "debug": hub.debug.to_json(),
                "pause": hub.armed.to_json(),
                "gates": [g.to_api() for g in hub.gates.values()],
                "storing": hub.store.not_storing is None,
                "reason": hub.store.not_storing,
            }
        )
    )
    if after is not None and after < upto:
        await _catch_up(sender, hub, after, upto)
    while True:
        text = await viewer.next()
        if text is None:
            try:
                await asyncio.wait_for(
                    sender.websocket.close(
                        CLOSE_FELL_BEHIND, "viewer fell behind; reconnect with ?after=<last cursor>"
                    ),
                    SEND_DEADLINE_S,
                )
            except asyncio.TimeoutError:
                raise StuckViewer from None
            return
        await sender.send(text)


async def _catch_up(sender: Sender, hub: Hub, after: int, upto: int) -> None:
    cursor = after
    while True:
        rows = await hub.store.read(reads.events_between, cursor, upto, CATCH_UP_PAGE)
        for row_cursor, run_id, raw in rows:
            await sender.send(
                f'{{"type":"event","cursor":{row_cursor},"runId":{json.dumps(run_id)},"event":{raw}}}'
            )
        if len(rows) < CATCH_UP_PAGE:
            break
        cursor = rows[-1][0]
    held = hub.held_counts()
    for run_cursor, run in await hub.store.read(reads.runs_changed_between, after, upto):
        run["heldCount"] = held.get(run["id"], 0)
        await sender.send(dumps({"type": "run", "cursor": run_cursor, "run": run}))


async def _drain(websocket: WebSocket) -> None:
    while True:
        message: Any = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
