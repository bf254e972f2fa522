"""An edited JSON input turned back into CrewAI's call (docs/protocol.md, "Editing a held call").

A tool's input is its keyword arguments: an edit must be a JSON object, and the tool runs with
exactly it. A model step's input is `{"messages": [...]}`: CrewAI sends the agent's own message
list (the executor's `messages`, crewai/utilities/agent_utils.py:498, not the copy it passes), so
an edit replaces that list's items in place, as CrewAI's own `before_llm_call` hook must (never the
list itself): the agent's conversation goes on from the edited messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def tool_edit(run: Callable[[dict[str, Any]], Any]) -> Callable[[Any], Callable[[], Any]]:
    def edit(value: Any) -> Callable[[], Any]:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ValueError("a CrewAI tool's input is an object of its arguments by name")
        return lambda: run(dict(value))

    return edit


def model_edit(
    agent_messages: list[Any] | None, call: Callable[[], Any]
) -> Callable[[Any], Callable[[], Any]]:
    def edit(value: Any) -> Callable[[], Any]:
        edited = value.get("messages") if isinstance(value, dict) else None
        if not isinstance(edited, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in edited
        ):
            raise ValueError(
                'a CrewAI model step\'s input is {"messages": [{"role": ..., "content": ...}, ...]}'
            )
        if agent_messages is None:
            raise ValueError("this model call has no agent conversation to edit (a direct call)")

        def run() -> Any:
            agent_messages[:] = [dict(m) for m in edited]  # in place: the executor keeps this list
            return call()

        return run

    return edit
