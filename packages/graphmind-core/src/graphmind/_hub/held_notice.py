"""One stderr line when a replaying app holds at a gate and nobody answers within a second.

`graphmind replay` (or a fork's live tail) that holds at a safe-mode write or a divergence is
otherwise silent in its terminal: the user thinks it hung. Only a replay (GRAPHMIND_REPLAY set)
says it: an ordinary attached app's user is watching the viewer, and its stderr is the app's own.
One daemon timer per held gate (a hold is rare and human length), cancelled when the gate closes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from .. import protocol as proto
from .._base import forksafe

NOTICE_AFTER_S = 1.0


def viewer_url(ingest_url: str) -> str:
    """The hub's page for an ingest URL (ws://127.0.0.1:4747/ingest → http://127.0.0.1:4747): no
    path, query or user part, so no token is ever printed."""
    parts = urlsplit(ingest_url)
    host = parts.hostname or "127.0.0.1"
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return f"{'https' if parts.scheme == 'wss' else 'http'}://{netloc}"


def held_line(paused: Mapping[str, Any], url: str) -> str:
    where = str(paused.get("nodeId"))
    replay = paused.get("replay")
    if isinstance(replay, dict) and replay.get("occurrence"):
        where += f"#{replay['occurrence']}"
    reason = paused.get("reason")
    if reason == proto.EFFECT:
        effect = paused.get("effect")
        cls = str(effect.get("class", "unknown")) if isinstance(effect, dict) else "unknown"
        why = f"safe mode: {'an' if cls[:1] in 'aeiou' else 'a'} {cls}"
    elif reason == proto.DIVERGENCE:
        why = "the replay diverged from the recording"
    else:
        why = str(reason)
    return f"graphmind: held at {where} ({why}) — answer it in the viewer at {url}"


def _stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: nothing to say it on
        pass


class HeldNotices:
    def __init__(
        self, url: str, write: Callable[[str], None] = _stderr, after_s: float = NOTICE_AFTER_S
    ) -> None:
        self.url = url
        self._write = write
        self._after = after_s
        self._lock = forksafe.lock()
        self._timers: dict[str, threading.Timer] = {}

    def start(self, gate_id: str, paused: Mapping[str, Any], answered: Callable[[], bool]) -> None:
        line = held_line(paused, self.url)

        def fire() -> None:
            with self._lock:
                self._timers.pop(gate_id, None)
            if not answered():
                self._write(line)

        timer = threading.Timer(self._after, fire)
        timer.daemon = True
        timer.name = "graphmind-held-notice"
        with self._lock:
            self._timers[gate_id] = timer
        timer.start()

    def stop(self, gate_id: str) -> None:
        with self._lock:
            timer = self._timers.pop(gate_id, None)
        if timer is not None:
            timer.cancel()

    def after_fork(self) -> None:
        self._lock = forksafe.lock()
        self._timers = {}
