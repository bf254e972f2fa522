"""Which dispatcher spans become nodes, one row per LlamaIndex API: the handler reads only this table.

Every span is named `<class>.<method>-<uuid4>` and carries the bound `instance` and arguments
(llama_index_instrumentation/dispatcher.py, Dispatcher.span: `id_ = f"{actual_class}.{method_name}-{uuid.uuid4()}"`,
then `self.span_enter(id_=id_, bound_args=bound_args, instance=instance, ...)`). A row matches an
instance's base class and method; a span no row matches is transparent (its children hang under
its parent).

| base class (llama-index-core 0.14)         | methods                                   | node                  |
|--------------------------------------------|-------------------------------------------|-----------------------|
| llms/llm.py BaseLLM (base/llms/base.py)     | chat, achat, stream_chat, astream_chat, complete, acomplete, stream_complete, astream_complete | `llm:step` |
| tools/types.py BaseTool                     | call, acall                               | `tool:<name>`         |
| base/base_retriever.py BaseRetriever        | retrieve, aretrieve                       | `retriever:<class>`   |
| base/base_query_engine.py BaseQueryEngine   | query, aquery                             | `chain:<class>`       |
| workflows Workflow (agents, AgentWorkflow)  | run                                       | the run, or `agent:<name>` |
| workflows Workflow                          | any other span: a `@step`                 | `chain:<step>`        |
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.tools.types import BaseTool
from llama_index.core.workflow import Workflow

from ._describe import chat_response_json, query_response_json, retrieved_json, tool_output_json
from ._nodes import tool_name

Args = inspect.BoundArguments


@dataclass(frozen=True)
class Role:
    kind: str  # the node kind: llm | tool | retriever | chain | agent
    job: str  # how the handler opens it: llm (step identity, tokens) | tool (call id) | agent (may be the run) | plain
    name: Callable[[Any, str], str]  # (instance, method) -> node name
    describe_input: Callable[[Args], Any]
    describe_output: Callable[[Any], Any]


def _arguments(bound: Args) -> dict[str, Any]:
    return bound.arguments


def llm_messages(bound: Args) -> tuple[list[Any], dict[str, Any]]:
    args = bound.arguments
    kwargs = args.get("kwargs") or {}
    if "messages" in args:
        return list(args["messages"] or []), kwargs
    return [args.get("prompt", "")], kwargs


def tool_call_args(bound: Args) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = bound.arguments
    if "kwargs" in args or "args" in args:  # FunctionTool.call(*args, **kwargs)
        return tuple(args.get("args") or ()), dict(args.get("kwargs") or {})
    return tuple(v for k, v in args.items() if k != "self"), {}


def _query(bound: Args) -> Any:
    args = bound.arguments
    value = args.get("str_or_query_bundle", next(iter(args.values()), None))
    return {"query": getattr(value, "query_str", value)}


def _class(instance: Any, method: str) -> str:
    return type(instance).__name__


def _agent_name(instance: Any, method: str) -> str:
    name = getattr(instance, "name", None)
    return name if isinstance(name, str) and name else type(instance).__name__


def _step_input(bound: Args) -> Any:
    ev = bound.arguments.get("ev")
    return {"event": type(ev).__name__} if ev is not None else None


def _step_output(result: Any) -> Any:
    return {"event": type(result).__name__} if result is not None else None


def _text(value: Any) -> Any:
    return None if value is None else str(value)[:2000]


LLM = Role("llm", "llm", lambda i, m: "step", lambda b: None, chat_response_json)
TOOL = Role("tool", "tool", lambda i, m: tool_name(i), _arguments, tool_output_json)
RETRIEVER = Role("retriever", "plain", _class, _query, retrieved_json)
QUERY = Role("chain", "plain", _class, _query, query_response_json)
AGENT = Role("agent", "agent", _agent_name, lambda b: b.arguments.get("kwargs") or None, _text)
STEP = Role("chain", "plain", lambda i, m: m, _step_input, _step_output)

_LLM_METHODS = frozenset(
    {
        "chat",
        "achat",
        "stream_chat",
        "astream_chat",
        "complete",
        "acomplete",
        "stream_complete",
        "astream_complete",
    }
)
ROWS: tuple[tuple[type, frozenset[str] | None, Role], ...] = (
    (BaseLLM, _LLM_METHODS, LLM),
    (BaseTool, frozenset({"call", "acall"}), TOOL),
    (BaseRetriever, frozenset({"retrieve", "aretrieve"}), RETRIEVER),
    (BaseQueryEngine, frozenset({"query", "aquery"}), QUERY),
    (Workflow, frozenset({"run"}), AGENT),
    (Workflow, None, STEP),  # None: every other span of a workflow is one of its steps
)

_cache: dict[tuple[type, str], Role | None] = {}


def role_of(instance: Any, method: str) -> Role | None:
    key = (type(instance), method)
    try:
        return _cache[key]
    except KeyError:
        pass
    found = None
    for base, methods, role in ROWS:
        if isinstance(instance, base) and (methods is None or method in methods):
            found = role
            break
    _cache[key] = found
    return found


def method_of(span_id: str) -> str:
    """`FunctionAgent.run-<uuid4>` -> `run` (the uuid4 text is 36 characters)."""
    return span_id[:-37].rpartition(".")[2]
