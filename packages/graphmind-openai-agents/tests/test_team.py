"""A team: a triage agent hands off to a billing agent, which calls a tool (docs/openai-agents.md,
"Teams of agents"). The shared kit's two-agent cases on both hubs (the real hub process included),
on the SDK's own models against the loopback fake provider, which scripts which agent answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents_helpers import model_for

import graphmind
from graphmind.testing import FakeHub
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents
from graphmind_server.testing import HubProcess, wait_for

TRIAGE = "Route the customer to the right agent."
BILLING = "You handle billing questions."
ASK = "I was charged twice for order 7"
REFUNDED = "order 7 refunded"  # billing stops at its tool's result: one model step


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _agent_of(body: dict[str, Any]) -> str:
    system = next((m.get("content") for m in _messages(body) if m.get("role") == "system"), "")
    return "billing" if system == BILLING else "triage"


def script(body: dict[str, Any]) -> Any:
    """The fake provider's reply: triage hands off; billing calls `refund` (whose result ends the run)."""
    if _agent_of(body) == "triage":
        return FakeOpenAI.tool_call("transfer_to_billing", {})
    return FakeOpenAI.tool_call("refund", {"order": "7"})


class Team(TeamSubject):
    root, other = "triage", "billing"
    injected = "Handled by a person: refund approved."

    def __init__(self) -> None:
        self.fake = FakeOpenAI(default_reply=script).__enter__()
        self.refunds: list[str] = []

    def make(self) -> Any:
        model = model_for(self.fake)

        @function_tool
        def refund(order: str) -> str:
            """Refund an order."""
            self.refunds.append(order)
            return f"order {order} refunded"

        billing = Agent(
            name="billing",
            instructions=BILLING,
            tools=[refund],
            model=model,
            tool_use_behavior="stop_on_first_tool",  # one billing step: a breakpoint on it holds once
        )
        return Agent(name="triage", instructions=TRIAGE, handoffs=[billing], model=model)

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        assert instrument_openai_agents(session=session)
        return thing

    def undo(self, thing: Any) -> None:
        uninstrument_openai_agents()
        self.fake.__exit__(None, None, None)

    async def acall_team(self, thing: Any) -> Any:
        return await Runner.run(thing, ASK)

    def _billing_requests(self) -> list[dict[str, Any]]:
        return [
            r.body for r in self.fake.requests if isinstance(r.body, dict) and _agent_of(r.body) == "billing"
        ]

    @property
    def other_model_calls(self) -> int:
        return len(self._billing_requests())

    def edit_handoff(self, handed: Any) -> Any:
        items = list(handed["input"])
        first = dict(items[0])
        first["content"] = "EDITED: refund order 8 instead"
        return {"input": [first, *items[1:]]}

    def check_handoff_edited(self, edited: Any) -> None:
        first = self._billing_requests()[0]
        texts = [str(m.get("content")) for m in _messages(first)]
        assert "EDITED: refund order 8 instead" in texts, texts
        assert ASK not in texts, "the edit replaced the customer's message"

    def check_injected(self, result: Any, value: Any) -> None:
        assert result.final_output == value
        assert self.refunds == []


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Callable[[], Any] | None) -> None:
    await run_team_case(case, Team(), hub=kit_hub)


async def test_the_team_run_draws_two_agents_and_the_billing_tool(
    fakehub: FakeHub, gm: graphmind.Client
) -> None:
    team = Team()
    thing = team.instrument(team.make(), gm)
    try:
        result = await team.acall_team(thing)
    finally:
        team.undo(thing)
    assert result.final_output == REFUNDED and team.refunds == ["7"]
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 1, what="the run's end")
    started = [(e["nodeId"], e.get("agent")) for e in fakehub.of_type("node.started")]
    assert started == [
        ("llm:step", "triage"),
        ("handoff:triage->billing", "triage"),
        ("llm:step@billing", "billing"),
        ("tool:refund", "billing"),
    ]


async def test_a_replay_of_the_team_matches_each_agents_steps(
    fakehub: FakeHub, gm: graphmind.Client, tmp_path: Any
) -> None:
    from graphmind.testing import write_cassette

    team = Team()
    thing = team.instrument(team.make(), gm)
    try:
        await team.acall_team(thing)
    finally:
        team.undo(thing)
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 1, what="the run's end")
    write_cassette(tmp_path / "team.jsonl", gm.client_id, list(fakehub.events))

    with FakeHub() as again:
        replaying = graphmind.Client(app="team", url=again.url, replay={"source": tmp_path / "team.jsonl"})
        assert replaying.ready(5)
        twin = Team()
        thing = twin.instrument(twin.make(), replaying)
        try:
            result = await twin.acall_team(thing)
            assert result.final_output == REFUNDED
            assert twin.fake.requests == [] and twin.refunds == [], "a replay sends no request, runs no tool"
        finally:
            twin.undo(thing)
            replaying.dispose()
        ended = [(e["nodeId"], e.get("replayed")) for e in again.of_type("node.finished")]
    assert ended == [
        ("llm:step", True),
        ("handoff:triage->billing", None),  # runs live: the target's own calls replay
        ("llm:step@billing", True),
        ("tool:refund", True),
    ]


async def test_a_breakpoint_on_the_billing_step_holds_once_and_never_triages(
    fakehub: FakeHub, gm: graphmind.Client
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step@billing", "before")])
    fakehub.auto_answer("continue")
    team = Team()
    thing = team.instrument(team.make(), gm)
    try:
        assert (await team.acall_team(thing)).final_output == REFUNDED
    finally:
        team.undo(thing)
    assert [p["nodeId"] for p in fakehub.of_type("exec.paused")] == ["llm:step@billing"]


async def test_a_streamed_team_run_reports_its_agents(fakehub: FakeHub, gm: graphmind.Client) -> None:
    team = Team()
    thing = team.instrument(team.make(), gm)
    try:
        result = Runner.run_streamed(thing, ASK)
        async for _event in result.stream_events():
            pass
        assert result.final_output == REFUNDED
    finally:
        team.undo(thing)
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 1, what="the run's end")
    started = [(e["nodeId"], e.get("agentPath")) for e in fakehub.of_type("node.started")]
    assert started == [
        ("llm:step", ["triage"]),
        ("handoff:triage->billing", ["triage"]),
        ("llm:step@billing", ["triage", "billing"]),
        ("tool:refund", ["triage", "billing"]),
    ]


# ---- the team run on the real hub process: what the hub stores and serves about its agents -------
# (docs/api.md: the run's `agents`, the runs list's and search's `agent=`)


async def _team_run(hub_process: HubProcess) -> tuple[str, Any]:
    # The module's hub served the kit's cases: no breakpoint of theirs may hold this run.
    assert hub_process.api("PUT", "/api/debug", {"breakpoints": [], "pauseOnHandoff": "off"})[0] == 200
    client = graphmind.Client(app="team", url=hub_process.ingest_url, retry_interval=0.2)
    assert client.ready(5)
    team = Team()
    thing = team.instrument(team.make(), client)
    try:
        result = await team.acall_team(thing)
    finally:
        team.undo(thing)
        client.dispose()
    assert result.final_output == REFUNDED

    def finished() -> str | None:
        status, body = hub_process.api("GET", "/api/runs?app=team")
        runs = [r for r in body["runs"] if r["status"] == "finished"] if status == 200 else []
        return runs[0]["id"] if runs else None

    run_id = wait_for(finished, what="the team run to finish")
    status, run = hub_process.api("GET", f"/api/runs/{run_id}")
    assert status == 200
    return run_id, run


async def test_the_hub_serves_each_agents_share_and_filters_by_agent(hub_process: HubProcess) -> None:
    run_id, run = await _team_run(hub_process)
    agents = {a["agent"]: a for a in run["agents"]}
    assert list(agents) == ["triage", "billing"]
    assert agents["billing"]["agentPath"] == ["triage", "billing"]
    assert (agents["triage"]["steps"], agents["billing"]["steps"]) == (1, 1)
    assert agents["billing"]["calls"] == 2  # its model step and the refund tool
    assert agents["triage"]["calls"] == 2  # its model step and the handoff
    assert all(a["status"] == "ok" for a in agents.values())
    assert agents["billing"]["usage"]["totalTokens"] > 0 and agents["billing"]["durationMs"] is not None
    assert {n["nodeId"] for n in run["nodes"]} >= {
        "llm:step",
        "llm:step@billing",
        "handoff:triage->billing",
        "tool:refund",
    }

    _, listed = hub_process.api("GET", "/api/runs?agent=billing&app=team")
    assert [r["id"] for r in listed["runs"]] == [run_id]
    _, none = hub_process.api("GET", "/api/runs?agent=nobody")
    assert none["runs"] == []
    _, hits = hub_process.api("GET", f"/api/search?q=refunded&run={run_id}&agent=billing")
    assert hits["hits"] and {h["nodeId"] for h in hits["hits"]} <= {"tool:refund", "llm:step@billing"}
    _, triage_hits = hub_process.api("GET", f"/api/search?q=refunded&run={run_id}&agent=triage")
    assert triage_hits["hits"] == []
