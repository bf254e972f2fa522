"""KitHub: core's gate-matrix kit (`graphmind.testing.gate_matrix`) against the real hub process.

The kit needs a hub with the `Hub` protocol of `graphmind/testing` (core's in-process `FakeHub` has
it). `KitHub` gives it over a running `HubProcess`, through nothing but what the hub offers a person
in the viewer (docs/api.md): it watches `WS /api/live` as the viewer does, sets the debug state with
`PUT /api/debug` and answers held gates with `POST /api/gates/{gateId}`. No back door: a case that
passes here passes for a person at the viewer.

    @pytest.fixture(scope="module")
    def hub_process(tmp_path_factory):
        with HubProcess(tmp_path_factory.mktemp("hub") / "hub.db") as process:
            yield process

    async def test_gate_matrix_on_the_real_hub(case, hub_process):
        await run_case(case, MySubject(), hub=lambda: KitHub(hub_process))

One hub process serves many cases: each case enters a fresh `KitHub`, which opens its own live feed
(so `events` holds only what was stored after it connected), resets the debug state (no
breakpoints, `mode`, `pause_on_error`; "off" by default, as the kit's FakeHub) and, on exit, waits
until the hub committed every event it had received, so the next case does not see this one's.

Where the real hub differs from FakeHub, and what KitHub does about it:
- `events` are the stored events, exactly as the app sent them, once committed (the live feed's
  `event` frames), in the order the hub received them.
- An `exec.paused` event carries the app's own gate id; the hub names the gate
  `<connectionId>-<app gate id>` (docs/api.md, `GET /api/gates`). `resolve` takes either and finds
  the held gate from the live feed's `gate.held` frames (which come before the event).
- The hub answers `POST /api/gates/...` only once the app confirmed (`exec.resumed`). An async app
  confirms from its event loop, which may be the very thread calling `resolve`; so `resolve` and
  `auto_answer` send their answer from a worker thread and return, as FakeHub's do. An answer the
  hub refuses (404, 422, 504, ...) is kept and raised by the next `wait_for` / `wait_event` and at
  exit, so a case fails with the hub's own message instead of a time-out.
- `PUT /api/debug` answers once every attached app acknowledged, or after 2 s with `pending`; with
  `wait_ack` KitHub puts the same state again until nobody is pending (a loaded machine can take
  longer than 2 s to acknowledge), up to `timeout`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from graphmind import protocol as proto
from graphmind.testing import Answer


class RunningHub(Protocol):
    """What KitHub needs of a running hub: `HubProcess` (or the hub tests' in-thread hub)."""

    @property
    def ingest_url(self) -> str: ...
    @property
    def live_url(self) -> str: ...
    def api(self, method: str, path: str, json: Any = None, *, timeout: float = ...) -> tuple[int, Any]: ...


AutoAnswer = Callable[[dict[str, Any]], Answer | None]


class HubRefused(AssertionError):
    """The hub refused an answer or a debug change, or its live feed closed: the hub's own words."""


class KitHub:
    """The gate-matrix kit's hub on a real `HubProcess` (module docstring). A context manager: enter
    it once per case; the process outlives it."""

    def __init__(
        self, process: RunningHub, *, pause_on_error: str = "off", mode: str = "run", timeout: float = 10.0
    ) -> None:
        self.process = process
        self.timeout = timeout  # the default of every wait, and of each answer and debug change
        self.events: list[dict[str, Any]] = []
        self.debug: dict[str, Any] = {}  # the hub's debug state, as the live feed last said it
        self.held: dict[str, dict[str, Any]] = {}  # hub gate id -> Gate (docs/api.md), held right now
        self.errors: list[str] = []  # answers and debug changes the hub refused, the feed closing
        self._mode = mode  # the debug state each case starts from (no breakpoints)
        self._pause_on_error = pause_on_error
        self._cond = threading.Condition()
        self._auto: AutoAnswer | None = None
        self._ws: ClientConnection | None = None
        self._reader: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._closing = False

    # ---- life ----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Where an app attaches (`graphmind.Client(url=...)`): the hub's `WS /ingest`."""
        return self.process.ingest_url

    def __enter__(self) -> KitHub:
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="kithub-answer")
        try:
            # __enter__ without `with`, as FakeApp: the feed outlives this call (websockets >= 17.1
            # warns about a bare connect()); _close() ends it.
            # Any: websockets 16 (the newest openai-agents allows) types __enter__ as its base Connection.
            ws: Any = connect(self.process.live_url, open_timeout=self.timeout, max_size=None).__enter__()
            self._ws = ws
            hello = json.loads(ws.recv(timeout=self.timeout))
            if hello.get("type") != "hello":
                raise AssertionError(f"the hub's live feed did not start with hello: {hello!r}")
            self.debug = hello["debug"]
            self.held = {gate["gateId"]: gate for gate in hello["gates"]}
            self._reader = threading.Thread(target=self._read, name="kithub-live", daemon=True)
            self._reader.start()
            self.set_debug(
                breakpoints=[], mode=self._mode, pause_on_error=self._pause_on_error, pause_on_handoff="off"
            )
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._auto = None
        try:
            # Read-your-writes (docs/api.md): answered once every event the hub had received is
            # committed, so none of this case's events reaches the next case's live feed. A hub
            # that is gone has nothing left to commit (and `errors` says its feed closed).
            with contextlib.suppress(OSError):
                self.process.api("GET", "/api/runs?limit=1", timeout=self.timeout)
        finally:
            self._close()
        if exc[0] is None and self.errors:
            raise HubRefused("the hub refused: " + "; ".join(self.errors))

    def _close(self) -> None:
        self._closing = True
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # every answer sent has its verdict (each is bounded)
        if self._ws is not None:
            self._ws.close()
        if self._reader is not None:
            self._reader.join(self.timeout)

    # ---- the live feed, as the viewer reads it --------------------------------------------------

    def _read(self) -> None:
        assert self._ws is not None
        try:
            for text in self._ws:
                try:
                    self._on_frame(json.loads(text))
                except Exception as exc:  # an auto_answer function that raised, a frame not understood
                    self._fail(f"handling the live frame {text[:200]!r}: {exc!r}")
        except ConnectionClosed as exc:
            if not self._closing:
                self._fail(f"the hub's live feed closed ({exc})")
            return
        if not self._closing:
            self._fail("the hub's live feed closed")

    def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        paused: dict[str, Any] | None = None
        with self._cond:
            if kind == "event":
                self.events.append(frame["event"])
                if frame["event"].get("type") == proto.EXEC_PAUSED:
                    paused = frame["event"]
            elif kind == "gate.held":
                self.held[frame["gate"]["gateId"]] = frame["gate"]
            elif kind == "gate.released":
                self.held.pop(frame["gateId"], None)
            elif kind == "debug":
                self.debug = frame["debug"]
            elif kind == "error":
                self.errors.append(f"live feed: {frame}")
            self._cond.notify_all()
        auto = self._auto
        if paused is not None and auto is not None and not self._closing:
            answer = auto(paused)
            if answer is not None:
                try:
                    self._send_answer(paused["gateId"], paused.get("runId"), *answer)
                except RuntimeError:  # the answer pool shut down: this KitHub is closing
                    if not self._closing:
                        raise

    def _fail(self, message: str) -> None:
        with self._cond:
            self.errors.append(message)
            self._cond.notify_all()

    # ---- steering, as the viewer does -----------------------------------------------------------

    def set_debug(
        self,
        *,
        breakpoints: Iterable[tuple[str, str]] | None = None,
        mode: str | None = None,
        pause_on_error: str | None = None,
        wait_ack: bool = True,
        pause_on_handoff: str | None = None,
    ) -> None:
        """`PUT /api/debug` with the fields given. `wait_ack`: return once every attached app has
        acknowledged it; else once the hub has applied it (its `debug` frame on the live feed)."""
        body: dict[str, Any] = {}
        if breakpoints is not None:
            body["breakpoints"] = [{"nodeId": node, "gate": gate} for node, gate in breakpoints]
        if mode is not None:
            body["mode"] = mode
        if pause_on_error is not None:
            body["pauseOnError"] = pause_on_error
        if pause_on_handoff is not None:
            body["pauseOnHandoff"] = pause_on_handoff
        if not wait_ack:
            version = self.debug.get("version", 0)
            self._submit(self._put_debug, body)
            self.wait_for(lambda: self.debug.get("version", 0) > version, what="the hub's debug frame")
            return
        deadline = time.monotonic() + self.timeout
        while True:
            pending = self._put_debug(body)
            if not pending:
                return
            if time.monotonic() > deadline:
                raise HubRefused(
                    f"apps {pending} did not acknowledge the debug state {body} in {self.timeout} s"
                )

    def _put_debug(self, body: dict[str, Any]) -> list[str]:
        """One PUT; the clients still pending after the hub's own 2 s wait."""
        status, answer = self.process.api("PUT", "/api/debug", body, timeout=self.timeout)
        if status != 200:
            raise ValueError(f"the hub refused the debug state {body}: {status} {answer}")
        with self._cond:
            if answer.get("version", 0) > self.debug.get("version", 0):
                self.debug = {k: v for k, v in answer.items() if k != "pending"}
        return list(answer.get("pending", []))

    def auto_answer(self, action: str | AutoAnswer | None, value: Any = None) -> None:
        """Answer every `exec.paused` stored from now on: a fixed answer, or a function of the event
        (returning `(action, value)`, or None to leave that gate held). None: stop answering."""
        if action is None or callable(action):
            self._auto = action
        else:
            fixed: Answer = (action, value)
            self._auto = lambda _event: fixed

    def resolve(
        self, gate_id: str, action: str, value: Any = None, *, wait: bool = False, **fields: Any
    ) -> None:
        """Answer a held gate (`gate_id`: the app's, from its `exec.paused`, or the hub's) through
        `POST /api/gates/{gateId}`. It returns at once, the answer going out from a worker thread
        (module docstring); `wait=True` returns once the app confirmed it, and raises if refused.
        `fields`: more of the answer's body (`input=...`, `reload=True`)."""
        future = self._send_answer(gate_id, None, action, value, fields)
        if wait:
            future.result()
            self._raise_errors()

    def _send_answer(
        self, gate_id: str, run_id: str | None, action: str, value: Any, fields: dict[str, Any] | None = None
    ) -> Future[None]:
        return self._submit(self._answer, gate_id, run_id, action, value, fields or {})

    def _answer(
        self, gate_id: str, run_id: str | None, action: str, value: Any, fields: dict[str, Any]
    ) -> None:
        hub_id = self._hub_gate_id(gate_id, run_id)
        body: dict[str, Any] = {"action": action}
        if action == proto.INJECT or value is not None:
            body["value"] = value
        body.update(fields)
        path = "/api/gates/" + urllib.parse.quote(hub_id, safe="")
        status, answer = self.process.api("POST", path, body, timeout=self.timeout)
        if status != 200:
            self._fail(f"POST {path} {body}: {status} {answer}")

    def _hub_gate_id(self, gate_id: str, run_id: str | None) -> str:
        """The hub's id of a held gate named by the hub's id or by the app's (and its run)."""
        found: list[str] = []

        def held() -> bool:
            if gate_id in self.held:
                found.append(gate_id)
                return True
            matches = [
                hub_id
                for hub_id, gate in self.held.items()
                if hub_id.split("-", 1)[-1] == gate_id and run_id in (None, gate["runId"])
            ]
            if len(matches) > 1:
                raise AssertionError(
                    f"gate id {gate_id!r} names {len(matches)} held gates {matches}; pass the hub's"
                )
            found.extend(matches)
            return bool(matches)

        self.wait_for(held, what=f"gate {gate_id!r} held by the hub")
        return found[0]

    def _submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        if self._pool is None:
            raise RuntimeError("KitHub is not entered: use it as `with KitHub(process) as hub:`")

        def run() -> Any:
            try:
                return fn(*args)
            except HubRefused:
                raise  # already in `errors`
            except Exception as exc:
                self._fail(f"{getattr(fn, '__name__', fn)}: {exc!r}")
                raise

        return self._pool.submit(run)

    # ---- reading and waiting --------------------------------------------------------------------

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if e.get("type") == event_type]

    def wait_for(
        self, predicate: Callable[[], bool], timeout: float | None = None, what: str = "condition"
    ) -> None:
        """Wait until `predicate()` (checked under the lock, on every frame); AssertionError with the
        hub's own words as soon as it refused something, TimeoutError at the deadline."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while True:
                self._raise_errors()
                if predicate():
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"KitHub: timed out after {limit} s waiting for {what}")
                self._cond.wait(left)

    def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float | None = None
    ) -> dict[str, Any]:
        """The first stored event (of this KitHub's) that satisfies `predicate`, waited for."""
        found: list[dict[str, Any]] = []

        def check() -> bool:
            found.extend(e for e in self.events if predicate(e))
            return bool(found)

        self.wait_for(check, timeout, "event")
        return found[0]

    def _raise_errors(self) -> None:
        if self.errors:
            raise HubRefused("the hub refused: " + "; ".join(self.errors))
