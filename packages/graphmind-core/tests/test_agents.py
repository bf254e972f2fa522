"""Teams of agents in core: which agent a call belongs to, the one identity rule, handoff gates
(docs/protocol.md, "Agents")."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import graphmind
from graphmind.adapter import (
    NodeSpec,
    agent_scope,
    ahandoff,
    current_agent_path,
    engine_for,
    enter_agent,
    handoff,
)
from graphmind.testing import FakeHub


def _step(client: graphmind.Client, text: str = "hi") -> Any:
    engine = engine_for(client)
    step = engine.next_llm_step(text, 1)
    return engine.execute(
        NodeSpec("step", "llm", {"messages": [text]}, node_id="llm:step", instance_id=step.instance_id),
        lambda: {"text": "reply"},
    )


def _started(hub: FakeHub, count: int) -> list[dict[str, Any]]:
    hub.wait_for(lambda: len(hub.of_type("node.started")) >= count, what=f"{count} node.started")
    return hub.of_type("node.started")


def test_scopes_nest_and_the_innermost_name_again_changes_nothing() -> None:
    assert current_agent_path() == ()
    with agent_scope("triage") as path:
        assert path == ("triage",)
        with agent_scope("triage"):
            assert current_agent_path() == ("triage",)
        with agent_scope("billing"):
            assert current_agent_path() == ("triage", "billing")
            enter_agent("refunds")
            assert current_agent_path() == ("triage", "billing", "refunds")
        assert current_agent_path() == ("triage",)
    assert current_agent_path() == ()


def test_a_bad_agent_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="cannot be empty"):
        agent_scope("")
    with pytest.raises(TypeError, match="is a str"):
        agent_scope(3)  # type: ignore[arg-type]


async def test_a_task_created_inside_a_scope_stays_in_it() -> None:
    seen: list[tuple[str, ...]] = []

    async def work() -> None:
        await asyncio.sleep(0)
        seen.append(current_agent_path())

    async with agent_scope("triage"):
        with agent_scope("billing"):
            task = asyncio.create_task(work())
        await task
    assert seen == [("triage", "billing")]
    assert current_agent_path() == ()


def test_threads_keep_their_own_paths() -> None:
    seen: dict[str, tuple[str, ...]] = {}
    barrier = threading.Barrier(2)

    def worker(name: str) -> None:
        with agent_scope(name):
            barrier.wait()
            seen[name] = current_agent_path()

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert seen == {"a": ("a",), "b": ("b",)}


def test_the_root_agent_keeps_llm_step_and_another_agent_gets_its_own_node(
    hub: FakeHub, client: graphmind.Client
) -> None:
    with client.run("team"), agent_scope("triage"):
        _step(client)
        with agent_scope("billing"):
            _step(client, "bill")
            client.wrap(lambda q: q, name="lookup")("x")
    started = _started(hub, 3)
    assert [(e["nodeId"], e.get("agent"), e.get("agentPath")) for e in started] == [
        ("llm:step", "triage", ["triage"]),
        ("llm:step@billing", "billing", ["triage", "billing"]),
        ("tool:lookup", "billing", ["triage", "billing"]),
    ]


def test_a_call_outside_any_agent_carries_no_agent_fields(hub: FakeHub, client: graphmind.Client) -> None:
    with client.run("solo"):
        _step(client)
    started = _started(hub, 1)[0]
    assert started["nodeId"] == "llm:step" and "agent" not in started and "agentPath" not in started


def test_odd_agent_names_are_escaped_in_node_ids(hub: FakeHub, client: graphmind.Client) -> None:
    with client.run("team"), agent_scope("root"), agent_scope("Billing @ EU>1 %"):
        _step(client)
    started = _started(hub, 1)[0]
    assert started["nodeId"] == "llm:step@Billing %40 EU%3E1 %25"
    assert started["agent"] == "Billing @ EU>1 %"


def test_a_breakpoint_on_one_agents_step_holds_only_that_agent(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("llm:step@billing", "before")])
    hub.auto_answer("continue")
    with client.run("team"), agent_scope("triage"):
        _step(client)
        with agent_scope("billing"):
            _step(client, "bill")
        _step(client, "again")
    paused = hub.of_type("exec.paused")
    assert [p["nodeId"] for p in paused] == ["llm:step@billing"]


def test_hold_if_sees_the_agent(hub: FakeHub, client: graphmind.Client) -> None:
    hub.auto_answer("continue")
    refund = client.wrap(
        lambda amount: amount, name="refund", hold_if=lambda amount, agent=None: agent == "billing"
    )
    with client.run("team"), agent_scope("triage"):
        refund(1)
        with agent_scope("billing"):
            refund(2)
    paused = hub.of_type("exec.paused")
    assert [(p["nodeId"], p["input"]) for p in paused] == [("tool:refund", {"amount": 2})]


def test_a_handoff_is_a_gated_node_and_continue_passes_the_input_on(
    hub: FakeHub, client: graphmind.Client
) -> None:
    with client.run("team"), agent_scope("triage"):
        decided = handoff(engine_for(client), "triage", "billing", {"messages": ["refund please"]})
    assert decided.input == {"messages": ["refund please"]} and not decided.injected and not decided.edited
    started = _started(hub, 1)[0]
    assert (started["nodeId"], started["kind"], started["agent"]) == (
        "handoff:triage->billing",
        "handoff",
        "triage",
    )
    assert started["attrs"] == {"from": "triage", "to": "billing"}
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["output"] == {"messages": ["refund please"]}


def test_an_edit_at_the_handoff_reaches_the_target(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(breakpoints=[("handoff:*", "before")])
    hub.auto_answer(lambda _p: ("continue", None, {"input": {"messages": ["EDITED"]}}))
    received: list[Any] = []

    def billing(handed: Any) -> str:
        received.append((handed, current_agent_path()))
        with client.run("inner"):  # nests: no run of its own inside a run
            pass
        return "billed"

    with client.run("team"), agent_scope("triage"):
        decided = handoff(engine_for(client), "triage", "billing", {"messages": ["orig"]}, call=billing)
    assert received == [({"messages": ["EDITED"]}, ("triage", "billing"))]
    assert decided.edited and decided.output == "billed" and decided.input == {"messages": ["EDITED"]}


def test_inject_at_the_handoff_answers_as_the_target_without_running_it(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(pause_on_handoff="on")
    hub.auto_answer("inject", "refunded (injected)")
    ran: list[Any] = []
    with client.run("team"), agent_scope("triage"):
        decided = handoff(
            engine_for(client),
            "triage",
            "billing",
            {"messages": ["x"]},
            call=ran.append,
            from_injected=str.upper,
        )
    assert ran == [] and decided.injected and decided.output == "REFUNDED (INJECTED)"
    paused = hub.of_type("exec.paused")[0]
    assert paused["reason"] == "handoff" and paused["nodeId"] == "handoff:triage->billing"


def test_abort_at_the_handoff_raises(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(pause_on_handoff="on")
    hub.auto_answer("abort")
    with pytest.raises(graphmind.RunAborted), client.run("team"), agent_scope("triage"):
        handoff(engine_for(client), "triage", "billing", "task")


async def test_ahandoff_runs_the_target_in_its_scope(hub: FakeHub, client: graphmind.Client) -> None:
    async def billing(handed: Any) -> Any:
        return (handed, current_agent_path())

    async with client.run("team"):
        with agent_scope("triage"):
            decided = await ahandoff(engine_for(client), "triage", "billing", "task", call=billing)
    assert decided.output == ("task", ("triage", "billing")) and not decided.injected


def test_a_handoff_holds_only_when_asked(hub: FakeHub, client: graphmind.Client) -> None:
    with client.run("team"):
        handoff(engine_for(client), "a", "b", "task")
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert hub.of_type("exec.paused") == []


# ---- the shared kit's two-agent cases, on a team made of core's own API -------------------------

from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case  # noqa: E402


class _CoreTeam(TeamSubject):
    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.session: graphmind.Client | None = None

    def make(self) -> Any:
        return object()

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        self.session = session
        return thing

    def undo(self, thing: Any) -> None:
        self.session = None

    async def _model(self, messages: list[str]) -> str:
        engine = engine_for(self.session)
        step = engine.next_llm_step(messages[0], len(messages))

        async def call() -> str:
            self.requests.append((current_agent_path()[-1], messages))
            return f"reply to {messages[-1]}"

        spec = NodeSpec(
            "step", "llm", {"messages": messages}, node_id="llm:step", instance_id=step.instance_id
        )
        return await engine.aexecute(spec, call)

    async def acall_team(self, thing: Any) -> Any:
        engine = engine_for(self.session)
        async with self.session.run("team"), agent_scope(self.root):  # type: ignore[union-attr]
            await self._model(["route: refund"])

            async def billing(handed: Any) -> Any:
                return await self._model(handed["messages"])

            decided = await ahandoff(
                engine, self.root, self.other, {"messages": ["refund order 7"]}, call=billing
            )
            return decided.output

    @property
    def other_model_calls(self) -> int:
        return sum(1 for agent, _ in self.requests if agent == self.other)

    def edit_handoff(self, handed: Any) -> Any:
        return {"messages": [*handed["messages"], "EDITED"]}

    def check_handoff_edited(self, edited: Any) -> None:
        first = next(m for a, m in self.requests if a == self.other)
        assert first == edited["messages"]

    def check_injected(self, result: Any, value: Any) -> None:
        assert result == value


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_the_team_kit_on_core_alone(case: str) -> None:
    await run_team_case(case, _CoreTeam())


def test_the_client_option_breakpoints_selects_every_handoff(hub: FakeHub) -> None:
    client = graphmind.Client(app="core-tests", url=hub.url, retry_interval=0.2, breakpoints=["handoff:*"])
    try:
        assert client.ready(5)
        hub.auto_answer("continue")
        with client.run("team"):
            handoff(engine_for(client), "a", "b", "task")
            _step(client)
        paused = hub.of_type("exec.paused")
        assert [(p["nodeId"], p["reason"], p.get("source")) for p in paused] == [
            ("handoff:a->b", "breakpoint", "code")
        ]
    finally:
        client.dispose()


def test_a_handoff_made_outside_the_sources_scope_still_runs_the_target_under_it(
    hub: FakeHub, client: graphmind.Client
) -> None:
    with client.run("team"):
        decided = handoff(
            engine_for(client), "triage", "billing", "task", call=lambda _t: current_agent_path()
        )
    assert decided.output == ("triage", "billing")
