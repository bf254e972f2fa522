"""FakeApp: an app that speaks protocol v1 frame by frame, for tests of the hub and the viewer."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect


class FakeApp:
    """Attach to a hub's /ingest, send events with increasing seq, collect what the hub sends.

    - auto_ack: answer every `debug.state` with `debug.ack` (as a real SDK does).
    - auto_resume: answer every `gate.resolve` with `exec.resumed` (by "hub") for a gate this app
      holds, and `gate.unknown` otherwise.
    """

    def __init__(
        self,
        url: str,
        *,
        app: str = "fake-app",
        client_id: str | None = None,
        auto_ack: bool = True,
        auto_resume: bool = False,
        headers: Mapping[str, str] | None = None,
        hello: Mapping[str, Any] | None = None,
        attach: bool = True,
    ) -> None:
        self.url = url
        self.app = app
        self.client_id = client_id or uuid.uuid4().hex
        self.auto_ack = auto_ack
        self.auto_resume = auto_resume
        self.headers = dict(headers or {})
        self.hello_extra = dict(hello or {})
        self.seq = 0
        self.sent: list[dict[str, Any]] = []  # every event, like the SDK's replay buffer
        self.frames: list[dict[str, Any]] = []  # every hub frame received, in order
        self.held: dict[str, dict[str, Any]] = {}  # gateId -> its exec.paused
        self.debug: dict[str, Any] = {}
        self.welcome: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._ws: ClientConnection | None = None
        self._reader: threading.Thread | None = None
        self.closed = threading.Event()
        if attach:
            self.attach()

    # -- connection ----------------------------------------------------------------------------

    def attach(self, replay: bool = False) -> dict[str, Any]:
        """Connect and handshake; with replay, resend every event sent so far (as an SDK does)."""
        self.closed.clear()
        # __enter__ without `with`: the connection outlives this call (websockets >= 17.1 warns
        # about a bare connect()); close() ends it.
        # Any: websockets 16 (the newest openai-agents allows) types __enter__ as its base Connection.
        ws: Any = connect(
            self.url, open_timeout=5, additional_headers=self.headers or None, max_size=None, compression=None
        ).__enter__()
        self._ws = ws
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": 1,
                    "app": self.app,
                    "clientId": self.client_id,
                    "sdk": {"name": "fake-app", "version": "0"},
                    "pid": 0,
                    **self.hello_extra,
                }
            )
        )
        welcome = json.loads(ws.recv(timeout=5))
        if welcome.get("type") != "welcome":
            raise RuntimeError(f"expected welcome, got {welcome}")
        self.welcome = welcome
        self.debug = welcome["debug"]
        self._reader = threading.Thread(target=self._read, name="fake-app-reader", daemon=True)
        self._reader.start()
        if replay:
            for event in self.sent:
                self.send(event)
        return welcome  # type: ignore[no-any-return]

    def _read(self) -> None:
        ws = self._ws
        assert ws is not None
        try:
            for text in ws:
                frame = json.loads(text)
                self._on_frame(frame)
                with self._cond:
                    self.frames.append(frame)
                    self._cond.notify_all()
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.closed.set()
            with self._cond:
                self._cond.notify_all()

    def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "debug.state":
            self.debug = {k: v for k, v in frame.items() if k != "type"}
            if self.auto_ack:
                self.send({"type": "debug.ack", "version": frame.get("version")})
        elif kind == "gate.resolve" and self.auto_resume:
            paused = self.held.pop(str(frame.get("gateId")), None)
            if paused is None:
                self.send({"type": "gate.unknown", "gateId": frame.get("gateId")})
            else:
                self.resume(paused, frame.get("action", "continue"))

    def close(self) -> None:
        """A clean close (the app exits)."""
        if self._ws is not None:
            self._ws.close()
        self.closed.wait(5)

    def drop(self) -> None:
        """Cut the TCP connection without a close frame (the app crashed or the network went)."""
        if self._ws is not None:
            import socket

            # shutdown() (not just close()) wakes the reader thread blocked in recv().
            with contextlib.suppress(OSError):
                self._ws.socket.shutdown(socket.SHUT_RDWR)
            self.closed.wait(5)
            self._ws.socket.close()

    def __enter__(self) -> FakeApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending -------------------------------------------------------------------------------

    def send(self, frame: Mapping[str, Any] | str | bytes) -> None:
        """A frame: an object is sent as JSON text, a str as is, bytes as a binary frame."""
        assert self._ws is not None
        self._ws.send(frame if isinstance(frame, (str, bytes)) else json.dumps(frame))

    def event(self, type: str, run_id: str, **fields: Any) -> dict[str, Any]:
        """Send one event with the next seq; returns it."""
        self.seq += 1
        event = {"type": type, "seq": self.seq, "ts": time.time() * 1000, "runId": run_id, **fields}
        self.sent.append(event)
        self.send(event)
        return event

    def run_started(self, run_id: str, name: str = "agent", **fields: Any) -> dict[str, Any]:
        return self.event(
            "run.started",
            run_id,
            name=name,
            app=self.app,
            nodeId=f"agent:{name}",
            instanceId=run_id,
            kind="agent",
            meta={},
            implicit=False,
            **fields,
        )

    def run_finished(self, run_id: str, status: str = "finished", **fields: Any) -> dict[str, Any]:
        return self.event("run.finished", run_id, status=status, durationMs=1.0, **fields)

    def node_started(
        self, run_id: str, node_id: str, instance_id: str, input: Any = None, **fields: Any
    ) -> dict[str, Any]:
        kind, _, name = node_id.partition(":")
        return self.event(
            "node.started",
            run_id,
            nodeId=node_id,
            instanceId=instance_id,
            kind=kind,
            name=name,
            parentInstanceId=run_id,
            input=input,
            **fields,
        )

    def node_finished(
        self, run_id: str, node_id: str, instance_id: str, output: Any = None, **fields: Any
    ) -> dict[str, Any]:
        return self.event(
            "node.finished",
            run_id,
            nodeId=node_id,
            instanceId=instance_id,
            output=output,
            durationMs=1.0,
            heldMs=0.0,
            **fields,
        )

    def hold(
        self,
        run_id: str,
        node_id: str,
        instance_id: str,
        *,
        gate: str = "before",
        reason: str = "breakpoint",
        gate_id: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Send exec.paused; returns it (its gateId is this app's id, not the hub's)."""
        kind, _, name = node_id.partition(":")
        # What core offers: a before gate takes retry only at a loop hold (docs/protocol.md, "Gates").
        actions = fields.pop("actions", None) or (
            ["continue", "inject", "abort"]
            if gate == "before" and reason != "loop"
            else ["continue", "retry", "inject", "abort"]
        )
        paused = self.event(
            "exec.paused",
            run_id,
            nodeId=node_id,
            instanceId=instance_id,
            kind=kind,
            name=name,
            gateId=gate_id or f"g{self.seq + 1}",
            gate=gate,
            reason=reason,
            actions=actions,
            **fields,
        )
        self.held[paused["gateId"]] = paused
        return paused

    def resume(self, paused: Mapping[str, Any], action: str = "continue", by: str = "hub") -> dict[str, Any]:
        self.held.pop(paused["gateId"], None)
        return self.event(
            "exec.resumed",
            paused["runId"],
            nodeId=paused["nodeId"],
            instanceId=paused["instanceId"],
            gateId=paused["gateId"],
            gate=paused["gate"],
            action=action,
            heldMs=1.0,
            by=by,
        )

    # -- receiving -----------------------------------------------------------------------------

    def expect(
        self, type: str, timeout: float = 5.0, where: Callable[[dict[str, Any]], bool] | None = None
    ) -> dict[str, Any]:
        """The first received frame of that type (matching `where`) not returned before."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i, frame in enumerate(self.frames):
                    if frame.get("type") == type and (where is None or where(frame)):
                        del self.frames[i]
                        return frame
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no {type!r} frame within {timeout} s; got {self.frames}")
                self._cond.wait(remaining)
