"""The one process-wide patch of an adapter whose hooks sit on modules or classes (litellm's
functions, the OpenAI Agents SDK's run loop): the lock, the one `Patches` of the process, instrument
and uninstrument, written once.

    PATCH = ProcessPatch(((litellm, row) for row in HOOKS))
    PATCH.instrument(session)   # idempotent: a second call patches nothing more, its session is the one reported to
    PATCH.uninstrument()        # the very originals back; a function someone replaced after us stays theirs

A disabled session patches nothing (already patched for another session: the calls now report to
the disabled one, so they go straight through). With `moved`, a row whose hook the installed
framework lacks (`AttributeError`) undoes every row, warns once and patches nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .._base import forksafe
from ._hooks import Hook, Patches
from ._session import enabled_for, engine_for

if TYPE_CHECKING:
    from .._api.client import Client

__all__ = ["ProcessPatch"]


class ProcessPatch:
    """The patches an adapter puts on shared objects, once per process. `rows`: (the object patched,
    its row), in the order they are applied; `also_undo`: what else uninstrument undoes first (e.g.
    the per-instance patches a row's wrapper added since)."""

    def __init__(
        self,
        rows: Iterable[tuple[object, Hook[Patches]]],
        *,
        moved: Callable[[AttributeError], tuple[str, str]] | None = None,
        also_undo: Callable[[], None] | None = None,
    ) -> None:
        self.rows = tuple(rows)
        self._moved = moved
        self._also_undo = also_undo
        self._lock = forksafe.lock()  # unlocked again in a forked child
        # The session the wrappers report to (None: the default client, looked up at each call).
        self.state = Patches()

    @property
    def active(self) -> bool:
        return self.state.active

    def instrument(self, session: Client | None) -> bool:
        """Applies every row (once per process). False when nothing is patched."""
        enabled = enabled_for(session)  # builds no client: the default one is looked up per call
        with self._lock:
            if not enabled:
                if self.state.active:  # patched for another session: its calls now go straight through
                    self.state.session = session
                return False
            self.state.session = session
            try:
                for owner, row in self.rows:
                    self.state.apply(owner, (row,), self.state)
            except AttributeError as exc:
                if self._moved is None:
                    raise
                self.state.undo()  # a framework outside the range moved a hook: patch nothing at all
                message, key = self._moved(exc)
                engine_for(session).warn(message, key=key)
                return False
            return self.state.active

    def uninstrument(self) -> None:
        with self._lock:
            if self._also_undo is not None:
                self._also_undo()
            self.state.undo()
            self.state.session = None
