"""The co-debugger's tools: explain a run, a node's detail, search runs, compare two (read-only,
explain.py), and verify a fix by forking or replaying the app (verify.py, with --allow-exec)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from ..export.jsonl import encode
from . import explain, search, verify
from .context import context_reader
from .hubapi import HubApi, HubUnreachable
from .reads import Links, clean
from .registry import READ_ONLY, tool

T = TypeVar("T")
Conn = Callable[[], AbstractContextManager[sqlite3.Connection]]
Answer = Callable[[Callable[[], T]], T]
RUNS_THE_APP = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)


def add_assistant_tools(
    server: MCPServer, conn: Conn, answer: Answer[str], links: Links, hub: HubApi
) -> None:
    context = context_reader()

    @tool(server, READ_ONLY)
    def explain_run(run_id: str) -> str:
        """Why a run failed or is waiting, in one answer: the failing or held node (its error or hold
        reason, gate_id when held, link), the loop streak, the replay divergence if any, the last model
        input's context breakdown (total tokens, tokenizer, the largest parts, warnings) and the effects
        ledger's summary. Start here, then node_detail for one node."""
        try:
            gates: list[dict[str, Any]] | None = hub.gates()
        except HubUnreachable:
            gates = None
        with conn() as c:
            return answer(lambda: explain.explain_run(c, links, run_id, gates, context))

    @tool(server, READ_ONLY)
    def node_detail(
        run_id: str, node_id: str, instance: str | None = None, preview: int = explain.PREVIEW
    ) -> str:
        """One execution of a node (the latest, or `instance`): its input and output (each string cut at
        `preview` characters, 200..20000), status, error, attempts (retries), edits, and the answers
        proposed at its gates with who accepted or rejected them."""
        with conn() as c:
            return answer(lambda: explain.node_detail(c, links, run_id, node_id, instance, preview))

    @tool(server, READ_ONLY)
    def search_runs(query: str = "", limit: int = 20) -> str:
        """Find runs: words (full text, every word somewhere in the run) and filters app=NAME
        status=finished|error|running|aborted|abandoned tool=NAME model=NAME kind=KIND agent=NAME
        name=TEXT since=7d (or 12h, 30m), and the words error / held first. Newest first; limit 1..100."""
        with conn() as c:
            return answer(lambda: search.search_runs(c, links, query, limit))

    @tool(server, READ_ONLY)
    def diff_runs(a: str, b: str) -> str:
        """Compare two runs (graphmind diff): the first differing node and what differs (input, output,
        error, status), every differing step (`nodeId#n`), step counts, token/cost/time deltas, and
        whether the effects ledgers match."""
        with conn() as c:
            return answer(lambda: search.diff_runs(c, links, a, b))


def add_verify_tools(
    server: MCPServer,
    conn: Conn,
    answer: Answer[dict[str, Any]],
    links: Links,
    db: Path,
    port: int,
    allow: bool,
    hub: HubApi,
) -> None:
    def run(name: str, fn: Callable[[], dict[str, Any]]) -> str:
        if not allow:
            raise ToolError(verify.not_enabled(name))
        # The child's output tail is the app's text: never the hub's token, whatever it printed.
        return hub.scrub(encode(clean(answer(fn))))

    @tool(server, RUNS_THE_APP)
    def fork_and_replay(
        run_id: str,
        at: str,
        output: Any = None,
        input: Any = None,
        safe: str = "simulate",
        wait: float = 120.0,
    ) -> str:
        """RUNS THE APP (needs graphmind mcp --allow-exec): replay the run's recorded command line in its
        recorded directory up to `at` (`<nodeId>#<n>` such as tool:search#2, an instance id, or a seq),
        give that node `output` (its new result) or `input` (it runs live with it), then run live. Writes
        after the fork are simulated (`safe`: simulate by default, hold, off). Waits up to `wait`
        seconds; returns the new run ids; then diff_runs(run_id, new id)."""
        return run(
            "fork_and_replay",
            lambda: verify.fork_and_replay(conn, links, db, port, run_id, at, output, input, safe, wait),
        )

    @tool(server, RUNS_THE_APP)
    def replay_each(query: str, safe: str = "simulate", wait: float = 300.0) -> str:
        """RUNS THE APP (needs graphmind mcp --allow-exec): replay every stored run matching `query`
        (key=value words: app=refund status=ok since=7d name=NAME limit=N) with the app's current code
        (graphmind replay --each), each run's own recorded command line in its recorded directory; returns
        the report: per run same answer / different answer / diverged at / failed, and the new run ids."""
        return run("replay_each", lambda: verify.replay_each(db, port, query, safe, wait))
