"""The loopback HTTP server behind every fake provider (`FakeOpenAI`, `FakeAnthropic`, ...).

A fake subclasses `LoopbackFake` and implements `serve(request, http)` with its wire format; the base
owns the rest: a stdlib `ThreadingHTTPServer` in a daemon thread on an ephemeral 127.0.0.1 port, the
reply script (`script`, `default_reply`, callable replies), the request log (`requests`,
`request_count`), JSON and server-sent-event writing (`chunk_delay` paces events), and start/stop as
a context manager. Standard library only, so the fakes stay usable in demos and README blocks.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TypeVar

__all__ = ["FakeRequest", "LoopbackFake", "LoopbackHTTP"]

_F = TypeVar("_F", bound="LoopbackFake")


@dataclass(frozen=True)
class FakeRequest:
    """One request the fake received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


class LoopbackFake:
    """Base of a fake provider: subclasses set `thread_name` (and `base_path`) and implement `serve`."""

    thread_name: ClassVar[str] = "graphmind-fake"
    # Appended to `http://127.0.0.1:<port>` in `base_url` (e.g. "/v1" where the SDK expects it there).
    base_path: ClassVar[str] = ""
    # Sent with every JSON reply (e.g. a provider's request-id header its SDK reads).
    json_headers: ClassVar[Mapping[str, str]] = {}

    def __init__(self, *, chunks: int = 8, chunk_delay: float = 0.0, default_reply: Any = "ok") -> None:
        """`chunks`: deltas per streamed text / tool arguments; `chunk_delay`: seconds between SSE events."""
        self.chunks = chunks
        self.chunk_delay = chunk_delay
        self.default_reply = default_reply
        self.requests: list[FakeRequest] = []
        self._script: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- the wire format (subclasses) ------------------------------------------------------------
    def serve(self, request: FakeRequest, http: LoopbackHTTP) -> None:
        """Answers one POST: `record` or `next_reply` it, then `http.json(...)` or `http.sse(...)`."""
        raise NotImplementedError(f"{type(self).__name__} must implement serve(request, http)")

    # ---- scripting -------------------------------------------------------------------------------
    def script(self: _F, replies: Iterable[Any]) -> _F:
        """Queues replies, one per request, in order (after any still queued)."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def request_count(self) -> int:
        """Requests received, every path and attempt counted."""
        with self._lock:
            return len(self.requests)

    def record(self, request: FakeRequest) -> None:
        """Logs a request that takes no scripted reply."""
        with self._lock:
            self.requests.append(request)

    def next_reply(self, request: FakeRequest) -> Any:
        """Logs the request and takes the next scripted reply (`default_reply` once the script is empty)."""
        with self._lock:
            self.requests.append(request)
            reply = self._script.popleft() if self._script else self.default_reply
        # A callable reply decides from the request (a scripted model that reacts to the conversation).
        return reply(request.body) if callable(reply) else reply

    # ---- lifecycle -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The `base_url` for the provider SDK's client."""
        if self._server is None:
            name = type(self).__name__
            raise RuntimeError(f"{name} is not running: use `with {name}() as fake:` or call start()")
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.base_path}"

    def start(self: _F) -> _F:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # serve_forever checks for shutdown() every poll_interval (0.5 s by default), so stop() took
        # up to half a second: per fake, i.e. per gate-matrix case, the bulk of the adapters' kit time.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name=self.thread_name, daemon=True
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

    def __enter__(self: _F) -> _F:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LoopbackHTTP:
    """What `serve` answers through: one JSON reply or one server-sent-event stream."""

    def __init__(self, handler: _Handler) -> None:
        self._handler = handler

    def json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        h = self._handler
        content = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(content)))
        for key, value in {**h.owner.json_headers, **(headers or {})}.items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(content)

    def sse(self, payload: bytes) -> None:
        """Streams `payload` (events separated by blank lines) chunked, one event per chunk."""
        h = self._handler
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        try:
            for event in payload.split(b"\n\n"):
                if not event:
                    continue
                data = event + b"\n\n"
                h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                h.wfile.flush()
                if h.owner.chunk_delay:
                    time.sleep(h.owner.chunk_delay)  # pacing a stream, not synchronisation
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the app closed its stream early
            h.close_connection = True


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: twenty calls released at once from held gates
    # (the gate matrix's twenty_async_holds) overflowed it on a loaded machine (a reset connection).
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a stream closed early, a pooled connection dropped) is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: LoopbackFake
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
        self.owner.serve(request, LoopbackHTTP(self))
