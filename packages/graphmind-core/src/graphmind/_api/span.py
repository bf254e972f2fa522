"""`client.span(...)`: a node the code describes itself (a retrieval step, a planner loop, a job body).

A span has a before gate (continue or abort: a `with` body cannot be skipped, so it offers no inject);
its body's exceptions propagate untouched and end the node with `node.error`. A `with` block has no
value, so its node's output is what the block sets `s.output` to; as a decorator (`@client.span(...)`)
each call of the function is a span whose output is the function's return value (the seeds' "the
block's value is the span's").
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .. import protocol as proto
from .._base.names import readable_name
from .._node.spec import NodeSpec

if TYPE_CHECKING:
    from .._node.engine import Engine, NodeExecution

_SPAN_ACTIONS = (proto.CONTINUE, proto.ABORT)
F = TypeVar("F", bound=Callable[..., Any])


class Span:
    """`engine`: a client's, or the default session (a callable: asked when the span is entered)."""

    def __init__(self, engine: Engine | Callable[[], Engine], name: str, kind: str, input: Any) -> None:
        self._engine = engine
        self.name = name
        self.kind = kind
        self.input = input
        self.output: Any = None
        self.usage: dict[str, Any] | None = None
        self._ex: NodeExecution | None = None
        self._token: contextvars.Token[str | None] | None = None

    @property
    def instance_id(self) -> str | None:
        return self._ex.instance_id if self._ex else None

    def token(self, text: str, t: str = "text") -> None:
        """Streams a delta onto the node while the span is open."""
        if self._ex is not None:
            self._ex.token(text, t)

    def _start(self) -> NodeExecution | None:
        engine = self._engine() if callable(self._engine) else self._engine
        if not engine.live:
            return None
        name = readable_name(self.name, "span", "span", engine.warn)
        self._ex = engine.start_node(NodeSpec(name, self.kind, self.input, actions=_SPAN_ACTIONS))
        return self._ex

    def _activate(self) -> None:
        if self._ex is not None:
            self._token = self._ex.host.current_node.set(self._ex.instance_id)

    def __enter__(self) -> Span:
        ex = self._start()
        if ex is not None:
            ex.before()
        self._activate()
        return self

    async def __aenter__(self) -> Span:
        ex = self._start()
        if ex is not None:
            await ex.abefore()
        self._activate()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None and self._ex is not None:
            try:
                self._ex.host.current_node.reset(self._token)
            except ValueError:
                pass
        ex = self._ex
        if ex is None:
            return
        if exc is not None:
            ex.fail(exc)
        else:
            ex.finish(self.output, usage=self.usage)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def __call__(self, fn: F) -> F:
        """As a decorator: every call of `fn` is one span (a fresh node), its output what `fn` returns."""
        engine, name, kind, given = self._engine, self.name, self.kind, self.input
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def aspan(*args: Any, **kwargs: Any) -> Any:
                async with Span(engine, name, kind, given) as span:
                    span.output = result = await fn(*args, **kwargs)
                    return result

            return aspan  # type: ignore[return-value]

        @functools.wraps(fn)
        def sspan(*args: Any, **kwargs: Any) -> Any:
            with Span(engine, name, kind, given) as span:
                span.output = result = fn(*args, **kwargs)
                return result

        return sspan  # type: ignore[return-value]
