"""The LiteLLM functions `instrument_litellm()` gates: one row each. A LiteLLM version that moves or
adds a function is one row here, not a branch in the call path.

Each row names the `litellm` attribute it replaces, whether it is a coroutine function, the kind of
request (how to describe it), how an injected value becomes its `mock_response`, and whether its
`stream=True` result is LiteLLM's `CustomStreamWrapper` (teed chunk by chunk).

Upstream (litellm 1.110.2): `litellm.completion` / `acompletion` are
litellm/chat_completions/dispatch.py:111 / :127 (they run litellm/main.py `completion` :5508 and
`acompletion` :645, which runs `main.completion` in an executor, main.py:932: only the public names
are replaced, so one call is gated once); `embedding` / `aembedding` litellm/embeddings/dispatch.py:71
/ :86; `responses` / `aresponses` litellm/responses/dispatch.py:130 / :146; `text_completion` /
`atext_completion` litellm/main.py:8056 / :7984.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._inject import embedding_reply, model_response, text_reply


@dataclass(frozen=True)
class Api:
    attr: str  # the `litellm` module attribute
    is_async: bool
    kind: str  # "chat" | "text" | "responses" | "embedding" (_describe.POSITIONAL)
    to_mock: Callable[[Any, Any], Any]  # (injected value, model) -> mock_response
    tees_streams: bool  # stream=True returns a CustomStreamWrapper the adapter records


APIS: tuple[Api, ...] = (
    Api("completion", False, "chat", model_response, True),
    Api("acompletion", True, "chat", model_response, True),
    Api("text_completion", False, "text", text_reply, False),
    Api("atext_completion", True, "text", text_reply, False),
    Api("responses", False, "responses", text_reply, False),
    Api("aresponses", True, "responses", text_reply, False),
    Api("embedding", False, "embedding", embedding_reply, False),
    Api("aembedding", True, "embedding", embedding_reply, False),
)
