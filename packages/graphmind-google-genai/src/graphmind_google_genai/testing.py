"""A fake Gemini API on a loopback port, for tests and demos that must not touch the network.

    from google import genai
    from graphmind_google_genai.testing import FakeGemini

    with FakeGemini() as fake:
        fake.script(["Hello!", FakeGemini.function_call("get_weather", {"city": "Cairo"}), FakeGemini.error(429)])
        client = genai.Client(api_key="test", http_options=fake.http_options())
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
        assert fake.request_count == 1

It serves the Gemini REST shape: `POST /v1beta/models/{model}:generateContent` (JSON) and
`:streamGenerateContent?alt=sse` (server-sent events, the text split into `chunks` pieces, the
function calls, finish reason and usage in the last). Each request takes the next scripted reply:
a string (the model's text), a dict (core's reply shape, `{"content": ..., "tool_calls": [...]}`,
or a whole Gemini body `{"candidates": [...]}`), `FakeGemini.error(...)` (an HTTP error in
Google's error shape), or a callable (called with the request body, returns one of those). With the
script empty it answers `default_reply`. A reply is rendered through the adapter's own conversion
(`_inject.body`), with `modelVersion` the requested model and `usageMetadata` counted in words, so
the same script gives field-for-field the same SDK objects twice. The loopback server, script and
request log are core's `graphmind.testing.loopback.LoopbackFake`; this module is Gemini's wire format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.genai import types

from graphmind.testing.loopback import FakeRequest, LoopbackFake, LoopbackHTTP

from ._inject import body, sse

__all__ = ["FakeError", "FakeGemini", "FakeRequest"]

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass(frozen=True)
class FakeError:
    """An HTTP error reply (`FakeGemini.error(429)`)."""

    status: int = 429
    message: str = "Resource exhausted (fake)"


class FakeGemini(LoopbackFake):
    """`chunks`: text pieces per streamed reply; `chunk_delay`: seconds between SSE events."""

    thread_name = "graphmind-fake-gemini"

    # ---- scripting ----------------------------------------------------------------------------
    @staticmethod
    def error(status: int = 429, message: str | None = None) -> FakeError:
        """An error reply: 400 bad request, 429 resource exhausted, 500, 503, ..."""
        return FakeError(status, message or f"fake error {status}")

    @staticmethod
    def function_call(
        name: str, args: Mapping[str, Any] | None = None, call_id: str | None = None, text: str | None = None
    ) -> dict[str, Any]:
        """A model reply that calls one function (core's reply shape)."""
        call: dict[str, Any] = {"name": name, "arguments": dict(args or {})}
        if call_id:
            call["id"] = call_id
        return {"content": text, "tool_calls": [call]}

    def http_options(self, **kwargs: Any) -> types.HttpOptions:
        """The client's `http_options=` that points it here."""
        return types.HttpOptions(base_url=self.base_url, **kwargs)

    # ---- the wire format -------------------------------------------------------------------------
    def serve(self, request: FakeRequest, http: LoopbackHTTP) -> None:
        path = request.path
        model, _, method = path.rpartition("/")[2].partition(":")
        if method not in ("generateContent", "streamGenerateContent"):
            self.record(request)
            _error(http, 404, f"the fake Gemini API does not serve {path}")
            return
        if not isinstance(request.body, dict):
            self.record(request)
            _error(http, 400, "the request body is not a JSON object")
            return
        reply = self.next_reply(request)
        if isinstance(reply, FakeError):
            _error(http, reply.status, reply.message)
            return
        try:
            rendered = self.render(model, request.body, reply)
        except Exception as exc:
            _error(http, 500, f"the fake could not render the scripted reply: {exc}")
            return
        if method == "generateContent":
            http.json(200, rendered)
        else:
            http.sse(sse(rendered, self.chunks))

    def render(self, model: str, request: Mapping[str, Any], reply: Any) -> dict[str, Any]:
        """The REST body of one scripted reply (deterministic)."""
        rendered = body(reply)
        rendered.setdefault("modelVersion", model)
        if "usageMetadata" not in rendered:
            prompt = sum(len(json.dumps(c).split()) for c in request.get("contents") or [])
            parts = rendered["candidates"][0].get("content", {}).get("parts", [])
            out = sum(len(json.dumps(p).split()) for p in parts)
            rendered["usageMetadata"] = {
                "promptTokenCount": prompt,
                "candidatesTokenCount": out,
                "totalTokenCount": prompt + out,
            }
        return rendered


def _error(http: LoopbackHTTP, status: int, message: str) -> None:
    http.json(
        status, {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}
    )
