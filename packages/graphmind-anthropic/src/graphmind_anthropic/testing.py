"""A fake Anthropic provider on a loopback port, for tests and demos that must not touch the network.

    from anthropic import Anthropic
    from graphmind_anthropic.testing import FakeAnthropic

    with FakeAnthropic() as fake:
        fake.script(["Hello!", FakeAnthropic.tool_use("search", {"q": "cairo"}), FakeAnthropic.error(529)])
        client = Anthropic(base_url=fake.base_url, api_key="test")
        client.messages.create(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
        assert fake.request_count == 1

It serves `POST /v1/messages` (JSON, or server-sent events when the request has `"stream": true`,
text and tool input split into `chunks` deltas) and `POST /v1/messages/count_tokens`. Each Messages
request takes the next scripted reply: a string (an assistant text), a dict (core's reply shape,
`{"content": ..., "tool_calls": [...]}`, or Anthropic's own `{"content": [blocks], ...}`),
`FakeAnthropic.error(...)` (an HTTP error: 429 rate limit, 529 overloaded, ...), or a callable
(called with the request body, returns one of those). With the script empty it answers
`default_reply`. Replies are deterministic (ids derive from the request and the reply), so the same
script gives field-for-field the same SDK objects twice. Standard library only: a
`ThreadingHTTPServer` in a daemon thread on an ephemeral port.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._inject import message_body, message_sse

__all__ = ["FakeAnthropic", "FakeError", "FakeRequest"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class FakeError:
    """An HTTP error reply (`FakeAnthropic.error(529)`)."""

    status: int = 429
    message: str = "Rate limited (fake)"
    type: str = "rate_limit_error"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeRequest:
    """One request the fake received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


class FakeAnthropic:
    def __init__(self, *, chunks: int = 8, chunk_delay: float = 0.0, default_reply: Any = "ok") -> None:
        """`chunks`: deltas per streamed text / tool input; `chunk_delay`: seconds between SSE events."""
        self.chunks = chunks
        self.chunk_delay = chunk_delay
        self.default_reply = default_reply
        self.requests: list[FakeRequest] = []
        self._script: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- scripting ----------------------------------------------------------------------------
    @staticmethod
    def error(status: int = 429, message: str | None = None, *, retry_after_ms: int = 1) -> FakeError:
        """An error reply: 429 rate limit, 529 overloaded, 500, ... `retry_after_ms` keeps the SDK's own
        retries fast (its `retry-after-ms` header)."""
        kind = _ERROR_TYPES.get(status, "api_error")
        return FakeError(
            status, message or f"fake error {status}", kind, {"retry-after-ms": str(retry_after_ms)}
        )

    @staticmethod
    def tool_use(
        name: str, input: Mapping[str, Any], tool_use_id: str | None = None, text: str | None = None
    ) -> dict[str, Any]:
        """An assistant reply that calls one tool (core's reply shape)."""
        call: dict[str, Any] = {"name": name, "arguments": dict(input)}
        if tool_use_id:
            call["id"] = tool_use_id
        return {"content": text, "tool_calls": [call]}

    def script(self, replies: Iterable[Any]) -> FakeAnthropic:
        """Queues replies, one per Messages request, in order (after any still queued)."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def request_count(self) -> int:
        """Requests received, every path and attempt counted."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """The `base_url` for `Anthropic(base_url=..., api_key=...)`."""
        if self._server is None:
            raise RuntimeError(
                "FakeAnthropic is not running: use `with FakeAnthropic() as fake:` or call start()"
            )
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="graphmind-fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- replies -----------------------------------------------------------------------------
    def _next(self, request: FakeRequest) -> Any:
        with self._lock:
            self.requests.append(request)
            reply = self._script.popleft() if self._script else self.default_reply
        # A callable reply decides from the request (a scripted model that reacts to the conversation).
        return reply(request.body) if callable(reply) else reply

    def render(self, request: Mapping[str, Any], reply: Any) -> dict[str, Any]:
        """The Message body for one scripted reply (deterministic)."""
        # The same reply to the same request has the same id streamed or not (so the two compare equal).
        request_key = {k: v for k, v in request.items() if k != "stream"}
        seed = hashlib.sha1(
            json.dumps([request_key, reply], sort_keys=True, default=str).encode()
        ).hexdigest()[:20]
        if isinstance(reply, Mapping) and reply.get("tool_calls"):
            calls = [dict(c) for c in reply["tool_calls"]]
            for i, call in enumerate(calls):
                call.setdefault("id", f"toolu_{seed}{i}")
            reply = {**reply, "tool_calls": calls}
        body = message_body(reply, request)
        body["id"] = f"msg_{seed}"
        words = sum(len(json.dumps(m).split()) for m in request.get("messages") or [])
        out_words = sum(len(json.dumps(b).split()) for b in body["content"])
        body["usage"] = {
            "input_tokens": words,
            "output_tokens": out_words,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        return body


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: an app that opens 20 connections at once (20
    # concurrent async calls) would see some refused.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a stream closed early, a pooled connection dropped) is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        request = FakeRequest("POST", path, body, {k.lower(): v for k, v in self.headers.items()})
        if not isinstance(body, dict):
            self._error(400, "invalid_request_error", "the request body is not a JSON object")
            return
        if path == "/v1/messages/count_tokens":
            with self.owner._lock:
                self.owner.requests.append(request)
            self._json(
                200, {"input_tokens": sum(len(json.dumps(m).split()) for m in body.get("messages") or [])}
            )
            return
        if path != "/v1/messages":
            self._error(404, "not_found_error", f"the fake provider does not serve {path}")
            return
        reply = self.owner._next(request)
        if isinstance(reply, FakeError):
            self._error(reply.status, reply.type, reply.message, reply.headers)
            return
        try:
            rendered = self.owner.render(body, reply)
        except Exception as exc:
            self._error(500, "api_error", f"the fake could not render the scripted reply: {exc}")
            return
        if not body.get("stream"):
            self._json(200, rendered)
            return
        payload = message_sse(rendered, self.owner.chunks)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for event in payload.split(b"\n\n"):
                if not event:
                    continue
                data = event + b"\n\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                if self.owner.chunk_delay:
                    time.sleep(self.owner.chunk_delay)  # pacing a stream, not synchronisation
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the app closed its stream early
            self.close_connection = True

    def _error(self, status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        self._json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)

    def _json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        content = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(content)))
        self.send_header("request-id", "req_fake")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(content)
