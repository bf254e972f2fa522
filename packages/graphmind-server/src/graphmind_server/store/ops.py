"""The hub's own writes, run by the writer in order with the events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import index_merge, labels, retention
from .writer import Writer


class Op:
    """A hub operation run inside the writer's transaction; apply() returns its result."""

    def apply(self, writer: Writer) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


class Look(Op):
    """Nothing to write: the writer looks at its files before the (empty) transaction
    (store/wal_watch.py)."""

    def apply(self, writer: Writer) -> None:
        return None


@dataclass
class SetSetting(Op):
    key: str
    value: str

    def apply(self, writer: Writer) -> None:
        writer.conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (self.key, self.value),
        )


@dataclass
class Abandon(Op):
    """Mark every running run of a client abandoned (its app did not come back in time), saying why."""

    client_id: str
    now_ms: float
    reason: str | None = None

    def apply(self, writer: Writer) -> list[str]:
        ids = [
            r[0]
            for r in writer.conn.execute(
                "SELECT id FROM runs WHERE client_id = ? AND status = 'running'", (self.client_id,)
            )
        ]
        for run_id in ids:
            run = writer.run(run_id)
            if run is not None and run.status == "running":
                run.status, run.ended_at, run.abandoned_reason = "abandoned", self.now_ms, self.reason
                writer.touch(run)
        return ids


@dataclass
class RecordDropped(Op):
    """An app's `dropped` frame: per run, per reason, its events that will never arrive (totals so
    far). A run the hub has not heard of yet gets its row now, so its losses are seen."""

    client_id: str
    app: str
    runs: dict[str, dict[str, int]]
    now_ms: float

    def apply(self, writer: Writer) -> Any:
        for run_id, reasons in self.runs.items():
            run = writer.run_or_new(run_id, self.app, self.client_id, self.now_ms)
            if run.add_dropped(reasons) or run.new:
                writer.touch(run)


@dataclass
class DeleteRun(Op):
    run_id: str

    def apply(self, writer: Writer) -> bool:
        # One way a run and everything of it goes (store/retention.py), for a delete and a prune.
        found = writer.conn.execute("SELECT 1 FROM runs WHERE id = ?", (self.run_id,)).fetchone() is not None
        retention.delete_runs(writer.conn, [self.run_id])
        if found:
            writer.forget(self.run_id)
        return found


@dataclass
class PutLabel(Op):
    """A person's note and tags on a run (node_id '') or one of its nodes (store/labels.py); the
    run gets a cursor of its own, so a viewer that catches up later reads the change too."""

    run_id: str
    node_id: str
    label: dict[str, Any]

    def apply(self, writer: Writer) -> bool:
        if not labels.put(writer.conn, self.run_id, self.node_id, self.label):
            return False
        run = writer.run(self.run_id)
        if run is not None:
            writer.touch(run)
        return True


@dataclass
class Prune(Op):
    """One chunk of a start-up prune too big to finish before the hub listens (store/retention.py):
    these runs go, as DeleteRun would delete each; returns the events deleted."""

    run_ids: list[str]

    def apply(self, writer: Writer) -> int:
        events = retention.delete_runs(writer.conn, self.run_ids)
        for run_id in self.run_ids:
            writer.forget(run_id)
        return events


class MergeIndex(Op):
    """One step of clearing the search index of what a big prune deleted (store/index_merge.py);
    True while there is more to do. The same op is submitted again for each step."""

    def __init__(self, pages: int = 200) -> None:
        self.merge = index_merge.Merge(pages)

    def apply(self, writer: Writer) -> bool:
        return self.merge.step(writer.conn)


@dataclass
class MissingSeqs(Op):
    """A `stored.query`: which of these seqs of a client are not stored. Run by the writer after
    everything queued before it is written, so "missing" means lost, not late."""

    client_id: str
    ranges: list[tuple[int, int]]

    def apply(self, writer: Writer) -> list[list[int]]:
        conn = writer.conn
        missing: list[list[int]] = []
        for lo, hi in self.ranges:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM events WHERE client_id = ? AND seq BETWEEN ? AND ?",
                (self.client_id, lo, hi),
            ).fetchone()
            if count == hi - lo + 1:
                continue  # all there: the index answers without reading a row
            expected = lo
            for (seq,) in conn.execute(
                "SELECT seq FROM events WHERE client_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                (self.client_id, lo, hi),
            ):
                if seq > expected:
                    missing.append([expected, seq - 1])
                expected = seq + 1
            if expected <= hi:
                missing.append([expected, hi])
        return missing


@dataclass
class IndexNow(Op):
    """Bring the search index up to every event stored so far (a search asks before it reads)."""

    def apply(self, writer: Writer) -> None:
        writer._flush_rows()
        writer.index_now()
