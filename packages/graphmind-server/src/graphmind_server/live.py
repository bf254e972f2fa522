"""`WS /api/live`: the viewer's feed, with catch-up from a cursor (docs/api.md, "The live feed")."""

from __future__ import annotations

import asyncio
import contextlib
import json

from starlette.websockets import WebSocket

from .hub import Hub
from .store import reads

QUEUE_MAX = 20_000  # frames a viewer may fall behind before the hub closes it (it reconnects with ?after=)
CATCH_UP_PAGE = 1000
_CLOSE = object()


class Viewer:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.overflowed = False

    def offer(self, text: str) -> None:
        if self.overflowed:
            return
        if self.queue.qsize() >= QUEUE_MAX:
            self.overflowed = True
            self.queue.put_nowait(_CLOSE)
            return
        self.queue.put_nowait(text)


async def live(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    store = hub.store
    after_text = websocket.query_params.get("after")
    await websocket.accept()
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
            await websocket.close(1008)
            return
    viewer = Viewer()
    # Registering and reading the committed cursor happen without an await in between: every live
    # event frame queued from here on has a cursor above `upto`, so catch-up and live never overlap.
    hub.viewers.add(viewer)
    upto = store.last_cursor
    try:
        await websocket.send_text(
            json.dumps(
                {
                    "type": "hello",
                    "cursor": upto,
                    "debug": hub.debug.to_json(),
                    "gates": [g.to_api() for g in hub.gates.values()],
                }
            )
        )
        if after is not None and after < upto:
            await _catch_up(websocket, hub, after, upto)
        sender = asyncio.ensure_future(_send(websocket, viewer))
        receiver = asyncio.ensure_future(_drain(websocket))
        _done, pending = await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    except Exception:
        pass  # the viewer went away
    finally:
        hub.viewers.discard(viewer)


async def _catch_up(websocket: WebSocket, hub: Hub, after: int, upto: int) -> None:
    cursor = after
    while True:
        rows = await hub.store.read(reads.events_between, cursor, upto, CATCH_UP_PAGE)
        for row_cursor, run_id, raw in rows:
            await websocket.send_text(
                f'{{"type":"event","cursor":{row_cursor},"runId":{json.dumps(run_id)},"event":{raw}}}'
            )
        if len(rows) < CATCH_UP_PAGE:
            break
        cursor = rows[-1][0]
    held = hub.held_counts()
    for run_cursor, run in await hub.store.read(reads.runs_changed_between, after, upto):
        run["heldCount"] = held.get(run["id"], 0)
        await websocket.send_text(json.dumps({"type": "run", "cursor": run_cursor, "run": run}))


async def _send(websocket: WebSocket, viewer: Viewer) -> None:
    while True:
        item = await viewer.queue.get()
        if item is _CLOSE:
            await websocket.close(1013, "viewer fell behind; reconnect with ?after=<last cursor>")
            return
        assert isinstance(item, str)
        await websocket.send_text(item)


async def _drain(websocket: WebSocket) -> None:
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
