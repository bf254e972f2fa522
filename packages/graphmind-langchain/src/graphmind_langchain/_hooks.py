"""Every LangChain method this package replaces, one row each: gate and ungate both read this table.

Upstream call sites (langchain-core 1.8.3; the same calls exist from 0.3.0):

- `_run`: langchain_core/tools/base.py, BaseTool.run -> `context.run(self._run, *tool_args, **tool_kwargs)`
- `_arun`: langchain_core/tools/base.py, BaseTool.arun -> `self._arun(*tool_args, **tool_kwargs)`;
  BaseTool._arun / StructuredTool._arun without a coroutine run `self._run` in an executor.
- `_generate_with_cache`: langchain_core/language_models/chat_models.py, BaseChatModel.generate
- `_agenerate_with_cache`: same file, BaseChatModel.agenerate
- `_stream`: same file, BaseChatModel.stream (and the streaming branch of _generate_with_cache).
  Routing (`_should_stream`) reads `type(self)._stream`, so patching the instance never changes
  whether LangChain streams; a class without `_stream` is left alone.
- `_astream`: same file, BaseChatModel.astream; the inherited one runs `self._stream` in an executor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel

from ._model import gated_agenerate, gated_astream, gated_generate, gated_stream
from ._tools import gated_arun, gated_run

Factory = Callable[[Any, Any, Callable[..., Any], str], Callable[..., Any]]


@dataclass(frozen=True)
class Hook:
    attr: str
    make: Factory  # (client, obj, original bound method, token) -> replacement
    versions: str  # the langchain-core range in which the upstream call site above holds
    applies: Callable[[Any], bool] = lambda obj: True


def _streams(obj: Any) -> bool:
    return type(obj)._stream is not BaseChatModel._stream


def _astreams(obj: Any) -> bool:
    return _streams(obj) or type(obj)._astream is not BaseChatModel._astream


TOOL_HOOKS: tuple[Hook, ...] = (
    Hook("_run", gated_run, ">=0.3,<2"),
    Hook("_arun", gated_arun, ">=0.3,<2"),
)

MODEL_HOOKS: tuple[Hook, ...] = (
    Hook("_generate_with_cache", gated_generate, ">=0.3,<2"),
    Hook("_agenerate_with_cache", gated_agenerate, ">=0.3,<2"),
    Hook("_stream", gated_stream, ">=0.3,<2", _streams),
    Hook("_astream", gated_astream, ">=0.3,<2", _astreams),
)
