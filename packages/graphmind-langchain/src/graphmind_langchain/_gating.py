"""gate_tools / gate_model and their undo: in place, on the instance, idempotent, reversible.

Tools and chat models are pydantic models, which refuse unknown attributes, so the replacements
go in with `object.__setattr__` (into the instance `__dict__`, where attribute lookup finds them
before the class's methods). What was there before is kept and put back by ungate.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.runnables import RunnableBinding
from langchain_core.tools import BaseTool

import graphmind
from graphmind.adapter import Engine, engine_for

from ._hooks import MODEL_HOOKS, TOOL_HOOKS, Hook
from ._registry import MARK

STATE_ATTR = "__graphmind_gate__"
_MISSING = object()
T = TypeVar("T")


@dataclass
class _GateState:
    token: str
    saved: dict[str, Any]  # attr -> what the instance __dict__ held before (or _MISSING)
    metadata: Any


def _apply(client: Engine, obj: Any, hooks: tuple[Hook, ...]) -> None:
    if STATE_ATTR in obj.__dict__:
        return
    token = uuid.uuid4().hex
    saved: dict[str, Any] = {}
    for hook in hooks:
        if not hook.applies(obj):
            continue
        saved[hook.attr] = obj.__dict__.get(hook.attr, _MISSING)
        object.__setattr__(obj, hook.attr, hook.make(client, obj, getattr(obj, hook.attr), token))
    metadata = obj.metadata
    # LangChain hands a runnable's own metadata to the callback handler (CallbackManager.configure's
    # local_metadata): this is how the handler knows the call is gated and leaves its gates to us.
    object.__setattr__(obj, "metadata", {**(metadata or {}), MARK: token})
    object.__setattr__(obj, STATE_ATTR, _GateState(token, saved, metadata))


def _revert(obj: Any) -> None:
    state = obj.__dict__.get(STATE_ATTR)
    if not isinstance(state, _GateState):
        return
    for attr, before in state.saved.items():
        if before is _MISSING:
            obj.__dict__.pop(attr, None)
        else:
            object.__setattr__(obj, attr, before)
    object.__setattr__(obj, "metadata", state.metadata)
    del obj.__dict__[STATE_ATTR]


def _tool_list(tools: Any) -> list[Any]:
    if isinstance(tools, BaseTool):
        items = [tools]
    elif isinstance(tools, Mapping):
        items = list(tools.values())
    elif isinstance(tools, (list, tuple)):
        items = list(tools)
    else:
        raise TypeError(f"gate_tools() takes a LangChain tool or a list of them, got {type(tools).__name__}")
    for item in items:
        if not isinstance(item, BaseTool):
            raise TypeError(
                f"gate_tools() takes LangChain tools (BaseTool, e.g. from @tool), got {type(item).__name__}: "
                "turn plain functions into tools with langchain_core.tools.tool first"
            )
    return items


def _chat_model(model: Any, what: str) -> BaseChatModel:
    target = model
    while isinstance(target, RunnableBinding):  # model.bind_tools(...) / .bind(...): gate the model inside
        target = target.bound
    if not isinstance(target, BaseChatModel):
        raise TypeError(f"{what}() takes a LangChain chat model (BaseChatModel), got {type(model).__name__}")
    return target


def gate_tools(tools: T, session: graphmind.Client | None = None) -> T:
    """Gates LangChain tools in place (a tool, a list or tuple, or a dict of them); returns `tools`.

    At a tool's gates the person can inject its result (before: the tool does not run), replace
    it (after), or retry a failed call (error). Disabled GraphMind: nothing changes.
    """
    items = _tool_list(tools)
    client = engine_for(session)
    if not client.enabled:
        return tools
    for tool in items:
        _apply(client, tool, TOOL_HOOKS)
    return tools


def ungate_tools(tools: T) -> T:
    for tool in _tool_list(tools):
        _revert(tool)
    return tools


def gate_model(model: T, session: graphmind.Client | None = None) -> T:
    """Gates a chat model in place (or the model inside `model.bind_tools(...)`); returns `model`.

    An injected reply is a string or `{"content": ..., "tool_calls": [{"name", "args", "id"}]}`.
    """
    target = _chat_model(model, "gate_model")
    client = engine_for(session)
    if client.enabled:
        _apply(client, target, MODEL_HOOKS)
    return model


def ungate_model(model: T) -> T:
    _revert(_chat_model(model, "ungate_model"))
    return model


def is_gated(obj: Any) -> bool:
    return STATE_ATTR in getattr(obj, "__dict__", {})
