"""GraphMind adapter for the Google Gen AI SDK (`google-genai`, Gemini).

    from google import genai
    from graphmind_google_genai import instrument_google_genai

    client = instrument_google_genai(genai.Client())   # client.models and client.aio.models

Every model request (`generate_content`, `generate_content_stream`, their async twins, chats, each
round of automatic function calling) is an `llm:step` node, and every Python function automatic
function calling runs a `tool:<name>` node, each with before, after and error gates (continue,
inject, edit, retry, abort). See docs/google-genai.md for the hook table.
"""

from __future__ import annotations

from typing import TypeVar

import graphmind

from . import _hooks
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "__version__", "instrument_google_genai", "uninstrument_google_genai"]

C = TypeVar("C")


def instrument_google_genai(client: C, *, session: graphmind.Client | None = None) -> C:
    """Gates every model request and automatic function call of `client` (a `genai.Client`, its
    `aio` included, an `AsyncClient` alone, or one `Models` / `AsyncModels`), in place; returns it.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Twice is once; a disabled session (`GRAPHMIND_DISABLED=1`) changes nothing at all.
    """
    return _hooks.instrument(client, session)


def uninstrument_google_genai(client: C) -> C:
    """Undoes `instrument_google_genai` exactly (a no-op on a client that is not instrumented)."""
    return _hooks.uninstrument(client)
