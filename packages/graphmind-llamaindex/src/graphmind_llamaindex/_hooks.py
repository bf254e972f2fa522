"""Every LlamaIndex method this package replaces on an instance, one row each: gate and ungate read this table.

| attr          | of                 | upstream call site (llama-index-core 0.14.25)                                   |
|---------------|--------------------|---------------------------------------------------------------------------------|
| `call`        | BaseTool           | tools/calling.py, call_tool: `tool.call(**arguments)`; FunctionTool.__call__    |
| `acall`       | AsyncBaseTool      | agent/workflow/base_agent.py, BaseWorkflowAgent._call_tool: `await tool.acall(**tool_input)` |
| `chat`        | BaseLLM            | llms/function_calling.py, FunctionCallingLLM.chat_with_tools: `self.chat(**chat_kwargs)` |
| `achat`       | BaseLLM            | same file, achat_with_tools: `await self.achat(**chat_kwargs)` (FunctionAgent._get_response) |
| `stream_chat` | BaseLLM            | same file, stream_chat_with_tools: `self.stream_chat(**chat_kwargs)`             |
| `astream_chat`| BaseLLM            | same file, astream_chat_with_tools: `await self.astream_chat(**chat_kwargs)` (FunctionAgent._get_streaming_response) |

Each row's `make(engine, obj, original bound method)` returns the replacement; `versions` is the
llama-index-core range in which that call site holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._llm import gated_achat, gated_astream_chat, gated_chat, gated_stream_chat
from ._tools import gated_acall, gated_call

Factory = Callable[[Any, Any, Callable[..., Any]], Callable[..., Any]]


@dataclass(frozen=True)
class Hook:
    attr: str
    make: Factory
    versions: str


TOOL_HOOKS: tuple[Hook, ...] = (
    Hook("call", gated_call, ">=0.14.5,<0.15"),
    Hook("acall", gated_acall, ">=0.14.5,<0.15"),
)

LLM_HOOKS: tuple[Hook, ...] = (
    Hook("chat", gated_chat, ">=0.14.5,<0.15"),
    Hook("achat", gated_achat, ">=0.14.5,<0.15"),
    Hook("stream_chat", gated_stream_chat, ">=0.14.5,<0.15"),
    Hook("astream_chat", gated_astream_chat, ">=0.14.5,<0.15"),
)
