"""The coding assistant as co-debugger (docs/mcp.md): the mcp SDK's own client over stdio stands in
for the assistant, against `graphmind mcp` and the real hub (subprocesses), with the refund agent
(tests/fixtures/refund_agent.py: the OpenAI SDK on the loopback fake provider, tools that count
their real executions in a file).

- held at an error gate: explain_run names the node, the error and the last model input's largest
  part; propose_answer(retry) is on the gate; Accept (the viewer's door) retries and the run
  finishes; the node and the effects ledger keep the proposal and who accepted it;
- propose_answer(inject) leaves the gate held until the person answers; under
  --allow-control=auto it is applied at once;
- --allow-exec: replay_each replays the recorded run through `graphmind replay --each`;
  fork_and_replay at the second tool with another output returns the fork's run id;
  the fork made no provider request before the fork, ran under safe mode simulate (the refund's
  body never ran), and diff_runs names the forked node; without --allow-exec the tool says how.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from refund_app import ANSWER, RefundAgent, refund_fake  # noqa: F401  (the fixture `fake`)

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for


class Agent(RefundAgent):
    """The refund agent, and the coding assistant's MCP session next to it."""

    @asynccontextmanager
    async def mcp(self, *flags: str) -> AsyncIterator[ClientSession]:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "graphmind_server",
                "mcp",
                "--db",
                str(self.hub.db),
                "--port",
                str(self.hub.port),
                *flags,
            ],
            env=self.env,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session

    def breakpoint(self, node_id: str, gate: str) -> None:
        status, _ = self.hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": node_id, "gate": gate}]})
        assert status == 200


async def call(session: ClientSession, tool: str, **args: Any) -> Any:
    result = await session.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, text
    return json.loads(text)


async def settled(session: ClientSession, run_id: str, node_id: str, status: str = "ok") -> Any:
    """node_detail once the hub has stored the node's end (it stores a moment after the app exits)."""
    for _ in range(100):
        detail = await call(session, "node_detail", run_id=run_id, node_id=node_id)
        if detail["status"] == status:
            return detail
        await anyio.sleep(0.1)
    raise AssertionError(f"{node_id} never became {status}: {detail}")


async def held(hub: HubProcess) -> dict[str, Any]:
    gates = await anyio.to_thread.run_sync(lambda: hub.held_gates(1, timeout=60))
    return dict(gates[0])


@pytest.fixture
def agent(hub: HubProcess, fake: FakeOpenAI, tmp_path: Path) -> Agent:
    return Agent(hub, fake, tmp_path)


async def test_an_error_gate_explained_and_a_proposed_retry_accepted_in_the_viewer_finishes_the_run(
    agent: Agent,
) -> None:
    agent.breakpoint("tool:lookup_order", "error")
    proc = agent.start(FAIL_LOOKUP_ONCE="1")
    try:
        async with agent.mcp() as session:
            gate = await held(agent.hub)
            assert (gate["nodeId"], gate["gate"]) == ("tool:lookup_order", "error")
            why = await call(session, "explain_run", run_id=gate["runId"])
            focus = why["focus"]
            assert (focus["nodeId"], focus["status"], focus["gate"]) == ("tool:lookup_order", "held", "error")
            assert "orders database timed out" in focus["error"]
            assert focus["gateId"] == gate["gateId"]
            context = why["lastModelInput"]["context"]
            assert why["lastModelInput"]["nodeId"] == "llm:step"
            largest = context["largest"][0]
            assert largest["tokens"] > 0 and "Refund order A1" in largest["preview"]
            assert why["effects"]["summary"]["writesRan"] == 0

            proposed = await call(
                session,
                "propose_answer",
                gate_id=gate["gateId"],
                action="retry",
                why="The orders database timed out once; a retry usually succeeds.",
            )
            proposal = proposed["proposal"]
            assert proposed["applied"] is False and proposal["status"] == "pending"
            # On the gate's card (what the viewer draws), and the run still held.
            [card] = agent.hub.api("GET", "/api/gates")[1]["gates"]
            assert card["proposals"][0]["why"].startswith("The orders database timed out once")
            assert agent.ran() == ["lookup_order"]

            status, accepted = agent.hub.api(
                "POST", f"/api/proposals/{proposal['id']}/accept", {}, headers={"X-GraphMind-Via": "viewer"}
            )
            assert status == 200, accepted
            assert agent.finish(proc) == ANSWER
            assert agent.ran() == ["lookup_order", "lookup_order", "issue_refund"]  # the retry ran

            detail = await settled(session, gate["runId"], "tool:lookup_order")
            [line] = detail["proposals"]
            assert (line["action"], line["status"], line["by"]) == ("retry", "accepted", "viewer")
            assert detail["status"] == "ok" and len(detail["attempts"]) == 1
            # Without --allow-exec the verify tools run nothing and say how to enable them, in one line.
            refused = await session.call_tool(
                "fork_and_replay", {"run_id": gate["runId"], "at": "tool:lookup_order#1"}
            )
            text = refused.content[0].text
            assert refused.is_error and "graphmind mcp --allow-exec" in text and "\n" not in text
            ledger = await call(session, "get_effects", run_id=gate["runId"])
            assert [(p["nodeId"], p["status"], p["by"]) for p in ledger["proposals"]] == [
                ("tool:lookup_order", "accepted", "viewer")
            ]
    finally:
        proc.kill()


async def test_a_proposed_inject_waits_for_the_person_unless_allow_control_is_auto(agent: Agent) -> None:
    agent.breakpoint("tool:issue_refund", "before")
    value = {"order_id": "A1", "refunded": 40, "note": "stub"}
    proc = agent.start()
    try:
        async with agent.mcp() as session:
            gate = await held(agent.hub)
            proposed = await call(
                session,
                "propose_answer",
                gate_id=gate["gateId"],
                action="inject",
                value=value,
                why="Stub it.",
            )
            assert proposed["applied"] is False
            still = agent.hub.api("GET", "/api/gates")[1]["gates"]
            assert [g["gateId"] for g in still] == [gate["gateId"]], "a proposal alone answered the gate"
            status, _ = agent.hub.api(
                "POST",
                f"/api/proposals/{proposed['proposal']['id']}/reject",
                {},
                headers={"X-GraphMind-Via": "viewer"},
            )
            assert status == 200
            assert agent.hub.api("GET", "/api/gates")[1]["gates"][0]["proposals"] == []
            edit = await call(
                session,
                "propose_answer",
                gate_id=gate["gateId"],
                action="edit",
                value={"order_id": "A1", "amount": 25},
                why="Only the broken item: 25, not the whole order.",
            )
            status, _ = agent.hub.api(  # the person accepts this one
                "POST",
                f"/api/proposals/{edit['proposal']['id']}/accept",
                {},
                headers={"X-GraphMind-Via": "viewer"},
            )
            assert status == 200
            assert agent.finish(proc) == ANSWER
            detail = await settled(session, gate["runId"], "tool:issue_refund")
            assert detail["input"] == {"order_id": "A1", "amount": 25}  # the edited input ran
        assert agent.ran() == ["lookup_order", "issue_refund"]
        proposals = agent.hub.api("GET", f"/api/proposals?runId={gate['runId']}")[1]["proposals"]
        assert [(p["action"], p["status"], p["decidedBy"]) for p in proposals] == [
            ("edit", "accepted", "viewer"),
            ("inject", "rejected", "viewer"),
        ]

        proc = agent.start()
        async with agent.mcp("--allow-control=auto") as session:
            gate = await held(agent.hub)
            proposed = await call(
                session,
                "propose_answer",
                gate_id=gate["gateId"],
                action="inject",
                value=value,
                why="Stub it.",
            )
            assert proposed["applied"] is True and proposed["proposal"]["decidedBy"] == "auto"
            assert agent.finish(proc) == ANSWER  # no click
            detail = await settled(session, gate["runId"], "tool:issue_refund")
            assert detail.get("injected") is True and detail["output"] == value
            assert [(p["status"], p["by"]) for p in detail["proposals"]] == [("accepted", "auto")]
        assert agent.ran() == ["lookup_order", "issue_refund", "lookup_order"]  # the refund did not run
    finally:
        proc.kill()


async def test_fork_and_replay_runs_the_recorded_command_under_simulate_and_diff_runs_names_the_fork(
    agent: Agent, fake: FakeOpenAI
) -> None:
    assert agent.finish(agent.start()) == ANSWER  # the recording: the refund runs
    original = wait_for(
        lambda: [r for r in agent.hub.api("GET", "/api/runs")[1]["runs"] if r["status"] == "finished"],
        10,
        "the recorded run",
    )[0]["id"]
    assert agent.ran() == ["lookup_order", "issue_refund"]
    before = fake.request_count
    async with agent.mcp("--allow-exec") as session:
        # The recorded run again with today's code, through replay --each: the same answer, from the
        # recording (no provider request, no tool body).
        each = await call(session, "replay_each", query="app=refund-agent status=ok", wait=60)
        assert each["differs"] is False and each["totals"]["same answer"] == 1, each
        assert [p["run"] for p in each["pairs"]] == [original] and len(each["runIds"]) == 1
        assert fake.request_count == before and agent.ran() == ["lookup_order", "issue_refund"]
        forked = await call(
            session,
            "fork_and_replay",
            run_id=original,
            at="tool:issue_refund#1",
            output={"order_id": "A1", "refunded": 25},
            wait=60,
        )
        assert forked["exitCode"] == 0, forked
        assert forked["safe"] == "simulate"
        [fork_id] = forked["runIds"]
        assert forked["runs"][0]["forkedAt"] == "tool:issue_refund#1"
        # Replayed up to the fork: only the model step after it reached the provider.
        assert fake.request_count - before == 1
        assert agent.ran() == ["lookup_order", "issue_refund"], "a body ran in the fork"
        ledger = await call(session, "get_effects", run_id=fork_id)
        assert ledger["summary"]["writesRan"] == 0  # the refund's body did not run in the fork
        assert [(e["name"], e["outcome"], e["runs"]) for e in ledger["effects"]] == [
            ("issue_refund", "injected", 0)
        ]
        diff = await call(session, "diff_runs", a=original, b=fork_id)
        assert diff["same"] is False
        assert diff["firstDifference"]["nodeId"] == "tool:issue_refund"
        assert "output" in diff["firstDifference"]["changed"]
        fork_events = agent.hub.api("GET", f"/api/runs/{fork_id}/events")[1]["events"]
        assert all(
            e.get("replayed")
            for e in fork_events
            if e["type"] == "node.finished" and e["nodeId"] == "tool:lookup_order"
        )
