"""A fake OpenAI provider on a loopback port, for tests and demos that must not touch the network.

    from openai import OpenAI
    from graphmind_openai.testing import FakeOpenAI

    with FakeOpenAI() as fake:
        fake.script(["Hello!", FakeOpenAI.tool_call("search", {"q": "cairo"}), FakeOpenAI.error(429)])
        client = OpenAI(base_url=fake.base_url, api_key="test")
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        assert fake.request_count == 1

It serves `POST /v1/chat/completions` and `POST /v1/responses`, as JSON or, when the request has
`"stream": true`, as server-sent events split into `chunks` deltas. Each request takes the next
scripted reply (a string: an assistant text; a dict: an assistant message with `content` and/or
`tool_calls`; `FakeOpenAI.error(...)`: an HTTP error; a callable: called with the request body,
returns one of those); with the script empty it answers `default_reply`. Replies are deterministic (ids derive from the request and the reply), so the
same script gives field-for-field the same SDK objects twice. Standard library only: a
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

from ._inject import chat_body, chat_sse, responses_body, responses_sse

__all__ = ["FakeError", "FakeOpenAI", "FakeRequest"]

CREATED = 1_767_225_600  # a fixed timestamp: equal replies for equal scripts


@dataclass(frozen=True)
class FakeError:
    """An HTTP error reply (`FakeOpenAI.error(429)`)."""

    status: int = 429
    message: str = "Rate limit reached (fake)"
    type: str = "rate_limit_error"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeRequest:
    """One request the fake received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


class FakeOpenAI:
    def __init__(self, *, chunks: int = 8, chunk_delay: float = 0.0, default_reply: Any = "ok") -> None:
        """`chunks`: deltas per streamed text / argument string; `chunk_delay`: seconds between SSE events."""
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
        """An error reply. `retry_after_ms` keeps the SDK's own retries fast (its `retry-after-ms` header)."""
        kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}.get(
            status, "server_error"
        )
        return FakeError(
            status, message or f"fake error {status}", kind, {"retry-after-ms": str(retry_after_ms)}
        )

    @staticmethod
    def tool_call(
        name: str, arguments: Mapping[str, Any] | str, call_id: str | None = None, content: str | None = None
    ) -> dict[str, Any]:
        """An assistant message that calls one tool."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return {"content": content, "tool_calls": [{"id": call_id, "name": name, "arguments": args}]}

    def script(self, replies: Iterable[Any]) -> FakeOpenAI:
        """Queues replies, one per request, in order (after any still queued)."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """The `base_url` for `OpenAI(base_url=..., api_key=...)`."""
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running: use `with FakeOpenAI() as fake:` or call start()")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="graphmind-fake-openai", daemon=True
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

    def __enter__(self) -> FakeOpenAI:
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

    def render(self, api: str, request: Mapping[str, Any], reply: Any) -> dict[str, Any]:
        """The response body for one scripted reply (deterministic)."""
        seed = hashlib.sha1(
            json.dumps([api, request, reply], sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        message: dict[str, Any] = {"content": reply} if isinstance(reply, str) else dict(reply)
        calls = [dict(c) for c in message.get("tool_calls") or []]
        for i, call in enumerate(calls):
            call["id"] = call.get("id") or f"call_{seed[:8]}{i}"
        message["tool_calls"] = calls or None
        words = sum(len(str(m).split()) for m in (request.get("messages") or [request.get("input")]))
        out_words = len(str(message.get("content") or "").split()) + sum(
            len(c.get("arguments", "")) // 4 for c in calls
        )
        if api == "chat":
            if not calls:
                message.pop("tool_calls")
            body = chat_body(
                {
                    "id": f"chatcmpl-{seed}",
                    "created": CREATED,
                    "choices": [
                        {
                            "index": 0,
                            "message": _chat_message(message),
                            "finish_reason": "tool_calls" if calls else "stop",
                            "logprobs": None,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": words,
                        "completion_tokens": out_words,
                        "total_tokens": words + out_words,
                    },
                },
                str(request.get("model") or "fake-model"),
            )
            return body
        body = responses_body(
            {"content": message.get("content"), "tool_calls": calls},
            request,
        )
        for i, item in enumerate(body["output"]):
            item["id"] = f"{'msg' if item['type'] == 'message' else 'fc'}_{seed}{i}"
        body.update(id=f"resp_{seed}", created_at=CREATED)
        body["usage"] = {
            "input_tokens": words,
            "output_tokens": out_words,
            "total_tokens": words + out_words,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        return body


def _chat_message(message: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content"), "refusal": None}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c.get("arguments", "{}")},
            }
            for c in message["tool_calls"]
        ]
    return out


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
    owner: FakeOpenAI
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
        if path.endswith("/chat/completions"):
            api = "chat"
        elif path.endswith("/responses"):
            api = "responses"
        else:
            self._json(
                404, {"error": {"message": f"the fake provider does not serve {path}", "type": "not_found"}}
            )
            return
        if not isinstance(body, dict):
            self._json(
                400,
                {
                    "error": {
                        "message": "the request body is not a JSON object",
                        "type": "invalid_request_error",
                    }
                },
            )
            return
        reply = self.owner._next(request)
        if isinstance(reply, FakeError):
            self._json(
                reply.status,
                {"error": {"message": reply.message, "type": reply.type, "code": None, "param": None}},
                reply.headers,
            )
            return
        try:
            rendered = self.owner.render(api, body, reply)
        except Exception as exc:
            self._json(
                500,
                {
                    "error": {
                        "message": f"the fake could not render the scripted reply: {exc}",
                        "type": "server_error",
                    }
                },
            )
            return
        if not body.get("stream"):
            self._json(200, rendered)
            return
        if api == "chat":
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            payload = chat_sse(rendered, self.owner.chunks, usage=include_usage)
        else:
            payload = responses_sse(rendered, self.owner.chunks)
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

    def _json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        content = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(content)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(content)
