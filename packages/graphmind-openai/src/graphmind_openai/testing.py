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
same script gives field-for-field the same SDK objects twice. By default `usage.prompt_tokens` counts
the prompt's words; `count_tokens=` (a function: text -> tokens, e.g. a tiktoken encoding's) makes the
chat API count them the way OpenAI's cookbook does (`prompt_tokens_cookbook`). The loopback server, script and request
log are core's `graphmind.testing.loopback.LoopbackFake`; this module is OpenAI's wire format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphmind.testing.loopback import FakeRequest, LoopbackFake, LoopbackHTTP

from ._inject import chat_body, chat_sse, responses_body, responses_sse

__all__ = ["TRIP_MESSAGES", "TRIP_TOOLS", "FakeError", "FakeOpenAI", "FakeRequest"]

# A small tool-calling conversation in the OpenAI wire shape, shared by the tests of every adapter
# that speaks it (graphmind-openai, graphmind-litellm and their end-to-end tests).
TRIP_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Plan a day in Cairo"},
]
TRIP_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
        },
    }
]

CREATED = 1_767_225_600  # a fixed timestamp: equal replies for equal scripts


@dataclass(frozen=True)
class FakeError:
    """An HTTP error reply (`FakeOpenAI.error(429)`)."""

    status: int = 429
    message: str = "Rate limit reached (fake)"
    type: str = "rate_limit_error"
    headers: Mapping[str, str] = field(default_factory=dict)


class FakeOpenAI(LoopbackFake):
    """`chunks`: deltas per streamed text / argument string; `chunk_delay`: seconds between SSE events."""

    thread_name = "graphmind-fake-openai"
    base_path = "/v1"

    def __init__(self, *, count_tokens: Callable[[str], int] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.count_tokens = count_tokens

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

    # ---- the wire format -------------------------------------------------------------------------
    def serve(self, request: FakeRequest, http: LoopbackHTTP) -> None:
        body, path = request.body, request.path
        if path.endswith("/chat/completions"):
            api = "chat"
        elif path.endswith("/responses"):
            api = "responses"
        else:
            http.json(
                404, {"error": {"message": f"the fake provider does not serve {path}", "type": "not_found"}}
            )
            return
        if not isinstance(body, dict):
            http.json(
                400,
                {
                    "error": {
                        "message": "the request body is not a JSON object",
                        "type": "invalid_request_error",
                    }
                },
            )
            return
        reply = self.next_reply(request)
        if isinstance(reply, FakeError):
            http.json(
                reply.status,
                {"error": {"message": reply.message, "type": reply.type, "code": None, "param": None}},
                reply.headers,
            )
            return
        try:
            rendered = self.render(api, body, reply)
        except Exception as exc:
            http.json(
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
            http.json(200, rendered)
            return
        if api == "chat":
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            http.sse(chat_sse(rendered, self.chunks, usage=include_usage))
        else:
            http.sse(responses_sse(rendered, self.chunks))

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
        if self.count_tokens is not None and api == "chat":
            words = prompt_tokens_cookbook(request.get("messages") or [], self.count_tokens)
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


def prompt_tokens_cookbook(messages: Any, count: Callable[[str], int]) -> int:
    """A Chat Completions prompt's tokens as OpenAI's cookbook counts them (`num_tokens_from_messages`,
    gpt-4o and later): 3 a message, every string field's tokens, 1 more for a `name`, 3 to prime the
    reply. Content parts count their text; an assistant's tool calls their name and arguments (the
    cookbook has no rule for them). Tool schemas are not counted (the cookbook counts them apart)."""
    total = 3
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, Mapping):
            continue
        total += 3
        for key, value in m.items():
            if isinstance(value, str):
                total += count(value) + (1 if key == "name" else 0)
            elif key == "content" and isinstance(value, list):
                total += sum(
                    count(p["text"])
                    for p in value
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                )
            elif key == "tool_calls" and isinstance(value, list):
                for call in value:
                    fn = call.get("function") if isinstance(call, Mapping) else None
                    if isinstance(fn, Mapping):
                        total += sum(
                            count(fn[k]) for k in ("name", "arguments") if isinstance(fn.get(k), str)
                        )
    return total
