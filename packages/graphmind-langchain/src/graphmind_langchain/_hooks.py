"""Every LangChain method this package replaces, one `graphmind.adapter.Hook` row each: gate and ungate
both read this table.

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

from graphmind.adapter import Engine, Hook, Patches

from ._model import gated_agenerate, gated_astream, gated_generate, gated_stream
from ._tools import gated_arun, gated_run
from ._version import SUPPORTED

Factory = Callable[[Callable[[], Engine], Any, Callable[..., Any], str], Callable[..., Any]]


@dataclass(eq=False)
class Gate(Patches):
    """What gate_tools / gate_model did to one object (undo undoes exactly that), and what its wrappers share."""

    obj: Any = None  # the tool or chat model gated
    token: str = ""  # this gating's mark in the object's metadata (the handler leaves its gates to us)


def _row(attr: str, make: Factory, upstream: str, applies: Callable[[Any], bool] | None = None) -> Hook[Gate]:
    def wrap(original: Callable[..., Any], gate: Gate) -> Callable[..., Any]:
        # `gate.engine`: Patches.engine, the session's engine asked at each call (the default one
        # is whatever `graphmind.configure()` built last).
        return make(gate.engine, gate.obj, original, gate.token)

    return Hook("", attr, wrap, SUPPORTED, upstream, applies)


def _streams(obj: Any) -> bool:
    return type(obj)._stream is not BaseChatModel._stream


def _astreams(obj: Any) -> bool:
    return _streams(obj) or type(obj)._astream is not BaseChatModel._astream


TOOL_HOOKS: tuple[Hook[Gate], ...] = (
    _row("_run", gated_run, "langchain_core/tools/base.py:1099 BaseTool.run -> context.run(self._run, ...)"),
    _row("_arun", gated_arun, "langchain_core/tools/base.py:1228 BaseTool.arun -> self._arun(...)"),
)

MODEL_HOOKS: tuple[Hook[Gate], ...] = (
    _row(
        "_generate_with_cache",
        gated_generate,
        "langchain_core/language_models/chat_models.py:1727 BaseChatModel.generate -> self._generate_with_cache",
    ),
    _row(
        "_agenerate_with_cache",
        gated_agenerate,
        "langchain_core/language_models/chat_models.py:1853 BaseChatModel.agenerate -> self._agenerate_with_cache",
    ),
    _row(
        "_stream",
        gated_stream,
        "langchain_core/language_models/chat_models.py:837 BaseChatModel.stream, :2024 _generate_with_cache",
        _streams,
    ),
    _row(
        "_astream",
        gated_astream,
        "langchain_core/language_models/chat_models.py:970 BaseChatModel.astream, :2179 _agenerate_with_cache",
        _astreams,
    ),
)
