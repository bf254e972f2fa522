"""One request of the CLI's, made through an instrumented Anthropic client (Messages) or as it is (the rest).

A Messages request goes through `client.beta.messages.create` (the CLI speaks the beta API: it sends
`anthropic-beta` and `?beta=true`): the body's fields the SDK's signature names are passed as
arguments (what graphmind-anthropic describes, gates and matches in a replay), the others in
`extra_body`, the CLI's headers in `extra_headers`. The client makes no retries of its own
(`max_retries=0`): the CLI retries as it would without GraphMind, and each retry is a node.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._session import SessionState

# Headers the forwarding client sets itself (auth from the CLI's request; the SDK's own identity).
_DROPPED = frozenset({"x-api-key", "authorization", "user-agent", "accept", "content-type"})
_CLIENTS_LOCK = threading.Lock()
_CLIENTS: dict[tuple[str, str | None, str | None, Any], Any] = {}  # at most 64, the newest


@dataclass
class Reply:
    """What the model gate answers the CLI: a status, headers, and a body or a stream of SSE chunks."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    events: Iterator[bytes] | None = None
    closer: Any = None

    @staticmethod
    def error(status: int, kind: str, message: str) -> Reply:
        body = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        return Reply(status, {"content-type": "application/json"}, body)

    def close(self) -> None:
        close = getattr(self.closer, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                pass


def _client(state: SessionState, headers: Mapping[str, str]) -> Any:
    import anthropic

    from graphmind_anthropic import instrument_anthropic

    api_key = headers.get("x-api-key")
    bearer = headers.get("authorization", "")
    token = bearer[7:] if bearer.lower().startswith("bearer ") else None
    # One client per upstream, credentials and GraphMind session for the process (not per options
    # object): a new client costs milliseconds, and an app makes new options for every session.
    cache_key = (state.upstream, api_key, token, state.session)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(cache_key)
        if client is None:
            client = anthropic.Anthropic(
                base_url=state.upstream,
                api_key=api_key,
                auth_token=token,
                max_retries=0,
                timeout=None,  # the CLI keeps its own request timeout; a held gate must not time out here
            )
            instrument_anthropic(client, session=state.session)
            if len(_CLIENTS) >= 64:  # many credentials or sessions over time: keep the newest
                _CLIENTS.pop(next(iter(_CLIENTS)))
            _CLIENTS[cache_key] = client
    return client


_PARAMS: frozenset[str] | None = None


def _params(client: Any) -> frozenset[str]:
    global _PARAMS
    if _PARAMS is None:
        names = inspect.signature(client.beta.messages.create).parameters
        _PARAMS = frozenset(n for n in names if not n.startswith("extra_") and n not in {"timeout", "betas"})
    return _PARAMS


def _sse(event: Any) -> bytes:
    data = event.to_dict(mode="json") if hasattr(event, "to_dict") else event
    kind = data.get("type", "message") if isinstance(data, dict) else "message"
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _put_injected_results(body: dict[str, Any], injected: Mapping[str, str]) -> None:
    """The tool_result of each CLI tool answered by an inject or a replay: the injected text, as an
    ordinary result (the CLI sent the denial it made of it, error-flagged)."""
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("tool_use_id") in injected
            ):
                block["content"] = injected[block["tool_use_id"]]
                block["is_error"] = False


def forward_messages(
    state: SessionState, body: dict[str, Any], headers: Mapping[str, str], query: str
) -> Reply:
    """A Messages request through the instrumented client: the gates hold here (this thread)."""
    import anthropic

    if state.injected_results:
        _put_injected_results(body, state.injected_results)
    client = _client(state, headers)
    known = _params(client)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra_body = {k: v for k, v in body.items() if k not in known}
    extra_headers = {k: v for k, v in headers.items() if k not in _DROPPED}
    extra_query = dict(part.split("=", 1) for part in query.split("&") if "=" in part) if query else None
    try:
        result = client.beta.messages.create(
            **kwargs,
            extra_body=extra_body or None,
            extra_headers=extra_headers,
            extra_query=extra_query,
        )
    except anthropic.APIStatusError as exc:
        response = exc.response
        passed = {
            k: v
            for k, v in response.headers.items()
            if k.lower() in {"retry-after", "request-id", "x-should-retry"}
        }
        return Reply(exc.status_code, {"content-type": "application/json", **passed}, response.content)
    except anthropic.APIConnectionError as exc:
        return Reply.error(502, "api_error", f"GraphMind model gate could not reach {state.upstream}: {exc}")
    if body.get("stream"):
        return Reply(200, {}, events=(_sse(event) for event in result), closer=result)
    data = result.to_dict(mode="json") if hasattr(result, "to_dict") else result
    return Reply(200, {"content-type": "application/json"}, json.dumps(data, ensure_ascii=False).encode())


def forward_raw(
    state: SessionState, method: str, path: str, query: str, headers: Mapping[str, str], raw: bytes
) -> Reply:
    """Any other request (token counting, model listing) to the upstream as it is: not a node."""
    import httpx

    url = state.upstream.rstrip("/") + path + (f"?{query}" if query else "")
    try:
        response = httpx.request(method, url, headers=dict(headers), content=raw or None, timeout=600)
    except httpx.HTTPError as exc:
        return Reply.error(502, "api_error", f"GraphMind model gate could not reach {state.upstream}: {exc}")
    content_type = response.headers.get("content-type", "application/json")
    return Reply(response.status_code, {"content-type": content_type}, response.content)
