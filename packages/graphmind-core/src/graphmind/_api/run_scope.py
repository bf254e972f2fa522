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

F = TypeVar("F", bound=Callable[..., Any])


class RunScope:
    def __init__(self, engine: Engine, runs: Runs, name: str, meta: dict[str, Any] | None) -> None:
        self._engine = engine
        self._runs = runs
        # Disabled, the name is never read (no warning either); a run with no readable name is "run".
        self._name = readable_name(name, "run", "run", engine.warn) if engine.live else name
        self._meta = meta
        self._run: RunContext | None = None
        self._token: contextvars.Token[RunContext | None] | None = None

    def __enter__(self) -> RunContext:
        self._engine.attach_once()
        return self._enter()

    async def __aenter__(self) -> RunContext:
        await self._engine.await_attach()
        return self._enter()

    def _enter(self) -> RunContext:
        if self._run is not None:
            raise RuntimeError(
                "graphmind: a run scope can be entered once; call client.run(...) again for a new run"
            )
        self._run = self._runs.start(self._name, self._meta)
        self._token = self._runs.current.set(self._run)
        return self._run

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._run is not None and self._token is not None
        try:
            self._runs.current.reset(self._token)
        except ValueError:  # exited in another context (a generator moved between tasks): leave it
            pass
        self._runs.finish(self._run, exc)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def __call__(self, fn: F) -> F:
        """As a decorator: every call of `fn` is one run (the run context: `client.current_run()`)."""
        engine, runs, name, meta = self._engine, self._runs, self._name, self._meta
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def arun(*args: Any, **kwargs: Any) -> Any:
                async with RunScope(engine, runs, name, meta):
                    return await fn(*args, **kwargs)

            return arun  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with RunScope(engine, runs, name, meta):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]
