"""`run_inline` that is True everywhere except where langchain-core would hide other handlers' runs.

langchain-core's `AsyncCallbackManager.on_llm_start` (langchain_core/callbacks/manager.py, lines
1875-1917 in 1.8.3) sends the text-LLM start to the inline handlers only when there is any, and
to the others only when there is none (`if inline_handlers: ... else: ...`). An inline
GraphMind handler would make every tracer beside it (LangSmith, `astream_events`, `astream_log`,
`collect_runs`) miss the start of every async text-LLM run, and fail on its end
(docs/langchain.md, "Upstream: inline handlers hide a text-LLM start").

So this descriptor answers False to that one dispatch: the handler then goes with the others into
`ahandle_event`, which reads `run_inline` again, finds True, and awaits the handler's coroutine
variant first, on the loop (manager.py, `ahandle_event`: inline handlers are awaited in order, then
the rest gathered). Every other reader gets True: the chat-model, tool, chain, token and ending
callbacks stay inline (no executor hop: +50 µs instead of +330 µs a callback, bench/langchain_overhead.py).
The test `test_other_handlers.py` fails if langchain-core moves the dispatch.
"""

from __future__ import annotations

import sys
from types import CodeType
from typing import Any

from langchain_core.callbacks.manager import AsyncCallbackManager


def _codes(fn: Any) -> tuple[CodeType, ...]:
    """The function's code and its nested code objects (a list comprehension is one before Python 3.12)."""
    code: CodeType = fn.__code__
    return (code, *(c for c in code.co_consts if isinstance(c, CodeType)))


_TEXT_LLM_START = _codes(AsyncCallbackManager.on_llm_start)  # held here, so their ids stay theirs
# Compared by id: hashing a code object is not cached (0.4 µs a read, six or seven reads per async
# call), an int set lookup is ~0.05 µs.
_TEXT_LLM_START_IDS = frozenset(map(id, _TEXT_LLM_START))


class InlineExceptTextLlmStart:
    __slots__ = ()

    def __get__(self, obj: Any, owner: type | None = None) -> bool:
        return id(sys._getframe(1).f_code) not in _TEXT_LLM_START_IDS
