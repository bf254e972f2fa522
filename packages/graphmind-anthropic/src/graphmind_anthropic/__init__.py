"""GraphMind adapter for the Anthropic Python SDK.

    from anthropic import Anthropic
    from graphmind_anthropic import instrument_anthropic

    client = instrument_anthropic(Anthropic())

Every Messages call of that client (create, create(stream=True), the stream() helper, parse, raw
responses, the beta namespace, the beta tool runner's tools) is a node the debugger can hold,
inspect, replace and retry; count_tokens is recorded. Nothing global is patched.
"""

from __future__ import annotations

from typing import Any, TypeVar

import graphmind
from graphmind.adapter.stainless import uninstrument_client

from . import _hooks
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "__version__", "instrument_anthropic", "uninstrument_anthropic"]

C = TypeVar("C")


def instrument_anthropic(client: C, *, session: graphmind.Client | None = None) -> C:
    """Instruments an `Anthropic` / `AsyncAnthropic` client in place and returns it.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    A second call is harmless; clients made with `client.with_options()` / `client.copy()` are
    instrumented too; `uninstrument_anthropic(client)` undoes it. With GraphMind disabled
    (`GRAPHMIND_DISABLED=1`, or a disabled `session`) nothing is patched.
    """
    from anthropic import Anthropic, AsyncAnthropic

    instrumented: C = _hooks.instrument(client, session, (Anthropic, AsyncAnthropic), instrument_anthropic)
    return instrumented


def uninstrument_anthropic(client: Any) -> Any:
    """Undoes `instrument_anthropic(client)`; a client that is not instrumented is returned unchanged."""
    return uninstrument_client(client, _hooks.MARK)
