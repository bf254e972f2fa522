"""The per-call driver: what an adapter hands core's gate engine for one intercepted call.

`NodeExecution.run_sync` / `run_async` drive the gates (docs/adapters.md, "The call loop"); a driver
supplies the four things only the adapter knows, for one call:

- `body()`: the framework's own call, as the app made it (or as last edited);
- `settle(result)`: what the body returned, as the node's output (a stream teed and finished
  later, or read whole when the after gate will hold it);
- `edited(value)` / `use(edited)`: a person's edited input -> the call's new arguments (raising
  with the reason holds the gate again), then the call from now on (attempts, replays, injects);
- `from_injected(value)`: an injected JSON value -> the framework's own result type.

`edit(value)` (the `NodeSpec.edit` hook) and `run()` (the shell that starts the loop) are the same
for every adapter and live here. The Stainless layer (`graphmind.adapter.stainless`, the OpenAI and
Anthropic SDKs) and graphmind-litellm subclass `SyncDriver` and `AsyncDriver`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._node.engine import NodeExecution
    from .._node.spec import Settled


class SyncDriver:
    """One sync call through `NodeExecution.run_sync`; a subclass gives body, settle, edited, use
    and from_injected."""

    __slots__ = ("ex", "original")

    def __init__(self, original: Callable[..., Any], ex: NodeExecution) -> None:
        self.original = original  # the framework's function the hook replaced
        self.ex = ex

    def body(self) -> Any:
        raise NotImplementedError

    def settle(self, result: Any) -> Settled:
        raise NotImplementedError

    def edited(self, value: Any) -> Any:
        """The call's arguments for an edited input; raises with the reason (the gate holds again)."""
        raise NotImplementedError

    def use(self, edited: Any) -> None:
        """From now on the call is the edited one."""
        raise NotImplementedError

    def from_injected(self, value: Any) -> Settled:
        raise NotImplementedError

    def edit(self, value: Any) -> Callable[[], Any]:
        """The body of an edited call (`NodeSpec.edit`): checked now, used when the engine runs it."""
        edited = self.edited(value)

        def body() -> Any:
            self.use(edited)
            return self.body()

        return body

    def run(self) -> Any:
        ex = self.ex
        ex.spec.edit = self.edit
        return ex.run_sync(self.body, from_injected=self.from_injected, settle=self.settle)


class AsyncDriver:
    """The same for `NodeExecution.run_async`: body and settle are coroutines; from_injected checks
    the value at once (a bad shape raises: the gate holds again) and returns what the engine awaits."""

    __slots__ = ("ex", "original")

    def __init__(self, original: Callable[..., Awaitable[Any]], ex: NodeExecution) -> None:
        self.original = original
        self.ex = ex

    async def body(self) -> Any:
        raise NotImplementedError

    async def settle(self, result: Any) -> Settled:
        raise NotImplementedError

    def edited(self, value: Any) -> Any:
        raise NotImplementedError

    def use(self, edited: Any) -> None:
        raise NotImplementedError

    def from_injected(self, value: Any) -> Awaitable[Settled]:
        raise NotImplementedError

    def edit(self, value: Any) -> Callable[[], Awaitable[Any]]:
        edited = self.edited(value)

        async def body() -> Any:
            self.use(edited)
            return await self.body()

        return body

    async def run(self) -> Any:
        ex = self.ex
        ex.spec.edit = self.edit
        return await ex.run_async(self.body, from_injected=self.from_injected, settle=self.settle)
