"""A run's thread: the conversation or session it is one turn of (docs/protocol.md, `run.started`).

The app names it (`graphmind.run(..., thread=...)`, `configure(thread=...)`, `GRAPHMIND_THREAD`),
or an adapter reads it from its framework (LangGraph's `thread_id`, the OpenAI Agents SDK's
`group_id`, ADK's `session_id`...). Whatever it is given, core carries one short string or none.
"""

from __future__ import annotations

from typing import Any

MAX_THREAD_CHARS = 200  # a thread id is a key, not content: a longer one is cut, never refused


def thread_id(value: Any) -> str | None:
    """The thread id to carry: a string (a UUID or a number as its text), stripped and cut at
    MAX_THREAD_CHARS; None for nothing (None, "", a bool, an object that is not an id)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, int) or type(value).__name__ == "UUID":
        text = str(value)
    else:
        return None
    return text[:MAX_THREAD_CHARS] or None
