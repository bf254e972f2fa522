"""The default session: the client that `graphmind.tool`, `wrap`, `wrap_tools`, `wrap_method`,
`run`, `span` and an adapter given no `session=` report to.

One rule: it is looked up when a call happens, never when the function was decorated or the
client instrumented. Tools usually live in a module of their own, imported (and decorated) before
`main()` calls `graphmind.configure(...)`; `configure` builds a new client and disposes the old
one, and every earlier decoration reports to the new one, however often `configure` is called.
Decorating builds no client either: the first call does (`graphmind.get_client()`).

Only `GRAPHMIND_DISABLED=1`, which nothing overrides, is decided at decoration time: the function
comes back as it was given. Any other kill switch belongs to the client of the moment (production
is off until `configure(enabled=True)` or `GRAPHMIND=1`): a call then goes straight through.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._config.options import disabled_for_good, is_enabled
from .._hub.code_holds import BreakpointArg, CodeHolds, Condition
from . import wrappers as _wrappers
from .run_scope import RunScope
from .span import Span

if TYPE_CHECKING:
    from types import ModuleType

    from typing_extensions import Unpack

    from .._effects.classify import EffectArgs
    from .._node.engine import Engine
    from .._runs.events import Runs

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class DefaultSession:
    """What the module-level API decorates with: calling it gives the engine of the default client now.

    `slot` is the `graphmind` module: its `_default` is the client (None until the first call or
    `configure`), its `get_client()` builds one. Read at each call (one attribute of a module)."""

    def __init__(self, slot: ModuleType) -> None:
        self._slot = slot

    def __call__(self) -> Engine:
        client = self._slot._default
        if client is None:
            client = self._slot.get_client()
        return client._engine  # type: ignore[no-any-return]

    def parts(self) -> tuple[Engine, Runs]:
        """The engine and the runs of the default client now (what a run scope enters)."""
        client = self._slot._default
        if client is None:
            client = self._slot.get_client()
        return client._engine, client._runs

    @property
    def enabled(self) -> bool:
        """False only when nothing can turn GraphMind on: a decoration returns what it was given."""
        return not disabled_for_good(os.environ)

    def _recording_now(self) -> bool:
        """Whether a call made now would be recorded (no client is built to find out)."""
        client = self._slot._default
        return bool(client.enabled) if client is not None else is_enabled(None, os.environ)

    def _accepts(self, breakpoint: BreakpointArg, hold_if: Condition | None) -> bool:
        """A bad `breakpoint=` / `hold_if=` raises at the decorator line while GraphMind is on; while
        it is off, the decoration is the seed's no-op (the function as given), as for a disabled client."""
        try:
            CodeHolds.of(breakpoint, hold_if)
        except (TypeError, ValueError):
            if self.enabled and self._recording_now():
                raise
            return False
        return True

    # ---- the module-level API's decorators -------------------------------------------------------
    def wrap(
        self,
        fn: F,
        name: str | None = None,
        *,
        breakpoint: BreakpointArg = None,
        hold_if: Condition | None = None,
        **effect: Unpack[EffectArgs],
    ) -> F:
        if not self._accepts(breakpoint, hold_if):
            return fn
        return _wrappers.wrap(self, fn, name, breakpoint=breakpoint, hold_if=hold_if, **effect)

    def tool(
        self,
        name: Any = None,
        *,
        breakpoint: BreakpointArg = None,
        hold_if: Condition | None = None,
        **effect: Unpack[EffectArgs],
    ) -> Any:
        if not self._accepts(breakpoint, hold_if):
            return name if callable(name) else _as_given
        return _wrappers.tool(self, name, breakpoint=breakpoint, hold_if=hold_if, **effect)

    def wrap_tools(
        self,
        tools: T,
        *,
        breakpoint: BreakpointArg = None,
        hold_if: Condition | None = None,
        **effect: Unpack[EffectArgs],
    ) -> T:
        if not self._accepts(breakpoint, hold_if):
            return tools
        return _wrappers.wrap_tools(self, tools, breakpoint=breakpoint, hold_if=hold_if, **effect)

    def wrap_method(
        self,
        obj: Any,
        method_name: str,
        name: str | None = None,
        *,
        breakpoint: BreakpointArg = None,
        hold_if: Condition | None = None,
        **effect: Unpack[EffectArgs],
    ) -> Any:
        if not self._accepts(breakpoint, hold_if):
            return obj
        return _wrappers.wrap_method(
            self, obj, method_name, name, breakpoint=breakpoint, hold_if=hold_if, **effect
        )

    def run(self, name: str, meta: dict[str, Any] | None = None, *, thread: Any = None) -> RunScope:
        return RunScope(self.parts, name, meta, thread)

    def span(self, name: str, kind: str = "custom", input: Any = None) -> Span:
        return Span(self, name, kind, input)


def _as_given(fn: F) -> F:
    return fn
