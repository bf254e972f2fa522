"""The MCP server: tools over the hub's database (read-only) and, with --allow-control, its control API."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .._version import __version__
from ..export.jsonl import encode
from ..export.source import ExportError, open_readonly
from ..store.effects import run_ledger
from ..store.readonly import snapshot
from . import reads
from .assistant import add_assistant_tools, add_verify_tools
from .control import add_control_tools, add_propose_tool
from .hubapi import HubApi, HubUnreachable
from .reads import DEFAULT_BUDGET, Links, ToolInputError
from .registry import READ_ONLY, tool

T = TypeVar("T")

INSTRUCTIONS = (
    "GraphMind records what LLM agents did: runs, their nodes (llm, tool, retriever, chain, agent) and "
    "events. Start with list_runs, then get_run for a run's graph and get_events to read it page by page "
    "(follow `next`). Every answer has a `link` to the run or node in the GraphMind viewer: give it to the "
    'person you work with. Values shown as "__REDACTED__" were hidden on purpose and cannot be recovered.'
)


def build_server(
    db: Path,
    port: int,
    *,
    allow_control: bool | str = False,
    token_file: str | None = None,
    allow_exec: bool = False,
) -> MCPServer:
    """`allow_control`: False, True (answer_gate, set_breakpoints) or "auto" (those, and
    propose_answer applies at once). `allow_exec`: fork_and_replay and replay_each run the app."""
    links = Links(port)
    hub = HubApi(port, token_file=token_file)
    server: MCPServer = MCPServer("graphmind", instructions=INSTRUCTIONS, version=__version__)

    @contextlib.contextmanager
    def conn() -> Iterator[sqlite3.Connection]:
        # A connection per call: between calls the file stays free for `graphmind import`, and
        # every call sees the hub's latest commit.
        try:
            c = open_readonly(db)
        except ExportError as exc:
            raise ToolError(str(exc)) from None
        try:
            with snapshot(c):
                yield c
        finally:
            c.close()

    def answer(fn: Callable[[], T]) -> T:
        try:
            return fn()
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    @tool(server, READ_ONLY)
    def list_runs(
        status: str | None = None, app: str | None = None, name_contains: str | None = None, limit: int = 20
    ) -> str:
        """List recorded runs, newest first, with a viewer link each. Filters: status (running, finished,
        error, aborted, abandoned), app (exact), name_contains (case-insensitive); limit 1..200."""
        with conn() as c:
            return answer(
                lambda: reads.list_runs(
                    c, links, status=status, app=app, name_contains=name_contains, limit=limit
                )
            )

    @tool(server, READ_ONLY)
    def get_run(run_id: str) -> str:
        """A run's summary and graph: its nodes (kind, name, executions, status, viewer link) and edges
        (which node started which, and how often)."""
        with conn() as c:
            return answer(lambda: reads.get_run(c, links, run_id))

    @tool(server, READ_ONLY)
    def get_events(
        run_id: str,
        after: int = 0,
        limit: int = 200,
        budget: int = DEFAULT_BUDGET,
        types: list[str] | None = None,
    ) -> str:
        """A page of a run's events (seq > after, in seq order), at most `budget` characters (2000..400000)
        and `limit` events. Pass the answer's `next` as `after` for the next page; `next` is null at the end.
        `types` keeps only those event types (e.g. ["node.started", "node.error"]). An event too large for
        the budget comes with its long strings cut and `_truncated: true`."""
        with conn() as c:
            return answer(
                lambda: reads.get_events(
                    c, links, run_id, after=after, limit=limit, budget=budget, types=types
                )
            )

    @tool(server, READ_ONLY)
    def list_held_gates() -> str:
        """Calls held at a gate right now (waiting for an answer in the viewer), from the running hub;
        without a hub, the gates the database shows as paused in running runs."""
        try:
            gates = [{**g, "link": links.run(g["runId"])} for g in hub.gates()]
            source = "hub"
        except HubUnreachable as exc:
            with conn() as c:
                gates = reads.held_gates_from_db(c, links)
            source = f"database ({exc})"
        return encode({"gates": reads.clean(gates), "source": source})

    @tool(server, READ_ONLY)
    def search_events(
        text: str, run_id: str | None = None, limit: int = 20, budget: int = DEFAULT_BUDGET
    ) -> str:
        """Find events whose JSON contains `text` (case-insensitive), newest first, optionally in one run:
        each match has its run, seq, node, a snippet around the text and a viewer link."""
        with conn() as c:
            return answer(
                lambda: reads.search_events(c, links, text, run_id=run_id, limit=limit, budget=budget)
            )

    @tool(server, READ_ONLY)
    def get_effects(run_id: str) -> str:
        """A run's effects ledger: every write and unknown tool call in order, with its input, what
        became of it (ran, held then ran, simulated, injected, replayed, skipped) and by whose answer;
        `summary.writesRan` 0 means no write ran for real (docs/effects.md)."""
        with conn() as c:
            ledger = run_ledger(c, run_id)
        if ledger is None:
            raise ToolError(f"no run {run_id!r} (deleted, pruned, or never reported); list_runs lists them")
        return encode(reads.clean({**ledger, "link": links.run(run_id)}))

    @tool(server, READ_ONLY)
    def get_context(
        run_id: str, node_id: str, instance: str | None = None, budget: int = DEFAULT_BUDGET
    ) -> str:
        """What fills a model call's context window: its input split into parts (system, tools, each
        message, each tool result, each file) with tokens and share of the total, the tokenizer used
        (or "estimated"), the model's context limit, warnings (window over 80 %, a part over 30 %, the
        same long text sent twice, a value cut at 512 KB) and the diff against the same agent's
        previous model call. node_id is a model step (llm:step, llm:step@agent); instance defaults
        to its latest execution."""
        with conn() as c:
            return answer(lambda: reads.get_context(c, links, run_id, node_id, instance, budget))

    add_assistant_tools(server, conn, answer, links, hub)
    add_propose_tool(server, hub, auto=allow_control == "auto")
    add_verify_tools(server, conn, answer, links, db, port, allow_exec, hub)
    if allow_control:
        add_control_tools(server, hub)
    return server
