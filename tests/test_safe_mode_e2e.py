"""Safe mode against the real hub (docs/effects.md): the refund agent (OpenAI SDK, gm.tool tools, the
fake provider) under GRAPHMIND_SAFE=simulate and =hold; `graphmind mcp-proxy` in front of an MCP
server whose annotations say which tool is destructive; a recorded refund run forked with
`graphmind replay --fork ... --output ...` whose live tail calls the write. Tools count their real
executions in a file (they run in other processes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from refund_app import ANSWER, FIXTURES, RefundAgent, refund_fake  # noqa: F401  (the fixture `fake`)

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for

GRAPHMIND = shutil.which("graphmind") or str(Path(sys.executable).with_name("graphmind"))


class Agent(RefundAgent):
    """The refund agent, and the events the hub stored of its runs."""

    def events(self, **match: Any) -> list[dict[str, Any]]:
        runs = self.hub.api("GET", "/api/runs")[1]["runs"]
        found = []
        for run in runs:
            for event in self.hub.api("GET", f"/api/runs/{run['id']}/events")[1]["events"]:
                if all(event.get(k) == v for k, v in match.items()):
                    found.append(event)
        return found


@pytest.fixture
def agent(hub: HubProcess, fake: FakeOpenAI, tmp_path: Path) -> Agent:
    return Agent(hub, fake, tmp_path)


def test_simulate_never_runs_the_refund_and_the_run_finishes(agent: Agent) -> None:
    code, out, err = agent.run(GRAPHMIND_SAFE="simulate")
    assert code == 0, err
    assert out.strip() == ANSWER
    assert agent.ran() == ["lookup_order"], "issue_refund's body ran under GRAPHMIND_SAFE=simulate"
    ended = wait_for(
        lambda: agent.events(type="node.finished", nodeId="tool:issue_refund"), 10, "the refund's end"
    )
    assert ended[0]["simulated"] is True
    assert ended[0]["effect"] == {
        "class": "write",
        "source": "name rule",
        "outcome": "simulated",
        "by": "safe mode",
    }
    started = agent.events(type="node.started", nodeId="tool:issue_refund")[0]
    assert started["input"] == {"order_id": "A1", "amount": 40}


def test_hold_holds_the_refund_until_run_for_real(agent: Agent) -> None:
    proc = agent.start(GRAPHMIND_SAFE="hold")
    try:
        gate = agent.hub.held_gates(1, timeout=90)[0]
        assert gate["reason"] == "effect" and gate["nodeId"] == "tool:issue_refund"
        assert agent.ran() == ["lookup_order"], "the refund ran before its hold was answered"
        paused = agent.events(type="exec.paused", nodeId="tool:issue_refund")[0]
        assert paused["effect"] == {"class": "write", "source": "name rule", "rule": "*refund*"}
        status, reply = agent.hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
        assert status == 200, reply
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out.strip() == ANSWER
    assert agent.ran() == ["lookup_order", "issue_refund"], "run for real: the body ran once"
    ended = wait_for(
        lambda: agent.events(type="node.finished", nodeId="tool:issue_refund"), 10, "the refund's end"
    )
    assert ended[0]["effect"]["outcome"] == "held then ran"


def test_a_forked_run_holds_the_refund_of_its_live_tail_unless_told_to_simulate(
    agent: Agent, tmp_path: Path
) -> None:
    code, _, err = agent.run()  # the recording: safe mode off, the refund runs
    assert code == 0, err
    run_id = wait_for(lambda: agent.events(type="run.finished"), 10, "the recorded run")[0]["runId"]
    cassette = tmp_path / "refund.jsonl"
    recorded = subprocess.run(
        [GRAPHMIND, "record", run_id, "--db", str(agent.hub.db), "--out", str(cassette)],
        env=agent.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert recorded.returncode == 0, recorded.stderr
    ran = agent.ran()
    # forked at the first model step: it now asks for the refund at once, with a new amount
    fork = json.dumps(
        {
            "content": None,
            "tool_calls": [
                {"id": "call_new", "name": "issue_refund", "arguments": {"order_id": "A1", "amount": 25}}
            ],
        }
    )
    proc = agent.start(str(cassette), "--fork", "llm:step#1", "--output", fork)
    try:
        gates = wait_for(
            lambda: [g for g in agent.hub.api("GET", "/api/gates")[1]["gates"] if g["reason"] == "effect"],
            90,
            "the fork's refund held",
        )
        assert gates[0]["nodeId"] == "tool:issue_refund" and gates[0]["input"] == {
            "order_id": "A1",
            "amount": 25,
        }
        assert agent.ran() == ran, "the fork's live refund ran before anybody answered"
        agent.hub.api("POST", f"/api/gates/{gates[0]['gateId']}", {"action": "abort"})
        proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert agent.ran() == ran
    code, out, err = agent.run(str(cassette), "--fork", "llm:step#1", "--output", fork, "--safe", "simulate")
    assert code == 0, err
    assert out.strip() == ANSWER
    assert agent.ran() == ran, "--safe simulate: the fork's refund did not run"
    simulated = wait_for(
        lambda: [
            e for e in agent.events(type="node.finished", nodeId="tool:issue_refund") if e.get("simulated")
        ],
        10,
        "the simulated refund",
    )
    assert simulated[0]["effect"]["outcome"] == "simulated"
    status, ledger = agent.hub.api("GET", f"/api/runs/{simulated[0]['runId']}/effects")
    assert status == 200, ledger
    assert [(e["name"], e["outcome"], e["input"]) for e in ledger["effects"]] == [
        ("issue_refund", "simulated", {"order_id": "A1", "amount": 25})
    ]
    assert ledger["summary"]["writesRan"] == 0


async def test_mcp_proxy_holds_the_destructive_tool_and_runs_the_read_only_one(
    hub: HubProcess, tmp_path: Path
) -> None:
    log = tmp_path / "tools.log"
    params = StdioServerParameters(
        command=GRAPHMIND,
        args=["mcp-proxy", "--", sys.executable, str(FIXTURES / "mcp" / "effects_server.py")],
        env={
            "GRAPHMIND_URL": hub.ingest_url,
            "GRAPHMIND_SAFE": "hold",
            "TOOL_LOG": str(log),
            "PATH": os.environ["PATH"],
        },
    )

    def ran() -> list[str]:
        return log.read_text().split() if log.exists() else []

    with (tmp_path / "proxy.stderr").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            peeked = await session.call_tool("peek", {"table": "orders"})
            assert not peeked.is_error and ran() == ["peek"], "the read-only tool runs"
            async with anyio.create_task_group() as tg:
                results: list[Any] = []

                async def wipe() -> None:
                    results.append(await session.call_tool("wipe", {"table": "orders"}))

                tg.start_soon(wipe)
                gates = await anyio.to_thread.run_sync(lambda: hub.held_gates(1, timeout=90))
                assert gates[0]["reason"] == "effect" and gates[0]["nodeId"] == "tool:wipe"
                assert ran() == ["peek"], "the destructive call reached the server before it was answered"
                status, _ = await anyio.to_thread.run_sync(
                    lambda: hub.api("POST", f"/api/gates/{gates[0]['gateId']}", {"action": "continue"})
                )
                assert status == 200
            assert not results[0].is_error
    assert ran() == ["peek", "wipe"]
