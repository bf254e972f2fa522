"""`graphmind import FILE`: load a JSONL export into a hub's database, losslessly and idempotently.

The whole file is checked first (one line naming the first bad line and field, exit 2, nothing
written), then written in one transaction. Imported events and runs get their own client
namespace (`export/namespace.py`), so a file that reuses a live app's clientId never makes the hub
take that app's next events for duplicates.

Events go through the hub's own writer (the same dedupe on (clientId, seq) and the same run and
node summaries), so a second import of the same file stores nothing. The run rows then take the
exported status, times, app, name and meta, which events alone cannot say (an `abandoned` run).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from ..store import StoreError
from ..store.effects import ledger_entries
from ..store.items import EventItem
from ..store.schema import open_database
from ..store.writer import Writer
from .jsonl import ImportedRun, encode, read_jsonl
from .namespace import imported_client
from .source import ExportError, default_db

BATCH = 5000


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import",
        help="load a `graphmind record` JSONL export into a hub's database",
        description="Load a JSONL export into a hub's database (ids kept; importing twice stores nothing new). "
        "Stop the hub that uses the database first.",
    )
    p.add_argument("file", metavar="FILE", help="a file written by `graphmind record --format jsonl`")
    p.add_argument(
        "--db", help="the database to load into (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)"
    )
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    try:
        runs, events = import_file(Path(args.file), default_db(args.db))
    except ExportError as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    print(f"graphmind import: {runs} run(s), {events} new event(s) stored", file=sys.stderr, flush=True)
    return 0


def import_file(path: Path, db: Path) -> tuple[int, int]:
    """(runs in the file, events newly stored). The whole file is checked before anything is written."""
    try:
        with path.open(encoding="utf-8") as fh:
            total = sum(1 for _ in read_jsonl(fh, str(path)))
    except OSError as exc:
        raise ExportError(f"cannot read {path} ({exc.strerror or exc}); check the FILE argument") from None
    except UnicodeDecodeError:
        raise ExportError(f"{path} is not UTF-8 text; pass a file written by `graphmind record`") from None
    conn = _open_exclusive(db)
    stored = 0
    try:
        writer = Writer(conn, lambda committed: None)
        writer.nested = True
        conn.execute("BEGIN IMMEDIATE")  # one transaction: the whole file or nothing
        try:
            with path.open(encoding="utf-8") as fh:
                for item in read_jsonl(fh, str(path)):
                    stored += _import_run(writer, conn, item)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise ExportError(f"cannot write to {db} ({exc}); nothing was imported") from None
    finally:
        conn.close()
    return total, stored


def _open_exclusive(db: Path) -> sqlite3.Connection:
    try:
        conn = open_database(db)
    except StoreError as exc:
        raise ExportError(str(exc)) from None
    # EXCLUSIVE locking mode keeps the lock for as long as this connection lives, and taking it
    # fails at once while any other connection (a running hub, `graphmind mcp`) has the file open:
    # the hub caches its cursor and runs, so writing under it would corrupt its view.
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        conn.close()
        raise ExportError(
            f"{db} is in use (a running hub or `graphmind mcp`); stop it first, "
            "or import into another file with --db"
        ) from None
    return conn


def _import_run(writer: Writer, conn: sqlite3.Connection, item: ImportedRun) -> int:
    run = item.run
    app: str = run["app"] if isinstance(run.get("app"), str) else "unknown"
    started: float = float(run["startedAt"]) if isinstance(run.get("startedAt"), (int, float)) else 0.0
    stored = 0
    batch: list[EventItem] = []
    for client_id, event in item.events:
        client_id = imported_client(client_id)
        raw_ts = event.get("ts")
        ts = float(raw_ts) if isinstance(raw_ts, (int, float)) and not isinstance(raw_ts, bool) else started
        batch.append(EventItem(client_id, app, event, encode(event), ts))
        if len(batch) >= BATCH:
            stored += writer.write_now(batch)
            batch = []
    if batch:
        stored += writer.write_now(batch)
    _restore_run_row(conn, run)
    writer.runs.pop(run["id"], None)  # the row changed under the writer's cache
    _check_effects(conn, run)
    return stored


def _check_effects(conn: sqlite3.Connection, run: dict[str, Any]) -> None:
    """The ledger is derived from the events (store/effects.py): the file's `effects` is read back
    against it, and a file whose ledger says otherwise (edited by hand) is named, not trusted."""
    effects = run.get("effects")
    if isinstance(effects, list) and encode(ledger_entries(conn, run["id"])) != encode(effects):
        print(
            f"graphmind import: run {run['id']}: the file's effects ledger differs from what its events "
            "say; the hub shows the one its events give (graphmind effects)",
            file=sys.stderr,
            flush=True,
        )


def _restore_run_row(conn: sqlite3.Connection, run: dict[str, Any]) -> None:
    """The exported summary wins over the one derived from events (status `abandoned`, times)."""
    fields = {
        "app": "app",
        "name": "name",
        "status": "status",
        "started_at": "startedAt",
        "ended_at": "endedAt",
        "client_id": "clientId",
    }
    values = {col: run[key] for col, key in fields.items() if key in run}
    if "client_id" in values:
        values["client_id"] = imported_client(values["client_id"])
    if isinstance(run.get("meta"), dict):
        values["meta"] = json.dumps(run["meta"])  # as the hub writes it (store/derive.py)
    if run.get("status") == "abandoned" and isinstance(run.get("abandonedReason"), str):
        values["abandoned_reason"] = run["abandonedReason"]
    dropped = run.get("dropped")
    reasons = dropped.get("reasons") if isinstance(dropped, dict) else None
    if isinstance(reasons, dict):  # what the app could not deliver travels with the run
        kept = {k: v for k, v in reasons.items() if isinstance(k, str) and type(v) is int and v > 0}
        values["dropped"] = json.dumps(kept, sort_keys=True)
    if not values:
        return
    exists = conn.execute("SELECT 1 FROM runs WHERE id = ?", (run["id"],)).fetchone()
    if exists:
        conn.execute(
            f"UPDATE runs SET {', '.join(f'{c} = ?' for c in values)} WHERE id = ?",
            (*values.values(), run["id"]),
        )
