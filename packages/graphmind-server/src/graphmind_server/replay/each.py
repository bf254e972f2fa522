"""`graphmind replay --each DIR_OR_QUERY [--jobs N] [--json] [--only llm|tool] -- COMMAND`: replay many
recorded runs under one change (docs/replay.md, "Many runs under one change").

DIR_OR_QUERY is a directory of cassettes (`*.jsonl`, any depth) or a filter over the hub's stored
runs (`app=refund status=ok since=7d name=refund limit=20`, the run list's own filter,
store/reads.py). Each recording is replayed one after another with COMMAND (or, with no COMMAND,
the run's own recorded command in its recorded directory), divergences failing the replay
(`--on-divergence fail` unless given); `--jobs N` runs N replays at a time (each replay's time is
mostly its own process starting: the agent importing its SDK). Every replay is one run in the hub with `replayOf` (its
recording) and `replayBatch` (this batch), so the viewer lists the batch as pairs
(`GET /api/replays/batches/{id}`). The table says per run: same answer, different answer,
diverged at <node>, or failed (replay/outcome.py), with totals and the model cost the replay saved;
the exit code is 1 when any replay differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmind.replay import BATCH_ENV, ENV, REPORT_ENV, VARIABLES, Cassette, CassetteError

from ..base.files import open_private
from ..export.record import Exporter, write_runs
from ..export.source import ExportError, default_db, iter_events, open_readonly, select_runs
from ..store import reads
from ..store.readonly import snapshot
from ..store.status import RUN_STATUSES
from .outcome import FAILED, RESULTS, Outcome, judge

STORED_WAIT_S = 15.0  # how long a replay's run may take to reach the hub's database
_FILTERS = ("app", "status", "since", "until", "name", "limit", "q", "tool", "model", "kind", "agent")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class EachRefused(Exception):
    """The batch cannot start; str() is the one line to print."""


@dataclass
class Recording:
    path: Path
    run: dict[str, Any]  # the run line of the cassette (its meta: argv, cwd)
    events: list[dict[str, Any]]

    @property
    def run_id(self) -> str:
        return str(self.run.get("id") or "")


def run_each(args: argparse.Namespace, command: list[str]) -> int:
    db = default_db(args.db)
    batch = uuid.uuid4().hex[:12]
    folder = Path(tempfile.mkdtemp(prefix="graphmind-each-"))
    try:
        try:
            recordings = _recordings(args.each, db, folder)
        except (EachRefused, ExportError, CassetteError) as exc:
            print(f"graphmind: {str(exc).removeprefix('graphmind: ')}", file=sys.stderr, flush=True)
            return 2

        def replay(number: int, recording: Recording) -> tuple[Recording, str | None, Outcome]:
            if not args.json:
                print(f"replaying {number}/{len(recordings)}: {recording.run_id[:12]} …", file=sys.stderr)
            return _replay_one(args, command, recording, batch, db, folder / f"{number}")

        # Threads only wait (on the replay's process and the hub's database); rows keep the
        # recordings' order whatever order the replays end in.
        with ThreadPoolExecutor(max_workers=max(1, getattr(args, "jobs", 1) or 1)) as pool:
            rows = list(pool.map(replay, range(1, len(recordings) + 1), recordings))
    finally:
        for leftover in sorted(folder.rglob("*"), reverse=True):
            leftover.unlink() if leftover.is_file() else leftover.rmdir()
        folder.rmdir()
    report = _report(batch, rows)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print_table(report)
    return 1 if any(o.differs for _, _, o in rows) else 0


# ---- what to replay ----------------------------------------------------------------------------
def _recordings(each: str, db: Path, folder: Path) -> list[Recording]:
    place = Path(each).expanduser()
    if place.is_dir():
        files = sorted(place.rglob("*.jsonl"))
        if not files:
            raise EachRefused(f"{each} holds no cassette (*.jsonl); write some with `graphmind record`")
        return [_read(path) for path in files]
    if "=" not in each and ("/" in each or os.sep in each or each.endswith(".jsonl")):
        raise EachRefused(f"no directory {each}; give a directory of cassettes or a filter like app=refund")
    run_ids = _query(each, db)
    conn = open_readonly(db)
    try:
        out = []
        for run_id in run_ids:
            path = folder / f"{run_id[:40]}.jsonl"
            with snapshot(conn), os.fdopen(open_private(path), "w", encoding="utf-8", newline="\n") as fh:
                write_runs(conn, select_runs(conn, [run_id], None, None), "jsonl", fh, Exporter(False, 0))
            out.append(_read(path))
        return out
    finally:
        conn.close()


def _read(path: Path) -> Recording:
    cassette = Cassette.load(path)  # one line for a file that is no cassette
    if not len(cassette):
        raise EachRefused(f"{path} holds no node to replay; pass runs that made model or tool calls")
    run: dict[str, Any] = {}
    events: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line) if line.strip() else {}
            if item.get("type") == "run" and not run and isinstance(item.get("run"), dict):
                run = item["run"]
            elif item.get("type") == "event" and isinstance(item.get("event"), dict):
                events.append(item["event"])
    if not run:
        run = {"id": cassette.run_id or path.stem, "meta": {}}
    return Recording(path, run, events)


def parse_query(text: str, now_ms: float | None = None) -> tuple[dict[str, Any], int]:
    """`app=refund status=ok since=7d name=x limit=20` as (list_runs arguments, limit)."""
    now_ms = time.time() * 1000 if now_ms is None else now_ms
    given: dict[str, str] = {}
    for word in text.split():
        key, eq, value = word.partition("=")
        if not eq or key not in _FILTERS or not value:
            raise EachRefused(
                f"{word!r} is no filter; --each takes a directory of cassettes or key=value words "
                f"({', '.join(_FILTERS)}), e.g. app=refund status=ok since=7d"
            )
        given[key] = value
    status = given.get("status")
    if status == "ok":
        status = "finished"
    if status is not None and status not in RUN_STATUSES:
        raise EachRefused(f"status= takes ok or one of {', '.join(RUN_STATUSES)} (got {status!r})")
    limit = given.get("limit", "50")
    if not limit.isdigit() or not 1 <= int(limit) <= 1000:
        raise EachRefused(f"limit= takes a whole number from 1 to 1000 (got {limit!r})")
    times = {k: _time(k, given[k], now_ms) for k in ("since", "until") if k in given}
    filters = reads.RunFilter(
        q=given.get("q"),
        kind=given.get("kind"),
        tool=given.get("tool"),
        model=given.get("model"),
        agent=given.get("agent"),
        since=times.get("since"),
        until=times.get("until"),
    )
    return {"status": status, "app": given.get("app"), "filters": filters, "name": given.get("name")}, int(
        limit
    )


def _time(key: str, value: str, now_ms: float) -> float:
    """`7d`, `12h`, `30m` ago, or a time in ms since the epoch."""
    found = _AGE.match(value)
    if found:
        return now_ms - float(found.group(1)) * _SECONDS[found.group(2)] * 1000
    try:
        return float(value)
    except ValueError:
        raise EachRefused(
            f"{key}= takes an age (7d, 12h, 30m) or ms since the epoch (got {value!r})"
        ) from None


def _query(text: str, db: Path) -> list[str]:
    query, limit = parse_query(text)
    conn = open_readonly(db)
    try:
        # The name is no column filter: read more and keep those of that name, newest first.
        runs = reads.list_runs(
            conn, 1000 if query["name"] else limit, query["status"], query["app"], query["filters"]
        )
    finally:
        conn.close()
    runs = [r for r in runs if query["name"] is None or r.get("name") == query["name"]]
    runs = [r for r in runs if r.get("status") != "running" and not r.get("meta", {}).get("replayBatch")][
        :limit
    ]
    if not runs:
        raise EachRefused(f"no stored run matches {text!r} (in {db}); widen the filter or pass --db")
    return [r["id"] for r in reversed(runs)]  # oldest first, as they were recorded


# ---- one replay --------------------------------------------------------------------------------
def _replay_one(
    args: argparse.Namespace, command: list[str], recording: Recording, batch: str, db: Path, folder: Path
) -> tuple[Recording, str | None, Outcome]:
    folder.mkdir()
    meta: dict[str, Any] = recording.run["meta"] if isinstance(recording.run.get("meta"), dict) else {}
    cwd: str | None = None
    if not command:
        argv = meta.get("argv")
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            why = "the run recorded no command (an imported or OTLP run): give one after --"
            return recording, None, Outcome(FAILED, why=why)
        command = [str(meta.get("executable") or sys.executable), *argv]
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    report = folder / "divergence.txt"
    env = dict(os.environ)
    env.update({ENV: str(recording.path.resolve()), REPORT_ENV: str(report), BATCH_ENV: batch})
    env[VARIABLES["on_divergence"]] = args.on_divergence or "fail"
    for value, key in ((args.only, "only"), (args.ignore_keys, "ignore_keys"), (args.safe or "hold", "safe")):
        if value is not None:
            env[VARIABLES[key]] = value
    try:
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        return recording, None, Outcome(FAILED, why=f"cannot run {command[0]!r} ({exc.strerror or exc})")
    replay_id, events = _stored_replay(db, batch, recording.run_id)
    if replay_id is None:
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        why = f"the hub's database ({db}) has no replay of it: is `graphmind serve` running there? {tail}".strip()
        return recording, None, Outcome(FAILED, why=why)
    return recording, replay_id, judge(recording.events, events, done.returncode)


def _stored_replay(db: Path, batch: str, run_id: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The replay's run and events once the hub stored its end (the writer commits a moment later)."""
    deadline = time.monotonic() + STORED_WAIT_S
    while True:
        found = _read_replay(db, batch, run_id)
        if found is not None and any(e.get("type") == "run.finished" for e in found[1]):
            return found
        if time.monotonic() > deadline:
            return found if found is not None else (None, [])
        time.sleep(0.1)  # polling another process's database: no event to await across processes


def _read_replay(db: Path, batch: str, run_id: str) -> tuple[str, list[dict[str, Any]]] | None:
    if not db.is_file():
        return None
    conn = open_readonly(db)
    try:
        with snapshot(conn):
            runs = [r for r in reads.batch_runs(conn, batch) if r["meta"].get("replayOf") == run_id]
            if not runs:
                return None
            replay = runs[-1]["id"]
            return replay, [stored.event for stored in iter_events(conn, replay)]
    finally:
        conn.close()


# ---- the table ---------------------------------------------------------------------------------
def _report(batch: str, rows: list[tuple[Recording, str | None, Outcome]]) -> dict[str, Any]:
    pairs = [
        {
            "run": rec.run_id,
            "name": rec.run.get("name"),
            "cassette": str(rec.path),
            "replay": replay,
            **o.to_api(),
        }
        for rec, replay, o in rows
    ]
    totals = {result: sum(1 for _, _, o in rows if o.result == result) for result in RESULTS}
    saved = round(sum(o.saved_usd for _, _, o in rows), 8)
    return {
        "batch": batch,
        "pairs": pairs,
        "totals": totals,
        "savedUsd": saved,
        "differs": any(o.differs for _, _, o in rows),
    }


def print_table(report: dict[str, Any]) -> None:
    pairs = report["pairs"]
    width = max([len(p["label"]) for p in pairs] + [6])
    print(f"{'run':<14} {'result':<{width}}  replay")
    for p in pairs:
        why = f"  ({p['why']})" if p["result"] == FAILED and p["why"] else ""
        print(f"{p['run'][:12]:<14} {p['label']:<{width}}  {(p['replay'] or '-')[:12]}{why}")
    totals = ", ".join(f"{n} {result}" for result, n in report["totals"].items())
    print(f"{len(pairs)} run(s): {totals}; model cost the replay saved: ${report['savedUsd']:.6f}")
    print(f"batch {report['batch']}: the viewer lists its pairs at {viewer_base()}#/batch/{report['batch']}")


def viewer_base() -> str:
    """The viewer of the hub the replays reported to (GRAPHMIND_URL, ws://host:port/ingest)."""
    url = os.environ.get("GRAPHMIND_URL", "").strip() or "ws://127.0.0.1:4747/ingest"
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0] or "127.0.0.1:4747"
    return f"{'https' if scheme in ('wss', 'https') else 'http'}://{host}/"
