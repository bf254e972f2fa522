"""Opening the database: pragmas, the schema version and its migrations.

A migration is a list of SQL statements run in one transaction; the version table says which
ones already ran. Add a migration by appending to MIGRATIONS; never edit a shipped one.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from ..base.files import FILE_MODE, create_private, database_files, private_dir, tighten
from . import calls, hourly, labels, nodestats, search, threads
from .usage import backfill as usage_backfill

MIGRATIONS: list[list[str | Callable[[sqlite3.Connection], None]]] = [
    # 1: runs, their nodes, events (raw JSON exactly as the app sent it) and hub settings.
    [
        "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            app TEXT NOT NULL,
            name TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            ended_at REAL,
            node_count INTEGER NOT NULL DEFAULT 0,
            event_count INTEGER NOT NULL DEFAULT 0,
            client_id TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}',
            implicit INTEGER NOT NULL DEFAULT 0,
            agent_node TEXT,
            cursor INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX runs_by_start ON runs (started_at DESC)",
        "CREATE INDEX runs_by_cursor ON runs (cursor)",
        "CREATE INDEX runs_by_client ON runs (client_id, status)",
        """CREATE TABLE nodes (
            run_id TEXT NOT NULL,
            node_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            executions INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (run_id, node_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE events (
            cursor INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            client_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            body TEXT NOT NULL
        )""",
        "CREATE UNIQUE INDEX events_by_client_seq ON events (client_id, seq)",
        "CREATE INDEX events_by_run_seq ON events (run_id, seq)",
    ],
    # 2: what the status rule keeps of a node's executions (store/status.py): the latest one's
    # instanceId and status, and the instanceIds held now (a JSON list). A node stored before has
    # none of it: its stored status stands until its next event.
    [
        "ALTER TABLE nodes ADD COLUMN latest TEXT",
        "ALTER TABLE nodes ADD COLUMN latest_status TEXT",
        "ALTER TABLE nodes ADD COLUMN held TEXT NOT NULL DEFAULT '[]'",
    ],
    # 3: events of a run that never reached the store, by reason ({"hub_stalled": 1234}; issue 38).
    ["ALTER TABLE runs ADD COLUMN dropped TEXT NOT NULL DEFAULT '{}'"],
    # 4: search and filters (store/search.py), tokens and cost (store/usage.py), time held. Runs
    # stored before are indexed and faceted here; their usage is folded from their events.
    [
        "CREATE VIRTUAL TABLE search USING fts5(body, run_id UNINDEXED, node_id UNINDEXED,"
        " instance_id UNINDEXED, tokenize = 'unicode61')",
        "CREATE TABLE facets (facet TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (facet, run_id)) WITHOUT ROWID",
        "CREATE INDEX facets_by_run ON facets (run_id)",
        "ALTER TABLE runs ADD COLUMN usage TEXT NOT NULL DEFAULT '{}'",
        "ALTER TABLE runs ADD COLUMN held_ms REAL NOT NULL DEFAULT 0",
        search.INDEX_SQL.replace("?", "-1", 1).replace("?", "9223372036854775807", 1),
        *search.BACKFILL_FACETS,
        # Everything stored so far is indexed now; the writer goes on from here (search.py).
        "INSERT OR REPLACE INTO settings (key, value) SELECT 'search_indexed', COALESCE(MAX(cursor), 0) FROM events",
        usage_backfill,
    ],
    # 5: why the hub marked a run abandoned; when the hub first stored anything of it (its own
    # clock: the runs list and the start-up prune order by it, never by the app's). A run stored
    # before takes its startedAt, never later than now.
    [
        "ALTER TABLE runs ADD COLUMN abandoned_reason TEXT",
        "ALTER TABLE runs ADD COLUMN received_at REAL NOT NULL DEFAULT 0",
        "UPDATE runs SET received_at = MIN(started_at, (julianday('now') - 2440587.5) * 86400000.0)",
        "CREATE INDEX runs_by_received ON runs (received_at DESC)",
    ],
    # 6: keys of events stored once per run whatever their seq (OTLP spans: an exporter's retry of
    # a request the hub took comes with new seqs; store/writer.py `_first_of`).
    [
        "CREATE TABLE once_keys (run_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID",
    ],
    # 7: a run's thread (store/threads.py: taken from the run.started events stored before, which
    # carried it all along) and the labels a person puts on runs and nodes (store/labels.py).
    [*threads.MIGRATION, *labels.MIGRATION],
    # 8: one row per ended node execution, for the trends page's SQL (store/nodestats.py); the
    # executions stored before are read from their events once.
    [*nodestats.MIGRATION, nodestats.backfill],
    # 9: answers a coding assistant proposed at a held gate, and who accepted or rejected them
    # (store/proposals.py): the node's audit of what was proposed and by whose click it applied.
    [
        """CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            node_id TEXT,
            instance_id TEXT,
            gate_id TEXT NOT NULL,
            gate TEXT,
            action TEXT NOT NULL,
            answer TEXT NOT NULL,
            why TEXT NOT NULL,
            status TEXT NOT NULL,
            decided_by TEXT,
            note TEXT,
            created_at REAL NOT NULL,
            decided_at REAL
        )""",
        "CREATE INDEX proposals_by_run ON proposals (run_id, created_at)",
    ],
    # 10: the node_stats rows summed per UTC hour (store/hourly.py), what the trends page reads for
    # the whole hours of its range; filled here from node_stats (two GROUP BYs, no event read).
    [*hourly.MIGRATION, hourly.backfill],
    # 11: an execution's events and a node's starts by index (store/calls.py): a click on a model
    # step reads its start and end (the playground, the context X-ray), not the run's events.
    [*calls.MIGRATION],
]

SCHEMA_VERSION = len(MIGRATIONS)
INTEGRITY_BUDGET_S = 2.0  # the start-up integrity check stops here on a big file (docs/hub.md)


class StoreError(Exception):
    """The database cannot be used; str() is the one line to print."""


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    # check_same_thread=False: the writer's connection is opened on the starting thread (so an
    # unusable path fails before the hub listens) and then used only by the writer thread; read
    # connections live in a pool and are used by one thread at a time.
    conn = sqlite3.connect(str(path), timeout=10, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    if readonly:
        conn.execute("PRAGMA query_only = 1")
    else:
        conn.execute("PRAGMA journal_mode = WAL")
        # In WAL mode NORMAL keeps every committed transaction across a process crash (SIGKILL);
        # only a power loss can drop the last ones.
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def open_database(path: Path) -> sqlite3.Connection:
    """Create the file (and its directory) if needed and migrate it; StoreError on any failure."""
    hint = "pass --db or set GRAPHMIND_DB to a writable file"
    try:
        private_dir(path.parent)
    except OSError as exc:
        raise StoreError(
            f"cannot create the database directory {path.parent} ({exc.strerror or exc}); {hint}"
        ) from None
    try:  # 0600 before SQLite opens it: SQLite gives the WAL and SHM files the database's mode
        create_private(path)
        for companion in database_files(path)[1:]:
            tighten(companion, FILE_MODE)
    except OSError as exc:
        raise StoreError(f"cannot open the database {path} ({exc.strerror or exc}); {hint}") from None
    try:
        conn = connect(path)
        check_integrity(conn, path)
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot switch {path} to WAL mode (got {mode}); {hint}")
        migrate(conn, path)
        # Prove the file is writable now, not at the first event.
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc):
            raise StoreError(damaged(path, str(exc))) from None
        raise StoreError(f"cannot open the database {path} ({exc}); {hint}") from None
    return conn


def damaged(path: Path, problem: str) -> str:
    """The one line for a damaged file: how to start anyway and how to get its data back."""
    problem = " ".join(problem.split())[:160]  # one line, whatever SQLite said
    return (
        f"the database {path} is damaged ({problem}); start with --db pointing at another file, "
        f"and recover what it holds with: sqlite3 {path} .recover | sqlite3 recovered.db"
    )


def check_integrity(conn: sqlite3.Connection, path: Path, budget_s: float = INTEGRITY_BUDGET_S) -> None:
    """`PRAGMA quick_check`, cut off after `budget_s` on a big file (the start-up stays fast; a
    damaged page past the budget still fails its first read as a JSON 503, never silently)."""
    # The check is one VDBE instruction (a progress handler never runs inside it); interrupt()
    # from a timer is what SQLite's integrity check polls between pages.
    timer = threading.Timer(budget_s, conn.interrupt)
    timer.start()
    try:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc):
            return  # out of time: the part checked was sound
        raise
    finally:
        timer.cancel()
    if rows and rows[0][0] != "ok":
        raise StoreError(damaged(path, str(rows[0][0])))


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else 0
        if row is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} has schema version {version}, newer than this hub understands ({SCHEMA_VERSION}); "
                "upgrade graphmind-server or pass --db with another file"
            )
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number]:
                if callable(statement):
                    statement(conn)
                else:
                    conn.execute(statement)
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
