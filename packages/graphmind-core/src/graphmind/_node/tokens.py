"""A node's streamed tokens: deltas batched into `node.token` frames (a mixin of `NodeRecord`)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from .. import protocol as proto
from .._base import forksafe

if TYPE_CHECKING:
    from .host import NodeHost

NO_TOKENS: Any = contextlib.nullcontext()  # a node's lock until its first delta


class TokenBuffer:
    """The deltas a node has not sent yet; `NodeRecord` sets the fields in its `__init__`."""

    host: NodeHost
    instance_id: str
    ended: bool
    trusted: bool
    _deltas: list[dict[str, Any]]
    _last_flush: float
    _token_lock: Any

    def _base(self, event_type: str) -> dict[str, Any]:
        raise NotImplementedError

    def token(self, text: str, t: str = "text", **extra: Any) -> None:
        """A streamed delta; batched into `node.token` frames about every 34 ms.

        A batch not sent by the next delta is sent by the client's flusher within the interval, so
        the tail of a stream that pauses still reaches the viewer before the step ends.
        """
        if self.ended or not self.host.live:
            return
        if self._token_lock is NO_TOKENS:
            # The app thread appends, the client's flusher may flush: from the first delta on they share a lock.
            self._token_lock = forksafe.lock()
        with self._token_lock:
            deltas = self._deltas
            was_empty = not deltas
            last = deltas[-1] if deltas else None
            if (
                last is not None
                and last["t"] == t
                and len(last) == 2 + len(extra)
                # a text delta has no extra: no generator per token for it
                and (not extra or all(last.get(k) == v for k, v in extra.items()))
            ):
                last["v"] += text
            else:
                delta = {"t": t, "v": text}
                delta.update(extra)
                deltas.append(delta)
            now = self.host.clock()
            due = now - self._last_flush >= self.host.token_flush_ms
        if due:
            self.flush_tokens(now)
        elif was_empty:
            self.host.flusher.schedule(self)

    def flush_tokens(self, now: float | None = None) -> None:
        if not self._deltas:
            return  # nothing streamed (most nodes): no lock to take
        with self._token_lock:
            if not self._deltas:
                return
            deltas, self._deltas = self._deltas, []
            self._last_flush = self.host.clock() if now is None else now
        event = self._base(proto.NODE_TOKEN)
        event["deltas"] = deltas
        self.host.emit(event, self.trusted)
