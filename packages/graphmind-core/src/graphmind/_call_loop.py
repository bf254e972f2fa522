"""The whole node around one call: before gate, body, error or after gate, retries, injects.

Mixed into `NodeExecution`; `client.execute` / `aexecute` use it. The gates themselves, their
holding and their events are `NodeExecution`'s (_engine.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import protocol as proto
from ._errors import RunAborted
from ._gate import GateAnswer
from ._node import Settled

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ._client import Client

T = TypeVar("T")


def _identity(value: Any) -> Any:
    return value


def _injected(ex: CallLoop, answer: GateAnswer) -> Any:
    """Finishes a node answered by an inject; returns what the app gets."""
    value = answer.value
    if isinstance(value, Settled):
        ex.finish(value.output, usage=value.usage)
        return value.result
    ex.finish(answer.raw)
    return value


class NodeSurface:
    """What the loops use of `NodeExecution` (for the type checker; nothing at runtime)."""

    if TYPE_CHECKING:  # provided by NodeExecution
        client: Client
        instance_id: str

        def active(self) -> AbstractContextManager[None]: ...
        def wants_hold(self, gate: str) -> bool: ...
        def before(self, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        async def abefore(self, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        def after(self, output: Any, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        async def aafter(self, output: Any, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        def error(self, exc: BaseException, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        async def aerror(self, exc: BaseException, convert: Callable[[Any], Any] = ...) -> GateAnswer: ...
        def finish(self, output: Any = None, *, usage: dict[str, Any] | None = None, cut_short: bool = False, **extra: Any) -> None: ...
        def fail(self, exc: BaseException, **extra: Any) -> None: ...


class CallLoop(NodeSurface):
    def run_sync(
        self,
        call: Callable[[], T],
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Settled] | None = None,
    ) -> T:
        """Runs `call` as this node: before gate, body, error or after gate, retry, inject, abort.

        `settle` (optional) is called with each result of `call`, outside the node's context,
        before the after gate; its `Settled` says what the after gate sees and what the app gets
        (see `Settled`). Without it, `describe_output` / `describe_usage` describe the result and
        the app gets the result itself. A `from_injected` that returns a `Settled` finishes an
        injected node with its description and hands the app its `result`.
        """
        answer = self.before(from_injected)
        if answer.action == proto.INJECT:
            return _injected(self, answer)
        while True:
            current = self.client._current_node
            token = current.set(self.instance_id)  # (inlined `active()`: this is the hot path)
            try:
                result = call()
            except RunAborted as exc:
                self.fail(exc)
                raise
            except Exception as exc:
                answer = self.error(exc, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    return _injected(self, answer)
                self.fail(exc)
                raise
            finally:
                current.reset(token)
            if settle is not None:
                settled = settle(result)
                if settled.finishes_later:
                    return settled.result
                output, usage = settled.output, settled.usage
            else:
                output = describe_output(result)
            answer = self.after(output, from_injected)
            if answer.action == proto.RETRY:
                continue
            if answer.action == proto.INJECT:
                return _injected(self, answer)
            if settle is not None:
                self.finish(output, usage=usage)
                return settled.result
            self.finish(output, usage=describe_usage(result) if describe_usage is not None else None)
            return result

    async def run_async(
        self,
        call: Callable[[], Awaitable[T]],
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Awaitable[Settled]] | None = None,
    ) -> T:
        """`run_sync` from asyncio code; here `settle` is a coroutine function (it may read a body)."""
        answer = await self.abefore(from_injected)
        if answer.action == proto.INJECT:
            return _injected(self, answer)
        while True:
            current = self.client._current_node
            token = current.set(self.instance_id)
            try:
                result = await call()
            except RunAborted as exc:
                self.fail(exc)
                raise
            except Exception as exc:
                answer = await self.aerror(exc, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    return _injected(self, answer)
                self.fail(exc)
                raise
            finally:
                current.reset(token)
            if settle is not None:
                settled = await settle(result)
                if settled.finishes_later:
                    return settled.result
                output, usage = settled.output, settled.usage
            else:
                output = describe_output(result)
            answer = await self.aafter(output, from_injected)
            if answer.action == proto.RETRY:
                continue
            if answer.action == proto.INJECT:
                return _injected(self, answer)
            if settle is not None:
                self.finish(output, usage=usage)
                return settled.result
            self.finish(output, usage=describe_usage(result) if describe_usage is not None else None)
            return result
