"""`graphmind record`: export stored runs as JSONL, JSON or OTLP, or post them to an OTLP collector.

Reads the hub's database read-only, whether or not a hub is running. By default every value under
a secret-looking key is replaced by "__REDACTED__" (the list: graphmind.redaction.SECRET_KEYS,
docs/export.md); `--keep-secrets` opts out.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from graphmind.redaction import strip_secret_keys

from ..base.files import open_private
from ..store.effects import ledger_entries
from ..store.readonly import snapshot
from . import otlp
from .jsonl import HEADER, JsonDocument, encode, event_line, run_line
from .otlp_http import OtlpTarget, check_protocol, parse_headers, traces_url
from .source import ExportError, default_db, event_count, iter_events, open_readonly, select_runs

FORMATS = ("jsonl", "json", "otlp")
PROGRESS_EVERY_S = 1.0
PROGRESS_FROM_EVENTS = 20_000


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "record",
        help="export stored runs (JSONL, JSON, OTLP) or post them to an OTLP collector",
        description="Export runs from the hub's database (read-only; a running hub is fine). Values under "
        "secret-looking keys are removed unless --keep-secrets.",
    )
    p.add_argument(
        "run_ids", nargs="*", metavar="RUN_ID", help="runs to export (default: every run, or --last N)"
    )
    p.add_argument("--last", type=_positive, metavar="N", help="the newest N runs")
    p.add_argument("--app", help="only runs of this app")
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl (default, `graphmind import` reads it), "
        "json (one document) or otlp (OTLP/JSON ExportTraceServiceRequest, OpenInference attributes)",
    )
    p.add_argument("--db", help="the hub's database (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.add_argument("--keep-secrets", action="store_true", help="keep values under secret-looking keys")
    p.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="post each run as one OTLP/HTTP trace to this collector (e.g. http://127.0.0.1:4318)",
    )
    p.add_argument("--otlp-protocol", default="http/protobuf", help="http/protobuf (default) or http/json")
    p.add_argument(
        "--header", action="append", metavar="K=V", help="an HTTP header for the collector (repeatable)"
    )
    p.set_defaults(func=run_command)


def _positive(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--last must be a whole number >= 1 (got {text!r})")
    return value


class _ClosedPipe(Exception):
    """stdout's reader went away (`graphmind record | head -1`): stop quietly."""


def run_command(args: argparse.Namespace) -> int:
    try:
        return _record(args)
    except ExportError as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    except _ClosedPipe:
        return 0  # the reader has what it wanted, like any Unix filter cut short


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit fails no second time."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class Exporter:
    """Counts what it strips and reports progress on stderr for large exports."""

    def __init__(self, keep_secrets: bool, total_events: int) -> None:
        self.keep_secrets = keep_secrets
        self.removed = 0
        self.total = total_events
        self.done = 0
        self._next_progress = time.monotonic() + PROGRESS_EVERY_S

    def clean(self, value: Any) -> Any:
        if self.keep_secrets:
            return value
        value, removed = strip_secret_keys(value)
        self.removed += removed
        return value

    def tick(self) -> None:
        self.done += 1
        if (
            self.total >= PROGRESS_FROM_EVENTS
            and self.done % 1000 == 0
            and time.monotonic() >= self._next_progress
        ):
            self._next_progress = time.monotonic() + PROGRESS_EVERY_S
            print(f"graphmind record: {self.done}/{self.total} events", file=sys.stderr, flush=True)


def _record(args: argparse.Namespace) -> int:
    target = None
    if args.otlp_endpoint:
        check_protocol(args.otlp_protocol)
        target = OtlpTarget(traces_url(args.otlp_endpoint), args.otlp_protocol, parse_headers(args.header))
    db = default_db(args.db)
    conn = open_readonly(db)
    try:
        # One read transaction: the export is one consistent snapshot even while a hub writes.
        with snapshot(conn):
            runs = select_runs(conn, args.run_ids, args.last, args.app)
            ex = Exporter(args.keep_secrets, sum(event_count(conn, r["id"]) for r in runs))
            if args.keep_secrets:
                print(
                    "graphmind record: --keep-secrets: values under secret-looking keys (api_key, authorization, "
                    "token, password, …) are in this export; do not share it as is",
                    file=sys.stderr,
                    flush=True,
                )
            if target is not None:
                for run in runs:
                    target.post(otlp.request([_otlp_run(conn, run, ex)]))
                if args.out:
                    with _output(args.out) as out:
                        out.write(
                            encode(
                                otlp.request(
                                    [_otlp_run(conn, r, Exporter(args.keep_secrets, 0)) for r in runs]
                                )
                            )
                            + "\n"
                        )
            else:
                with _output(args.out) as out:
                    write_runs(conn, runs, args.format, out, ex)
    finally:
        conn.close()
    where = f" to {target.url}" if target is not None else (f" to {args.out}" if args.out else "")
    note = (
        ""
        if args.keep_secrets
        else (f"; removed {ex.removed} value(s) under secret-looking keys (--keep-secrets keeps them)")
    )
    print(
        f"graphmind record: {len(runs)} run(s), {ex.done} event(s){where}{note}", file=sys.stderr, flush=True
    )
    for run in runs:
        if run.get("dropped", {}).get("count"):
            print(f"graphmind record: {dropped_line(run)}", file=sys.stderr, flush=True)
    return 0


def dropped_line(run: dict[str, Any]) -> str:
    """The run's gaps in one line: "run r1: 1,234 events were not recorded (hub_stalled: 1,234)"."""
    dropped = run["dropped"]
    why = ", ".join(f"{reason}: {n:,}" for reason, n in sorted(dropped["reasons"].items()))
    count = dropped["count"]
    return (
        f"run {run['id']}: {count:,} {'event was' if count == 1 else 'events were'} not recorded ({why}; "
        "docs/reliability.md says why); the export holds what the hub stored"
    )


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[IO[str]]:
    if not path or path == "-":
        try:
            yield sys.stdout
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
            raise _ClosedPipe from None
        except OSError as exc:  # /dev/full, a full disk behind a redirect
            _silence_stdout()
            raise ExportError(
                f"cannot write the export to stdout ({exc.strerror or exc}); free some space or pass --out"
            ) from None
        return
    tmp = Path(path + ".partial")
    try:
        # 0600: an export holds the prompts too (base/files.py); the umask could leave it world-readable.
        with os.fdopen(open_private(tmp), "w", encoding="utf-8", newline="\n") as fh:
            yield fh
        tmp.replace(path)  # a failed export never leaves half a file under the name asked for
    except OSError as exc:
        raise ExportError(f"cannot write {path} ({exc.strerror or exc}); check --out") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_runs(conn: Any, runs: list[dict[str, Any]], fmt: str, out: IO[str], ex: Exporter) -> None:
    if fmt == "otlp":
        out.write(encode(otlp.request([_otlp_run(conn, run, ex) for run in runs])) + "\n")
        return
    if fmt == "json":
        doc = JsonDocument(out)
        for run in runs:
            doc.run(ex.clean(with_effects(conn, run)))
            for stored in iter_events(conn, run["id"]):
                doc.event(stored.client_id, ex.clean(stored.event))
                ex.tick()
        doc.close()
        return
    out.write(encode(HEADER) + "\n")
    for run in runs:
        out.write(run_line(ex.clean(with_effects(conn, run))) + "\n")
        for stored in iter_events(conn, run["id"]):
            out.write(event_line(run["id"], stored.client_id, ex.clean(stored.event)) + "\n")
            ex.tick()


def with_effects(conn: Any, run: dict[str, Any]) -> dict[str, Any]:
    """The run with its effects ledger (store/effects.py): `graphmind import` derives the same one
    from the events that follow, so the file says what ran without a hub to ask."""
    return {**run, "effects": ledger_entries(conn, run["id"])}


def _otlp_run(conn: Any, run: dict[str, Any], ex: Exporter) -> dict[str, Any]:
    def events() -> Iterator[dict[str, Any]]:
        for stored in iter_events(conn, run["id"]):
            ex.tick()
            yield ex.clean(stored.event)

    return otlp.resource_spans(ex.clean(run), events())
