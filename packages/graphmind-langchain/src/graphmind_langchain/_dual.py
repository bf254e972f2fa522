"""A handler method that is a plain function on LangChain's sync path and a coroutine on its async path.

LangChain looks a handler's method up in exactly two places
(langchain_core/callbacks/manager.py):

- `handle_event` (sync path, a plain function) calls `getattr(handler, event_name)(...)`: a sync
  method runs in the calling thread, so it may block (a held gate) and, with `raise_error`, its
  exception stops the call. A coroutine returned here goes to `_run_coros`, which swallows every
  exception (so an async method could never abort a sync call) and, under a running loop, runs on
  a thread pool.
- `_ahandle_event_for_handler` (async path, a coroutine) awaits the method when
  `inspect.iscoroutinefunction(method)`, else calls it inline (`run_inline = True`, where a hold
  would block the loop) or in the default executor (about +330 µs a call, and every held gate
  pins a worker thread).

So the descriptor looks at its caller: from a coroutine frame it hands out the async variant,
from anything else the sync one. That keeps both paths free of executor hand-offs. The test
`test_async_path_gets_the_coroutine_variant` fails loudly if LangChain stops looking methods up
from a coroutine.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import MethodType
from typing import Any

_CO_COROUTINE = inspect.CO_COROUTINE


class dual:
    __slots__ = ("_async", "_sync", "name")

    def __init__(self, sync_fn: Callable[..., Any], async_fn: Callable[..., Any]) -> None:
        self._sync = sync_fn
        self._async = async_fn
        self.name = sync_fn.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self._sync
        caller = sys._getframe(1)
        if caller.f_code.co_flags & _CO_COROUTINE:
            return MethodType(self._async, obj)
        return MethodType(self._sync, obj)
