"""An in-process hub speaking protocol v1, for tests of the SDK and of adapters.

    with FakeHub(pause_on_error="off") as hub:
        client = graphmind.Client(app="t", url=hub.url)
        hub.set_debug(breakpoints=[("tool:search", "before")])
        assert client.ready()
        hub.auto_answer("inject", ["injected"])   # or: paused = hub.next_paused(); hub.resolve(paused["gateId"], ...)

It runs a `websockets` asyncio server on a loopback ephemeral port in a daemon thread. It stores
nothing: `hub.events` is every event received, in order. The real hub is `graphmind-server`.
Like it, it advertises batch frames in its `welcome` and unpacks them into `hub.events`;
`FakeHub(batch=False)` is a hub that does not (one frame per event, as hubs before batch frames).
It advertises `dropped` frames too and keeps their latest totals in `hub.dropped` ({runId:
{reason: events}}); `FakeHub(dropped=False)` is a hub from before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from .. import protocol as proto

# (action, value) or (action, value, fields): fields are more of the answer's, e.g.
# {"input": {...}} or {"reload": True} (docs/protocol.md, "Editing a held call").
Answer = tuple[str, Any] | tuple[str, Any, dict[str, Any]]


class FakeHub:
    def __init__(
        self, *, pause_on_error: str = "off", mode: str = "run", batch: bool = True, dropped: bool = True
    ) -> None:
        self._debug: dict[str, Any] = {
            "version": 1,
            "breakpoints": [],
            "mode": mode,
            "pauseOnError": pause_on_error,
        }
        self.events: list[dict[str, Any]] = []
        self.acks: list[int] = []
        self.unknown_gates: list[str] = []
        self.hellos: list[dict[str, Any]] = []
        self.batch = batch  # advertise batch frames (read at each connection's welcome)
        self.takes_dropped = dropped  # advertise `dropped` frames
        self.dropped: dict[str, dict[str, int]] = {}  # the latest `dropped` totals received
        self.frames = 0  # frames received after the hellos
        self.batch_frames = 0  # of which batch frames
        self.protocol_errors: list[str] = []  # what a client sent that this hub did not allow
        self._cond = threading.Condition()
        self._connections: set[Any] = set()
        self._auto: Callable[[dict[str, Any]], Answer | None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.accept = True  # False: refuse new connections (close right after the upgrade)

    # ---- lifecycle -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ingest"

    def start(self, port: int = 0) -> FakeHub:
        started = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)

            async def boot() -> None:
                from websockets.asyncio.server import serve

                self._server = await serve(self._handle, "127.0.0.1", port, max_size=None, compression=None)
                self.port = self._server.sockets[0].getsockname()[1]
                started.set()

            loop.run_until_complete(boot())
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=main, name="graphmind-fakehub", daemon=True)
        self._thread.start()
        if not started.wait(5):
            raise RuntimeError("FakeHub did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            self._server.close()
            for ws in list(self._connections):
                with contextlib.suppress(Exception):
                    await ws.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(3)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(3)
        self._loop = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the connection ----------------------------------------------------------------------
    async def _handle(self, ws: Any) -> None:
        if not self.accept:
            await ws.close(1013, "not accepting")
            return
        try:
            hello = json.loads(await ws.recv())
        except Exception:
            return
        with self._cond:
            self.hellos.append(hello)
        welcome: dict[str, Any] = {
            "type": proto.WELCOME,
            "protocol": 1,
            "hub": {"name": "fakehub", "version": "0"},
            "debug": self._debug,
        }
        capabilities = [proto.BATCH] if self.batch else []
        capabilities += [proto.DROPPED] if self.takes_dropped else []
        if capabilities:
            welcome[proto.CAPABILITIES] = capabilities
        await ws.send(proto.encode(welcome))
        self._connections.add(ws)
        try:
            async for message in ws:
                frame = json.loads(message)
                with self._cond:
                    self.frames += 1
                if frame.get("type") != proto.BATCH:
                    await self._on_frame(ws, frame)
                    continue
                with self._cond:
                    self.batch_frames += 1
                    if not self.batch:  # a client must not: recorded for the test to fail on
                        self.protocol_errors.append("a batch frame sent to a hub that did not advertise them")
                for entry in frame["events"]:
                    await self._on_frame(ws, entry)
        except Exception:
            pass
        finally:
            self._connections.discard(ws)

    async def _on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        with self._cond:
            if kind == proto.DEBUG_ACK:
                self.acks.append(frame.get("version", 0))
            elif kind == proto.GATE_UNKNOWN:
                self.unknown_gates.append(frame.get("gateId", ""))
            elif kind == proto.DROPPED:
                if not self.takes_dropped:
                    self.protocol_errors.append("a dropped frame sent to a hub that did not advertise them")
                self.dropped.update(frame.get("runs") or {})
            else:
                self.events.append(frame)
            self._cond.notify_all()
        if kind == proto.EXEC_PAUSED and self._auto is not None:
            answer = self._auto(frame)
            if answer is not None:
                frame_out = {"type": proto.GATE_RESOLVE, "gateId": frame["gateId"], "action": answer[0]}
                frame_out["value"] = answer[1]
                if len(answer) > 2:
                    frame_out.update(answer[2])
                await ws.send(proto.encode(frame_out))

    def _broadcast(self, frame: dict[str, Any]) -> None:
        loop = self._loop
        assert loop is not None

        async def send_all() -> None:
            for ws in list(self._connections):
                with contextlib.suppress(Exception):
                    await ws.send(proto.encode(frame))

        asyncio.run_coroutine_threadsafe(send_all(), loop).result(3)

    # ---- steering ------------------------------------------------------------------------------
    def set_debug(
        self,
        breakpoints: Iterable[tuple[str, str]] | None = None,
        mode: str | None = None,
        pause_on_error: str | None = None,
        wait_ack: bool = True,
        pause_on_handoff: str | None = None,
    ) -> None:
        if breakpoints is not None:
            self._debug["breakpoints"] = [{"nodeId": n, "gate": g} for n, g in breakpoints]
        if mode is not None:
            self._debug["mode"] = mode
        if pause_on_error is not None:
            self._debug["pauseOnError"] = pause_on_error
        if pause_on_handoff is not None:
            self._debug["pauseOnHandoff"] = pause_on_handoff
        self._debug["version"] += 1
        version = self._debug["version"]
        self._broadcast({"type": proto.DEBUG_STATE, **self._debug})
        if wait_ack and self._connections:
            # every app attached acknowledged it (two clients: the first ack is not the second's)
            self.wait_for(
                lambda: self.acks.count(version) >= len(self._connections), what=f"debug.ack {version}"
            )

    def auto_answer(
        self, action: str | Callable[[dict[str, Any]], Answer | None] | None, value: Any = None
    ) -> None:
        """Answer every `exec.paused` automatically (a fixed answer, or a function of the paused event)."""
        if action is None or callable(action):
            self._auto = action
        else:
            self._auto = lambda _frame: (action, value)

    def resolve(self, gate_id: str, action: str, value: Any = None, **fields: Any) -> None:
        """`fields`: more of the answer's (`input=...`, `reload=True`)."""
        self._broadcast(
            {"type": proto.GATE_RESOLVE, "gateId": gate_id, "action": action, "value": value, **fields}
        )

    def pause(self, run_id: str | None = None) -> None:
        self._broadcast({"type": proto.PAUSE, "runId": run_id})

    def unpause(self, run_id: str | None = None) -> None:
        """Take back a `pause` not yet used (`pause.cancel`)."""
        self._broadcast({"type": proto.PAUSE_CANCEL, "runId": run_id})

    def abort_run(self, run_id: str) -> None:
        self._broadcast({"type": proto.RUN_ABORT, "runId": run_id})

    def drop_connections(self) -> None:
        """Closes every app connection abruptly (as a hub that went away)."""
        loop = self._loop
        assert loop is not None

        async def drop() -> None:
            for ws in list(self._connections):
                with contextlib.suppress(Exception):
                    ws.transport.abort()

        asyncio.run_coroutine_threadsafe(drop(), loop).result(3)

    # ---- waiting -------------------------------------------------------------------------------
    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
        """Until `predicate()` holds: asked at each frame the hub takes, and at least every 50 ms (a
        predicate on the app's side, `client.attached` say, changes with no frame to wake it)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"FakeHub: timed out waiting for {what}")
                self._cond.wait(min(left, 0.05))

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if e.get("type") == event_type]

    def next_paused(self, timeout: float = 5.0, after: int = 0) -> dict[str, Any]:
        """The first `exec.paused` beyond the first `after` ones."""
        self.wait_for(lambda: len(self.of_type(proto.EXEC_PAUSED)) > after, timeout, "exec.paused")
        return self.of_type(proto.EXEC_PAUSED)[after]

    def wait_event(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> dict[str, Any]:
        found: list[dict[str, Any]] = []

        def check() -> bool:
            for event in self.events:
                if predicate(event):
                    found.append(event)
                    return True
            return False

        self.wait_for(check, timeout, "event")
        return found[0]


class ThrowingGetterDict(dict):  # type: ignore[type-arg,unused-ignore]
    """A dict whose reads raise (its items() and []): a value a wrapper must record without failing the call."""

    def items(self) -> Any:
        raise RuntimeError("getter raised with secret 'hunter2'")

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("getter raised")


class ProxyLike:
    """An object whose every attribute access and repr() raise, like a JavaScript Proxy whose traps throw."""

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError("proxy trap")

    def __repr__(self) -> str:
        raise RuntimeError("proxy trap")


def one_kb_tool_args(*, meta: bool = True) -> dict[str, Any]:
    """A realistic tool call of about 1 KB of JSON (nested filters, a list of objects, free text),
    for the fingerprint's cost bound (the loop guard is held to a bound for a 1 KB input) and its benchmark.
    `meta`: with an MCP-style `_meta` entry, which the fingerprint leaves out."""
    args: dict[str, Any] = {
        "query": "cheap flights from Copenhagen to Oslo next weekend, window seat, no red-eye",
        "filters": {"airlines": ["SK", "DY", "D8"], "max_price": 250, "currency": "EUR", "stops": 0},
        "passengers": [{"type": "adult", "age": 34}, {"type": "child", "age": 7}],
        "page": 1,
        "page_size": 20,
        "sort": "price",
        "include": ["baggage", "seat_map", "fare_rules"],
    }
    if meta:
        args["_meta"] = {"progressToken": 17}
    args["notes"] = "n" * (1024 - len(json.dumps(args)) - 12)
    return args
