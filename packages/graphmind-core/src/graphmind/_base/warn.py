"""Rate-limited warnings: internal failures never raise into the app, they become one warning."""

from __future__ import annotations

import logging
import time

from . import forksafe

DEFAULT_LOGGER = logging.getLogger("graphmind")


class Warner:
    """Logs each distinct warning key at most once per `interval` seconds."""

    def __init__(self, logger: logging.Logger | None = None, interval: float = 60.0) -> None:
        self.logger = logger or DEFAULT_LOGGER
        self.interval = interval
        self._last: dict[str, float] = {}
        self._lock = forksafe.lock()
        self.count = 0

    def __call__(self, message: str, key: str | None = None) -> None:
        key = key or message
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                return
            self._last[key] = now
            self.count += 1
        try:
            self.logger.warning(message)
        except Exception:  # a broken logger must not break the app either
            pass

    def always(self, message: str) -> None:
        """Logs without rate limiting: for callers that already say once per occurrence (loop streaks)."""
        with self._lock:
            self.count += 1
        try:
            self.logger.warning(message)
        except Exception:
            pass
