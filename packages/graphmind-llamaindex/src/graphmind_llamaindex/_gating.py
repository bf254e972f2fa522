"""gate_tools / gate_llm and their undo: in place, on the instance, idempotent, reversible.

LLMs are pydantic models, which refuse unknown attributes, so the replacements go in with
`object.__setattr__` (into the instance `__dict__`, where attribute lookup finds them before the
class's methods); tools are plain objects and take the same path. What the instance `__dict__`
held before is kept and put back by the undo.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.tools.types import BaseTool

import graphmind
from graphmind.adapter import Engine, engine_for

from ._hooks import LLM_HOOKS, TOOL_HOOKS, Hook

STATE_ATTR = "__graphmind_gate__"
_MISSING = object()
T = TypeVar("T")


@dataclass
class _GateState:
    saved: dict[str, Any]  # attr -> what the instance __dict__ held before (or _MISSING)


def _apply(engine: Engine, obj: Any, hooks: tuple[Hook, ...]) -> None:
    if STATE_ATTR in obj.__dict__:
        return
    saved: dict[str, Any] = {}
    for hook in hooks:
        original = getattr(obj, hook.attr, None)
        if original is None:
            continue
        saved[hook.attr] = obj.__dict__.get(hook.attr, _MISSING)
        object.__setattr__(obj, hook.attr, hook.make(engine, obj, original))
    object.__setattr__(obj, STATE_ATTR, _GateState(saved))


def _revert(obj: Any) -> None:
    state = obj.__dict__.get(STATE_ATTR)
    if not isinstance(state, _GateState):
        return
    for attr, before in state.saved.items():
        if before is _MISSING:
            obj.__dict__.pop(attr, None)
        else:
            object.__setattr__(obj, attr, before)
    del obj.__dict__[STATE_ATTR]


def _tool_list(tools: Any, what: str) -> list[Any]:
    if isinstance(tools, BaseTool):
        items = [tools]
    elif isinstance(tools, Mapping):
        items = list(tools.values())
    elif isinstance(tools, (list, tuple)):
        items = list(tools)
    else:
        raise TypeError(
            f"{what}() takes a LlamaIndex tool or a list, tuple or dict of them, got {type(tools).__name__}"
        )
    for item in items:
        if not isinstance(item, BaseTool):
            raise TypeError(
                f"{what}() takes LlamaIndex tools (BaseTool), got {type(item).__name__}: turn a plain function "
                "into a tool with llama_index.core.tools.FunctionTool.from_defaults(fn) first, and pass that tool to the agent"
            )
    return items


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
    items = _tool_list(tools, "gate_tools")
    engine = engine_for(session)
    if not engine.enabled:
        return tools
    for tool in items:
        _apply(engine, tool, TOOL_HOOKS)
    return tools


def ungate_tools(tools: T) -> T:
    """Undoes `gate_tools`: the tools' own methods again (a second call does nothing)."""
    for tool in _tool_list(tools, "ungate_tools"):
        _revert(tool)
    return tools


def gate_llm(llm: T, session: graphmind.Client | None = None) -> T:
    """Gates an LLM's `chat`, `achat`, `stream_chat` and `astream_chat` in place; returns `llm`.

    An injected reply is a string or `{"content": ..., "tool_calls": [{"id"?, "name", "arguments"}]}`
    (or LlamaIndex's own `{"message": {...}}`), turned into a `ChatResponse`.
    """
    target = _llm(llm, "gate_llm")
    engine = engine_for(session)
    if engine.enabled:
        _apply(engine, target, LLM_HOOKS)
    return llm


def ungate_llm(llm: T) -> T:
    """Undoes `gate_llm` (a second call does nothing)."""
    _revert(_llm(llm, "ungate_llm"))
    return llm


def is_gated(obj: Any) -> bool:
    return STATE_ATTR in getattr(obj, "__dict__", {})
