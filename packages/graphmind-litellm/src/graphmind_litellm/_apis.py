"""The LiteLLM functions `instrument_litellm()` gates: one row each. A LiteLLM version that moves or
adds a function is one row here, not a branch in the call path.

Each row names the `litellm` attribute it replaces, whether it is a coroutine function, its
positional parameters, how to describe its request and its result, how an injected value becomes
its `mock_response`, whether its `stream=True` result is LiteLLM's `CustomStreamWrapper` (teed chunk
by chunk), and the node it makes.

Upstream (litellm 1.110.2): `litellm.completion` / `acompletion` are
litellm/chat_completions/dispatch.py:111 / :127 (they run litellm/main.py `completion` :5508 and
`acompletion` :645, which runs `main.completion` in an executor, main.py:932: only the public names
are replaced, so one call is gated once); `embedding` / `aembedding` litellm/embeddings/dispatch.py:71
/ :86; `responses` / `aresponses` litellm/responses/dispatch.py:130 / :146; `text_completion` /
`atext_completion` litellm/main.py:8056 / :7984.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._describe import (
    chat_request,
    chat_result,
    embedding_request,
    embedding_result,
    responses_request,
    responses_result,
    text_request,
    text_result,
)
from ._inject import embedding_reply, model_response, text_reply

Described = tuple[Any, "dict[str, Any] | None"]


@dataclass(frozen=True)
class Api:
    attr: str  # the `litellm` module attribute (and LiteLLM's call type)
    is_async: bool
    positional: tuple[str, ...]  # the public function's positional parameters
    describe_request: Callable[[Mapping[str, Any]], tuple[dict[str, Any], str, int]]  # (input, key, length)
    describe_result: Callable[[Any], Described]  # (output, usage)
    to_mock: Callable[[Any, Any], Any]  # (injected value, model) -> mock_response
    tees_streams: bool = False  # stream=True returns a CustomStreamWrapper the adapter records
    node_name: str = "step"  # `llm:<node_name>`
    steps: bool = True  # model steps of one conversation share an invocation (`<inv>:s1`, `:s2`)


def _pair(
    name: str,
    positional: tuple[str, ...],
    describe_request: Callable[[Mapping[str, Any]], tuple[dict[str, Any], str, int]],
    describe_result: Callable[[Any], Described],
    to_mock: Callable[[Any, Any], Any],
    **extra: Any,
) -> tuple[Api, Api]:
    """A function and its `a`-prefixed coroutine twin: the same row but for `is_async`."""
    row = (positional, describe_request, describe_result, to_mock)
    return Api(name, False, *row, **extra), Api(f"a{name}", True, *row, **extra)


APIS: tuple[Api, ...] = (
    *_pair("completion", ("model", "messages"), chat_request, chat_result, model_response, tees_streams=True),
    *_pair("text_completion", ("prompt", "model"), text_request, text_result, text_reply),
    *_pair("responses", ("input", "model"), responses_request, responses_result, text_reply),
    *_pair(
        "embedding",
        ("model", "input"),
        embedding_request,
        embedding_result,
        embedding_reply,
        node_name="embedding",
        steps=False,
    ),
)
BY_NAME = {
    api.attr: api for api in APIS
}  # LiteLLM's call types (litellm/types/utils.py `CallTypes`) are these names
