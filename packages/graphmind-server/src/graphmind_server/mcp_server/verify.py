"""`fork_and_replay` and `replay_each`: the assistant verifies a fix by running the app again.

Both run the app's recorded command line (`meta.argv`, with `meta.executable`) in its recorded
working directory (`meta.cwd`) under `graphmind replay`: code execution on this machine, which is
why they exist only when `graphmind mcp` was started with `--allow-exec` (docs/mcp.md). The child
gets this server's environment plus `GRAPHMIND_SAFE=simulate` (and `--safe simulate` for the
replay's live tail) unless the call says otherwise: a write the fork reaches does not run for real.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from graphmind import protocol as proto

from ..store import reads as store_reads
from .reads import Links, ToolInputError

NOT_ENABLED = (
    "{tool} runs the app's recorded command on this machine, so it is off: restart the MCP server "
    "with `graphmind mcp --allow-exec` to enable it (docs/mcp.md)"
)
MAX_WAIT = 600.0
SETTLE_S = 10.0
_TAIL = 1_500

Conn = Callable[[], AbstractContextManager[sqlite3.Connection]]


def not_enabled(tool: str) -> str:
    return NOT_ENABLED.format(tool=tool)


def recorded_command(conn: sqlite3.Connection, run_id: str) -> tuple[list[str], str | None]:
    """The run's command line and working directory, as its client recorded them."""
    run = store_reads.get_run(conn, run_id)
    if run is None:
        raise ToolInputError(f"no run {run_id!r} (deleted, pruned, or never reported); list_runs lists them")
    raw = run.get("meta")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    argv = meta.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ToolInputError(
            f"run {run_id!r} recorded no command line (meta.argv): it ran under GRAPHMIND_HIDE_INPUTS, "
            "or its GraphMind is older; replay it yourself with graphmind replay"
        )
    exe = meta.get("executable")
    command = [exe, *argv] if isinstance(exe, str) and exe and argv[0].endswith(".py") else list(argv)
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    return command, cwd


def child_env(port: int, safe: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GRAPHMIND_URL", f"ws://127.0.0.1:{port}/ingest")
    if safe != "off":
        env["GRAPHMIND_SAFE"] = safe
    else:
        env.pop("GRAPHMIND_SAFE", None)
    return env


def check_safe(safe: str) -> str:
    if safe not in proto.SAFE_MODES:
        raise ToolInputError(f"safe must be one of {', '.join(proto.SAFE_MODES)} (got {safe!r})")
    return safe


def check_wait(wait: float) -> float:
    if not 0 <= wait <= MAX_WAIT:
        raise ToolInputError(f"wait must be from 0 to {MAX_WAIT:.0f} seconds (got {wait})")
    return wait


def _tail(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-_TAIL:]


def _replays_of(conn: sqlite3.Connection, run_id: str, after_ms: float) -> list[dict[str, Any]]:
    runs = store_reads.list_runs(conn, 50, None, None, store_reads.RunFilter(since=after_ms - 5_000))
    # A fork of this run (`forkedAt`), not a batch replay of it (`replayBatch`, replay_each).
    return [
        r
        for r in runs
        if isinstance(r.get("meta"), dict)
        and r["meta"].get("replayOf") == run_id
        and r["meta"].get("forkedAt")
        and not r["meta"].get("replayBatch")
    ]


def fork_and_replay(
    conn: Conn,
    links: Links,
    db: Path,
    port: int,
    run_id: str,
    at: str,
    output: Any,
    input: Any,
    safe: str,
    wait: float,
) -> dict[str, Any]:
    check_safe(safe)
    check_wait(wait)
    if (output is None) == (input is None):
        raise ToolInputError(
            "give exactly one of output (the forked node's new output) or input (its edited input)"
        )
    with conn() as c:
        command, cwd = recorded_command(c, run_id)
    flag, value = ("--output", output) if output is not None else ("--input", input)
    argv = [
        sys.executable, "-m", "graphmind_server", "replay", run_id, "--db", str(db),
        "--fork", at, flag, json.dumps(value), "--safe", safe, "--", *command,
    ]  # fmt: skip
    started = time.time() * 1000
    with _log() as (log, path):
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=child_env(port, safe), stdout=log, stderr=log, stdin=subprocess.DEVNULL
            )
        except OSError as exc:
            raise ToolInputError(f"cannot run {command[0]!r} in {cwd}: {exc.strerror or exc}") from None
        code = _wait(proc, wait)
        found = _settled(conn, run_id, started, ended=code is not None)
        out: dict[str, Any] = {
            "runIds": [r["id"] for r in found],
            "runs": [
                {
                    "id": r["id"],
                    "status": r["status"],
                    "forkedAt": r["meta"].get("forkedAt"),
                    "link": links.run(r["id"]),
                }
                for r in found
            ],
            "command": command,
            "cwd": cwd,
            "safe": safe,
            "exitCode": code,
        }
        if code is None:
            out["note"] = f"still running after {wait:g} s (pid {proc.pid}); list_runs shows it"
        elif code != 0 or not found:
            out["output"] = _tail(path)
    return out


def replay_each(db: Path, port: int, query: str, safe: str, wait: float) -> dict[str, Any]:
    """`graphmind replay --each QUERY --json`: each matching run replayed with its own recorded
    command line in its recorded directory (replay/each.py); the report as it prints it."""
    check_safe(safe)
    check_wait(wait)
    if not query.strip():
        raise ToolInputError("query must name the runs, e.g. app=refund status=ok since=7d")
    argv = [
        sys.executable, "-m", "graphmind_server", "replay", "--each", query, "--json", "--db", str(db),
        "--safe", safe,
    ]  # fmt: skip
    with _log() as (log, path):
        proc = subprocess.Popen(
            argv,
            env=child_env(port, safe),
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            stdout, _ = proc.communicate(timeout=wait or None)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise ToolInputError(f"replay --each did not finish within {wait:g} s; it was stopped") from None
        try:
            report = json.loads(stdout)
        except ValueError:
            # A refused query (one line on stderr) or a crash: its last line says why.
            lines = _tail(path).strip().splitlines() or [f"replay --each exited {proc.returncode}"]
            raise ToolInputError(lines[-1].removeprefix("graphmind: ")) from None
    pairs = report.get("pairs") or []
    return {
        "exitCode": proc.returncode,
        "safe": safe,
        "batch": report.get("batch"),
        "differs": report.get("differs"),
        "totals": report.get("totals"),
        "runIds": [p.get("replay") for p in pairs if p.get("replay")],
        "pairs": [
            {k: p.get(k) for k in ("run", "replay", "name", "result", "label", "why", "at") if p.get(k)}
            for p in pairs[:50]
        ],
    }


def _settled(conn: Conn, run_id: str, started: float, *, ended: bool) -> list[dict[str, Any]]:
    """The fork's runs as stored. The hub stores what the app sent a moment after the app exits
    (it commits in batches): when the child has ended, wait (at most SETTLE_S) for its runs to be
    stored as ended."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        with conn() as c:
            found = _replays_of(c, run_id, started)
        if not ended or (found and all(r["status"] != "running" for r in found)):
            return found
        if time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _wait(proc: subprocess.Popen[bytes], wait: float) -> int | None:
    try:
        return proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return None


class _log:
    """The child's output, in a private temporary file read back for the answer's tail."""

    def __enter__(self) -> tuple[Any, Path]:
        fd, name = tempfile.mkstemp(prefix="graphmind-mcp-exec-", suffix=".log")
        self.path = Path(name)
        self.fh = os.fdopen(fd, "wb")
        return self.fh, self.path

    def __exit__(self, *exc: object) -> None:
        self.fh.close()
        self.path.unlink(missing_ok=True)
