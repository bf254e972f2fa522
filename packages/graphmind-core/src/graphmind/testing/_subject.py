"""What the gate matrix (`gate_matrix.py`) is given: a hub, and an adapter's subject."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .._api.client import Client
from ._fakehub import Answer


class Hub(Protocol):
    """What a case needs of a hub (FakeHub has it)."""

    events: list[dict[str, Any]]

    @property
    def url(self) -> str: ...
    def set_debug(
        self,
        *,
        breakpoints: Iterable[tuple[str, str]] | None = ...,
        mode: str | None = ...,
        pause_on_error: str | None = ...,
        wait_ack: bool = ...,
    ) -> None: ...
    def auto_answer(
        self, action: str | Callable[[dict[str, Any]], Answer | None] | None, value: Any = None
    ) -> None: ...
    def resolve(self, gate_id: str, action: str, value: Any = None, **fields: Any) -> None: ...
    def of_type(self, event_type: str) -> list[dict[str, Any]]: ...
    def wait_for(self, predicate: Callable[[], bool], timeout: float = ..., what: str = ...) -> None: ...
    def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = ...
    ) -> dict[str, Any]: ...
    def __enter__(self) -> Hub: ...
    def __exit__(self, *exc: object) -> None: ...


class GateSubject:
    """What an adapter tells the kit about its call. Override every method the matrix reaches.

    `real_calls` counts the attempts that reached the real thing (the provider, the tool body),
    failed ones included. `fail_next()` makes the next attempt fail once, with an error the
    framework does not retry by itself; `raised` is then the exception object the real call
    raised, when the subject can see it (the kit checks the app gets that very object), else None.
    """

    node_id: str = "llm:step"  # the node to break on
    injected: Any = "from the debugger"  # a JSON value a person injects at this node
    error_type: type[BaseException] = Exception  # what `fail_next` makes the call raise
    streams: bool = False  # True: `stream` / `astream` are implemented
    raised: BaseException | None = None

    @property
    def real_calls(self) -> int:
        raise NotImplementedError

    def make(self) -> Any:
        """A fresh, bare (uninstrumented) framework object."""
        raise NotImplementedError

    def instrument(self, thing: Any, session: Client) -> Any:
        """The adapter's instrument call (it returns the instrumented thing)."""
        raise NotImplementedError

    def undo(self, thing: Any) -> Any:
        """The adapter's undo call."""
        raise NotImplementedError

    def call(self, thing: Any) -> Any:
        """One sync call as an app makes it; returns what the app gets."""
        raise NotImplementedError

    async def acall(self, thing: Any) -> Any:
        """One async call as an app makes it."""
        raise NotImplementedError

    def stream(self, thing: Any) -> Iterable[Any]:
        """A streamed sync call of more than one item; the kit iterates it and may close it early."""
        raise NotImplementedError

    def astream(self, thing: Any) -> Any:
        """A streamed async call (an async iterable, or an awaitable of one)."""
        raise NotImplementedError

    def fail_next(self) -> None:
        raise NotImplementedError

    def check_real(self, result: Any) -> None:
        """Asserts `result` is the real call's result, of the framework's own type."""

    def check_injected(self, result: Any, value: Any) -> None:
        """Asserts the app got the framework's own type carrying the injected `value`."""

    def check_stream(self, items: list[Any]) -> None:
        """Asserts the app got the real stream's items, of the framework's own types."""

    # ---- edit cases (_edit_cases.py; docs/protocol.md, "Editing a held call") -----------------------
    # An input the adapter's conversion refuses (the gate is held again with `refused`).
    refused_edit: Any = ("not", "an", "input")  # a JSON list

    def edit(self, original: Any) -> Any:
        """The edited input a person writes at this node's gate, from the gate's `input` (JSON):
        change something the real thing will visibly receive (an argument, a message, the model)."""
        raise NotImplementedError(
            f"{type(self).__name__}.edit: every adapter converts an edited input back into its call "
            "(NodeSpec.edit, docs/adapters.md); tell the kit what to edit"
        )

    def check_edited(self, result: Any, edited: Any) -> None:
        """Asserts the real thing received `edited` (the provider's request, the tool's arguments)
        on its last call, and `result` is the framework's own type."""
        raise NotImplementedError(f"{type(self).__name__}.check_edited")
