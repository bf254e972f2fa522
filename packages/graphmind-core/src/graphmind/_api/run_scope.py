"""`client.run(name)`: a context manager (sync and async) and a decorator (sync and async functions)."""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .._base.names import readable_name
from .._runs.run import RunContext

if TYPE_CHECKING:
    from .._node.engine import Engine
    from .._runs.events import Runs

    Parts = Callable[[], tuple[Engine, Runs]]

F = TypeVar("F", bound=Callable[..., Any])


class RunScope:
    """`parts`: the engine and runs of the client the run belongs to, asked when the scope is entered
    (the default session's are those of the default client then: _api/default.py)."""

    def __init__(self, parts: Parts, name: str, meta: dict[str, Any] | None, thread: Any = None) -> None:
        self._parts = parts
        self._name = name
        self._meta = meta
        self._thread = thread
        self._runs: Runs | None = None
        self._run: RunContext | None = None
        self._token: contextvars.Token[RunContext | None] | None = None

    def __enter__(self) -> RunContext:
        engine, runs = self._parts()
        engine.attach_once()
        return self._enter(engine, runs)

    async def __aenter__(self) -> RunContext:
        engine, runs = self._parts()
        await engine.await_attach()
        return self._enter(engine, runs)

    def _enter(self, engine: Engine, runs: Runs) -> RunContext:
        if self._run is not None:
            raise RuntimeError(
                "graphmind: a run scope can be entered once; call client.run(...) again for a new run"
            )
        self._runs = runs
        # Disabled, the name is never read (no warning either); a run with no readable name is "run".
        name = readable_name(self._name, "run", "run", engine.warn) if engine.live else self._name
        self._run = runs.start(name, self._meta, self._thread)
        self._token = runs.current.set(self._run)
        return self._run

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        runs = self._runs
        assert runs is not None and self._run is not None and self._token is not None
        try:
            runs.current.reset(self._token)
        except ValueError:  # exited in another context (a generator moved between tasks): leave it
            pass
        runs.finish(self._run, exc)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def __call__(self, fn: F) -> F:
        """As a decorator: every call of `fn` is one run (the run context: `client.current_run()`)."""
        parts, name, meta, thread = self._parts, self._name, self._meta, self._thread
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def arun(*args: Any, **kwargs: Any) -> Any:
                async with RunScope(parts, name, meta, thread):
                    return await fn(*args, **kwargs)

            return arun  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with RunScope(parts, name, meta, thread):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]
