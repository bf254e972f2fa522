"""gate_tools / gate_llm and their undo: in place, on the instance, idempotent, reversible.

Each row of `_hooks.py` is applied by one `graphmind.adapter.Patches` (a `Gate`), kept on the object:
it puts the replacements into the instance `__dict__` (LLMs are pydantic models, which refuse
unknown attributes; tools are plain objects and take the same path), and the undo puts back what
the instance `__dict__` held before.
"""

from __future__ import annotations

from typing import Any, TypeVar

from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.tools.types import BaseTool

import graphmind
from graphmind.adapter import Hook, instrument_once, items_of, uninstrument_once

from ._hooks import LLM_HOOKS, TOOL_HOOKS, Gate

STATE_ATTR = "__graphmind_gate__"
T = TypeVar("T")


def _gate(obj: Any, hooks: tuple[Hook[Gate], ...], session: graphmind.Client | None) -> None:
    def apply(target: Any) -> Gate:
        gate = Gate(session, obj=target)
        gate.apply(target, hooks, gate)
        return gate

    instrument_once(obj, STATE_ATTR, session, apply)


def _tool_list(tools: Any, what: str) -> list[Any]:
    return items_of(
        tools,
        BaseTool,
        f"{what}() takes a LlamaIndex tool or a list, tuple or dict of them, got {{type}}",
        f"{what}() takes LlamaIndex tools (BaseTool), got {{type}}: turn a plain function into a tool with "
        "llama_index.core.tools.FunctionTool.from_defaults(fn) first, and pass that tool to the agent",
    )


def _llm(llm: Any, what: str) -> BaseLLM:
    if not isinstance(llm, BaseLLM):
        raise TypeError(
            f"{what}() takes a LlamaIndex LLM (llama_index.core.llms.LLM), got {type(llm).__name__}"
        )
    return llm


def gate_tools(tools: T, session: graphmind.Client | None = None) -> T:
    """Gates LlamaIndex tools in place (a tool, a list or tuple, or a dict of them); returns `tools`.

    At a tool's gates the person can inject its result (before: the tool does not run), replace
    it (after), retry a failed call (error) or abort the run. Disabled GraphMind: nothing changes.
    """
    for tool in _tool_list(tools, "gate_tools"):
        _gate(tool, TOOL_HOOKS, session)
    return tools


def ungate_tools(tools: T) -> T:
    """Undoes `gate_tools`: the tools' own methods again (a second call does nothing)."""
    for tool in _tool_list(tools, "ungate_tools"):
        uninstrument_once(tool, STATE_ATTR)
    return tools


def gate_llm(llm: T, session: graphmind.Client | None = None) -> T:
    """Gates an LLM's `chat`, `achat`, `stream_chat` and `astream_chat` in place; returns `llm`.

    An injected reply is a string or `{"content": ..., "tool_calls": [{"id"?, "name", "arguments"}]}`
    (or LlamaIndex's own `{"message": {...}}`), turned into a `ChatResponse`.
    """
    _gate(_llm(llm, "gate_llm"), LLM_HOOKS, session)
    return llm


def ungate_llm(llm: T) -> T:
    """Undoes `gate_llm` (a second call does nothing)."""
    uninstrument_once(_llm(llm, "ungate_llm"), STATE_ATTR)
    return llm
