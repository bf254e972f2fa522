"""What the writer's queue carries (store/writer.py): an app event (a hub operation is an `Op`,
store/ops.py), and what one committed transaction hands back to the event loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class EventItem:
    client_id: str
    app: str
    event: dict[str, Any]
    raw: str
    ts: float
    # Stored once per run under this key, whatever its seq (OTLP: a retried request gets new seqs).
    once: str | None = None


@dataclass
class Committed:
    """What one transaction stored, handed to the event loop after COMMIT."""

    processed: int  # queue items consumed so far (for barriers)
    processed_bytes: int = 0  # event text consumed so far (the ingest byte budget)
    events: list[tuple[int, str, str]] = field(default_factory=list)  # (cursor, runId, raw)
    runs: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (cursor, Run)
    deleted: list[str] = field(default_factory=list)
    results: list[tuple[int, Any, BaseException | None]] = field(default_factory=list)
    last_cursor: int = 0
