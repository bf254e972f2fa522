"""gate_tools / gate_model and their undo: in place, on the instance, idempotent, reversible.

Each row of `_hooks.py` is applied by one `graphmind.adapter.Patches` (a `Gate`), kept on the object:
it puts the replacements into the instance `__dict__` (tools and chat models are pydantic models,
which refuse unknown attributes; attribute lookup finds them there before the class's methods), and
ungate puts back what was there before, metadata included.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.runnables import RunnableBinding
from langchain_core.tools import BaseTool

import graphmind
from graphmind.adapter import Hook, instrument_once, items_of, uninstrument_once

from ._hooks import MODEL_HOOKS, TOOL_HOOKS, Gate
from ._registry import MARK

STATE_ATTR = "__graphmind_gate__"
T = TypeVar("T")


def _gate(obj: Any, hooks: tuple[Hook[Gate], ...], session: graphmind.Client | None) -> None:
    def apply(target: Any) -> Gate:
        gate = Gate(session, obj=target, token=uuid.uuid4().hex)
        gate.apply(target, hooks, gate)
        # LangChain hands a runnable's own metadata to the callback handler (CallbackManager.configure's
        # local_metadata): this is how the handler knows the call is gated and leaves its gates to us.
        gate.set(target, "metadata", {**(target.metadata or {}), MARK: gate.token})
        return gate

    instrument_once(obj, STATE_ATTR, session, apply)


def _tool_list(tools: Any) -> list[Any]:
    return items_of(
        tools,
        BaseTool,
        "gate_tools() takes a LangChain tool or a list of them, got {type}",
        "gate_tools() takes LangChain tools (BaseTool, e.g. from @tool), got {type}: "
        "turn plain functions into tools with langchain_core.tools.tool first",
    )


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
    for tool in _tool_list(tools):
        _gate(tool, TOOL_HOOKS, session)
    return tools


def ungate_tools(tools: T) -> T:
    for tool in _tool_list(tools):
        uninstrument_once(tool, STATE_ATTR)
    return tools


def gate_model(model: T, session: graphmind.Client | None = None) -> T:
    """Gates a chat model in place (or the model inside `model.bind_tools(...)`); returns `model`.

    An injected reply is a string or `{"content": ..., "tool_calls": [{"name", "args", "id"}]}`.
    """
    _gate(_chat_model(model, "gate_model"), MODEL_HOOKS, session)
    return model


def ungate_model(model: T) -> T:
    uninstrument_once(_chat_model(model, "ungate_model"), STATE_ATTR)
    return model
