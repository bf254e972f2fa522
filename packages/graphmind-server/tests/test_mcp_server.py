"""`graphmind mcp` through the mcp SDK's own client, over stdio, against the command as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import graphmind
from graphmind_server.testing import HubProcess, in_thread, wait_for

READ_TOOLS = {
    "list_runs",
    "get_run",
    "get_events",
    "list_held_gates",
    "search_events",
    "get_effects",
    "get_context",
    "explain_run",
    "node_detail",
    "search_runs",
    "diff_runs",
}
# Offered without --allow-control: a proposal changes nothing until the person accepts it; the
# exec tools answer one line saying how to enable them.
ASSISTANT_TOOLS = {"propose_answer", "fork_and_replay", "replay_each"}
CONTROL_TOOLS = {"answer_gate", "set_breakpoints"}


@asynccontextmanager
async def mcp_session(db: Path, port: int, *extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphmind_server", "mcp", "--db", str(db), "--port", str(port), *extra],
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **args: Any) -> tuple[str, Any]:
    result = await session.call_tool(tool, args)
    text = result.content[0].text
    if result.is_error:
        raise AssertionError(text)
    return text, json.loads(text)


def _big_run(make_hub, tmp_path: Path, events: int = 10_000) -> Path:
    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    app = hub.app(app="big", client_id="big-1")
    app.run_started("big-run", "crawl")
    for i in range((events - 4) // 2):
        app.event(
            "node.started",
            "big-run",
            nodeId="tool:fetch",
            instanceId=f"c{i}",
            kind="tool",
            name="fetch",
            parentInstanceId="big-run",
            input={"url": f"https://example.test/{i}", "api_key": "sk-secret"},
        )
        app.event(
            "node.finished",
            "big-run",
            nodeId="tool:fetch",
            instanceId=f"c{i}",
            output={"n": i},
            durationMs=1.0,
            heldMs=0.0,
        )
    app.event(
        "node.started",
        "big-run",
        nodeId="tool:huge",
        instanceId="h",
        kind="tool",
        name="huge",
        parentInstanceId="big-run",
        input={},
    )
    app.event(
        "node.finished",
        "big-run",
        nodeId="tool:huge",
        instanceId="h",
        output="x" * 120_000,
        durationMs=1.0,
        heldMs=0.0,
    )
    app.run_finished("big-run")
    wait_for(
        lambda: hub.api("GET", "/api/runs/big-run")[1].get("eventCount") == events, 60, "10,000 events stored"
    )
    return db


async def test_the_sdk_client_reads_a_10000_event_run_in_pages_within_the_budget(make_hub, tmp_path):
    db = _big_run(make_hub, tmp_path)
    async with mcp_session(db, 4848) as session:
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        assert names == READ_TOOLS | ASSISTANT_TOOLS  # no control tools without --allow-control
        assert all(t.annotations.read_only_hint for t in tools.tools if t.name in READ_TOOLS)
        assert not any(t.annotations.destructive_hint for t in tools.tools)

        _, runs = await call(session, "list_runs")
        assert runs["runs"][0]["id"] == "big-run" and runs["runs"][0]["eventCount"] == 10_000
        assert runs["runs"][0]["link"] == "http://127.0.0.1:4848/#/run/big-run"

        _, run = await call(session, "get_run", run_id="big-run")
        fetch = next(n for n in run["nodes"] if n["nodeId"] == "tool:fetch")
        assert (
            fetch["executions"] == 4998
            and fetch["link"] == "http://127.0.0.1:4848/#/run/big-run/node/tool%3Afetch"
        )
        assert {"from": "agent:crawl", "to": "tool:fetch", "count": 4998} in run["edges"]

        budget, after, seqs, pages, truncated = 30_000, 0, [], 0, 0
        while True:
            text, page = await call(
                session, "get_events", run_id="big-run", after=after, limit=5000, budget=budget
            )
            assert len(text) <= budget
            pages += 1
            seqs += [e["seq"] for e in page["events"]]
            truncated += page["truncatedEvents"]
            assert page["link"] == "http://127.0.0.1:4848/#/run/big-run"
            if page["next"] is None:
                break
            after = page["next"]
        assert seqs == list(range(1, 10_001)) and pages > 10 and truncated == 1
        assert "sk-secret" not in text
        _, first = await call(session, "get_events", run_id="big-run", limit=1)
        assert first["events"][0]["type"] == "run.started" and first["next"] == 1

        _, found = await call(session, "search_events", text="example.test/4321")
        assert [(m["runId"], m["type"]) for m in found["matches"]] == [("big-run", "node.started")]
        assert found["matches"][0]["link"].endswith("/node/tool%3Afetch")
        _, none = await call(session, "search_events", text="sk-secret")  # only inside removed values
        assert none["matches"] == []

        bad = await session.call_tool("get_events", {"run_id": "big-run", "budget": 10})
        assert bad.is_error and "budget must be from 2000" in bad.content[0].text
        _, gates = await call(session, "list_held_gates")  # no hub on 4848: from the database
        assert gates["gates"] == [] and gates["source"].startswith("database")


@pytest.fixture
def hub_process(tmp_path: Path) -> Any:
    with HubProcess(tmp_path / "live.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


async def test_with_allow_control_the_assistant_answers_a_held_gate_and_the_agent_resumes(
    hub_process, tmp_path
):
    hub = hub_process
    client = graphmind.Client(app="mcp-e2e", url=hub.ingest_url)
    assert client.ready(5)
    try:
        async with mcp_session(tmp_path / "live.db", hub.port, "--allow-control") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == READ_TOOLS | ASSISTANT_TOOLS | CONTROL_TOOLS
            assert tools["answer_gate"].annotations.destructive_hint
            assert tools["answer_gate"].description.startswith("CHANGES WHAT THE AGENT DOES")

            _, state = await call(
                session, "set_breakpoints", breakpoints=[{"nodeId": "tool:lookup", "gate": "before"}]
            )
            assert state["breakpoints"] == [{"nodeId": "tool:lookup", "gate": "before"}]

            calls: list[str] = []

            def lookup(city: str) -> str:
                calls.append(city)
                return f"sunny in {city}"

            gated: Callable[..., str] = client.wrap(lookup, name="lookup")

            def agent() -> str:
                with client.run("trip"):
                    return gated(city="Lisbon")

            thread, out = in_thread(agent)
            hub.held_gates()
            _, gates = await call(session, "list_held_gates")
            assert gates["source"] == "hub" and len(gates["gates"]) == 1
            gate = gates["gates"][0]
            assert (gate["nodeId"], gate["gate"]) == ("tool:lookup", "before")
            assert gate["link"].startswith(f"http://127.0.0.1:{hub.port}/#/run/")

            assert gate["editable"] is True and gate["reloadable"] is False  # a closure does not reload
            refused = await session.call_tool(
                "answer_gate", {"gate_id": gate["gateId"], "action": "continue", "reload": True}
            )
            assert (
                refused.is_error and "the hub answered 422: reload does not apply" in refused.content[0].text
            )
            _, answered = await call(
                session, "answer_gate", gate_id=gate["gateId"], action="continue", input={"city": "Porto"}
            )
            assert answered["ok"] is True
            thread.join(10)
            assert out == {"value": "sunny in Porto"} and calls == ["Porto"]  # the edited input
            # The hub names the door the answer came through; the app echoes it (effects/answer.py).
            events = hub.api("GET", f"/api/runs/{gate['runId']}/events")[1]["events"]
            [resumed] = [e for e in events if e["type"] == "exec.resumed"]
            assert resumed["answeredBy"] == "mcp"
            _, ledger = await call(session, "get_effects", run_id=gate["runId"])
            assert ledger["runId"] == gate["runId"] and ledger["link"].endswith(gate["runId"])
            assert ledger["effects"] == []  # lookup is a read by the name rule: never in the ledger

            _, cleared = await call(session, "set_breakpoints", breakpoints=[])
            assert cleared["breakpoints"] == []
            wrong = await session.call_tool("answer_gate", {"gate_id": "c1-nope", "action": "continue"})
            assert wrong.is_error and "the hub answered 404" in wrong.content[0].text
    finally:
        client.dispose()


def test_without_the_mcp_extra_the_command_says_what_to_install(tmp_path):
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(f\"No module named '{name}'\", name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from graphmind_server.cli import main\n"
        "sys.exit(main(['mcp', '--db', sys.argv[1]]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert proc.stderr == "graphmind: graphmind mcp needs the mcp SDK: pip install 'graphmind-server[mcp]'\n"
