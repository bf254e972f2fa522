"""GraphMind adapter for the OpenAI Python SDK.

    from openai import OpenAI
    from graphmind_openai import instrument_openai

    client = instrument_openai(OpenAI())

Every model call of that client (Chat Completions and Responses, plain, parsed, streamed, raw) is
an `llm:step` node the debugger can hold, inspect, replace and retry. Nothing global is patched.
"""

from __future__ import annotations

from typing import Any, TypeVar

import graphmind
from graphmind.adapter.stainless import uninstrument_client

from . import _hooks
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "__version__", "instrument_openai", "uninstrument_openai"]

C = TypeVar("C")


def instrument_openai(client: C, *, session: graphmind.Client | None = None) -> C:
    """Instruments an `OpenAI` / `AsyncOpenAI` client (or a subclass, e.g. Azure) in place and returns it.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    A second call is harmless; clients made with `client.with_options()` / `client.copy()` are
    instrumented too; `uninstrument_openai(client)` undoes it.
    """
    from openai import AsyncOpenAI, OpenAI

    instrumented: C = _hooks.instrument(client, session, (OpenAI, AsyncOpenAI), instrument_openai)
    return instrumented


def uninstrument_openai(client: Any) -> Any:
    """Undoes `instrument_openai(client)`; a client that is not instrumented is returned unchanged."""
    return uninstrument_client(client, _hooks.MARK)
