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
script gives field-for-field the same SDK objects twice. The loopback server, script and request log
are core's `graphmind.testing.loopback.LoopbackFake`; this module is Anthropic's wire format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from graphmind.testing.loopback import FakeRequest, LoopbackFake, LoopbackHTTP

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


class FakeAnthropic(LoopbackFake):
    """`chunks`: deltas per streamed text / tool input; `chunk_delay`: seconds between SSE events."""

    thread_name = "graphmind-fake-anthropic"
    json_headers: ClassVar[Mapping[str, str]] = {"request-id": "req_fake"}

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

    # ---- the wire format -------------------------------------------------------------------------
    def serve(self, request: FakeRequest, http: LoopbackHTTP) -> None:
        body, path = request.body, request.path
        if not isinstance(body, dict):
            _error(http, 400, "invalid_request_error", "the request body is not a JSON object")
            return
        if path == "/v1/messages/count_tokens":
            self.record(request)
            http.json(
                200, {"input_tokens": sum(len(json.dumps(m).split()) for m in body.get("messages") or [])}
            )
            return
        if path != "/v1/messages":
            _error(http, 404, "not_found_error", f"the fake provider does not serve {path}")
            return
        reply = self.next_reply(request)
        if isinstance(reply, FakeError):
            _error(http, reply.status, reply.type, reply.message, reply.headers)
            return
        try:
            rendered = self.render(body, reply)
        except Exception as exc:
            _error(http, 500, "api_error", f"the fake could not render the scripted reply: {exc}")
            return
        if not body.get("stream"):
            http.json(200, rendered)
            return
        http.sse(message_sse(rendered, self.chunks))

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


def _error(
    http: LoopbackHTTP, status: int, kind: str, message: str, headers: Mapping[str, str] | None = None
) -> None:
    http.json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)
