"""Every LlamaIndex method this package replaces on an instance, one `graphmind.adapter.Hook` row each: gate and ungate read this table.

| attr          | of                 | upstream call site (llama-index-core 0.14.25)                                   |
|---------------|--------------------|---------------------------------------------------------------------------------|
| `call`        | BaseTool           | tools/calling.py, call_tool: `tool.call(**arguments)`; FunctionTool.__call__    |
| `acall`       | AsyncBaseTool      | agent/workflow/base_agent.py, BaseWorkflowAgent._call_tool: `await tool.acall(**tool_input)` |
| `chat`        | BaseLLM            | llms/function_calling.py, FunctionCallingLLM.chat_with_tools: `self.chat(**chat_kwargs)` |
| `achat`       | BaseLLM            | same file, achat_with_tools: `await self.achat(**chat_kwargs)` (FunctionAgent._get_response) |
| `stream_chat` | BaseLLM            | same file, stream_chat_with_tools: `self.stream_chat(**chat_kwargs)`             |
| `astream_chat`| BaseLLM            | same file, astream_chat_with_tools: `await self.astream_chat(**chat_kwargs)` (FunctionAgent._get_streaming_response) |

Each row is a `graphmind.adapter.Hook`: its wrap builds the replacement from the original bound
method and the `Gate` (the engine, the object); `supported` is the llama-index-core range in which
that call site holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmind.adapter import Engine, Hook, Patches

from ._llm import gated_achat, gated_astream_chat, gated_chat, gated_stream_chat
from ._tools import gated_acall, gated_call
from ._version import SUPPORTED

Factory = Callable[[Callable[[], Engine], Any, Callable[..., Any]], Callable[..., Any]]


@dataclass(eq=False)
class Gate(Patches):
    """What gate_tools / gate_llm did to one object (undo undoes exactly that), and what its wrappers share."""

    obj: Any = None  # the tool or LLM gated


def _row(attr: str, make: Factory, upstream: str) -> Hook[Gate]:
    def wrap(original: Callable[..., Any], gate: Gate) -> Callable[..., Any]:
        # `gate.engine`: Patches.engine, the session's engine asked at each call (the default one
        # is whatever `graphmind.configure()` built last).
        return make(gate.engine, gate.obj, original)

    # optional: a tool without `acall` (a plain BaseTool) keeps its other rows
    return Hook("", attr, wrap, SUPPORTED, upstream, optional=True)


TOOL_HOOKS: tuple[Hook[Gate], ...] = (
    _row("call", gated_call, "llama_index/core/tools/calling.py:27 call_tool; FunctionTool.__call__"),
    _row(
        "acall", gated_acall, "llama_index/core/agent/workflow/base_agent.py:374 BaseWorkflowAgent._call_tool"
    ),
)

LLM_HOOKS: tuple[Hook[Gate], ...] = (
    _row("chat", gated_chat, "llama_index/core/llms/function_calling.py:55 chat_with_tools"),
    _row("achat", gated_achat, "llama_index/core/llms/function_calling.py:83 achat_with_tools"),
    _row(
        "stream_chat",
        gated_stream_chat,
        "llama_index/core/llms/function_calling.py:112 stream_chat_with_tools",
    ),
    _row(
        "astream_chat",
        gated_astream_chat,
        "llama_index/core/llms/function_calling.py:135 astream_chat_with_tools",
    ),
)
