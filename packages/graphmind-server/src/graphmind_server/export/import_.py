"""`graphmind import FILE`: load a JSONL export into a hub's database, losslessly and idempotently
(an OTLP trace file, told from its content, goes through export/import_otlp.py).

The whole file is checked first (one line naming the first bad line and field, exit 2, nothing
written), then written in one transaction. Imported events and runs get their own client
namespace (`export/namespace.py`), so a file that reuses a live app's clientId never makes the hub
take that app's next events for duplicates.

Events go through the hub's own writer (store/importing.py: the same dedupe on (clientId, seq)
and the same run and node summaries), so a second import of the same file stores nothing. The run
rows then take the exported status, times, app, name and meta, which events alone cannot say (an
`abandoned` run).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

from ..store import StoreError
from ..store.effects import ledger_entries
from ..store.importing import Import
from ..store.items import EventItem
from .import_otlp import import_otlp, is_otlp
from .jsonl import ImportedRun, encode, read_jsonl
from .namespace import imported_client
from .source import ExportError, default_db

BATCH = 5000


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import",
        help="load a `graphmind record` JSONL export or an OTLP trace file into a hub's database",
        description="Load a JSONL export, or an OTLP trace file (OTLP/JSON or protobuf, as a collector's file "
        "exporter or a backend writes it), into a hub's database (ids kept; importing twice stores nothing "
        "new). A trace becomes the run otlp-<traceId>, as if the hub had received it at /v1/traces. Stop "
        "the hub that uses the database first.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a file written by `graphmind record --format jsonl`, or an OTLP trace file (told by its content)",
    )
    p.add_argument(
        "--db", help="the database to load into (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)"
    )
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if _is_trace(path):
            return _import_trace(path, default_db(args.db))
        runs, events = import_file(path, default_db(args.db))
    except ExportError as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    print(f"graphmind import: {runs} run(s), {events} new event(s) stored", file=sys.stderr, flush=True)
    return 0


def _is_trace(path: Path) -> bool:
    """An OTLP trace file, told by its content (import_otlp.is_otlp); else a `graphmind record` file."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        return False  # the JSONL importer names the error
    return is_otlp(head)


def _import_trace(path: Path, db: Path) -> int:
    run_ids, events, rejected = import_otlp(path, db)
    named = ", ".join(run_ids[:3]) + (", …" if len(run_ids) > 3 else "")
    print(
        f"graphmind import: {len(run_ids)} OTLP trace(s) ({named}), {events} new event(s) stored"
        + (f", {rejected} span(s) not taken" if rejected else "")
        + f"; replay one with: graphmind replay {run_ids[0]} -- COMMAND",
        file=sys.stderr,
        flush=True,
    )
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
    try:
        into = Import(db)
    except StoreError as exc:
        raise ExportError(str(exc)) from None
    except sqlite3.Error as exc:
        raise ExportError(f"cannot write to {db} ({exc}); nothing was imported") from None
    stored = 0
    try:
        with into.transaction(), path.open(encoding="utf-8") as fh:
            for item in read_jsonl(fh, str(path)):
                stored += _import_run(into, item)
    except sqlite3.Error as exc:
        raise ExportError(f"cannot write to {db} ({exc}); nothing was imported") from None
    finally:
        into.close()
    return total, stored


def _import_run(into: Import, item: ImportedRun) -> int:
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
            stored += into.write(batch)
            batch = []
    if batch:
        stored += into.write(batch)
    if "clientId" in run:
        run = {**run, "clientId": imported_client(run["clientId"])}
    into.restore_summary(run)
    _check_effects(into, run)
    return stored


def _check_effects(into: Import, run: dict[str, Any]) -> None:
    """The ledger is derived from the events (store/effects.py): the file's `effects` is read back
    against it, and a file whose ledger says otherwise (edited by hand) is named, not trusted."""
    effects = run.get("effects")
    if isinstance(effects, list) and encode(ledger_entries(into.conn, run["id"])) != encode(effects):
        print(
            f"graphmind import: run {run['id']}: the file's effects ledger differs from what its events "
            "say; the hub shows the one its events give (graphmind effects)",
            file=sys.stderr,
            flush=True,
        )
