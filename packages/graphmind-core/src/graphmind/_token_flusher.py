"""Streamed tokens: a batch that no later delta sends is sent by the flusher within the interval.

Mixed into `Client`; one daemon thread per client, started on the first waiting batch.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ._warn import Warner

if TYPE_CHECKING:
    from ._engine import NodeExecution


class TokenFlusher:
    _lock: threading.Lock
    _token_pending: dict[str, NodeExecution]
    _token_wakeup: threading.Event
    _token_thread: threading.Thread | None
    _token_flush_ms: float
    _disposed: bool
    _warn: Warner

    def _schedule_token_flush(self, ex: NodeExecution) -> None:
        """A node has a token batch waiting: send it within the flush interval even if no delta follows."""
        with self._lock:
            self._token_pending[ex.instance_id] = ex
            if self._token_thread is None:
                self._token_thread = threading.Thread(target=self._token_flusher, name="graphmind-tokens", daemon=True)
                self._token_thread.start()
        self._token_wakeup.set()

    def _token_flusher(self) -> None:
        interval = self._token_flush_ms / 1000.0
        while not self._disposed:
            if not self._token_wakeup.wait(1.0):
                continue
            self._token_wakeup.clear()
            # The batching window: deltas arriving meanwhile join the same frame.
            self._token_wakeup.wait(interval) if interval > 0 else None
            with self._lock:
                pending = list(self._token_pending.values())
                self._token_pending.clear()
            for ex in pending:
                try:
                    ex.flush_tokens()
                except Exception as exc:  # pragma: no cover - defensive: the flusher must not die
                    self._warn(f"[graphmind] could not send streamed tokens: {exc!r}", key="token-flush")
