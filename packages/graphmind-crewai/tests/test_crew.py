"""A two-agent crew against the real hub process (`graphmind serve`, driven as the viewer drives it:
`graphmind_server.testing.KitHub`), the loopback fake provider counting requests and each tool
counting its calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from crew_helpers import SCRIPT, Tools, contents, crew

import graphmind
from graphmind.adapter import RunAborted
from graphmind_crewai import instrument_crewai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, KitHub


@pytest.fixture
def kit(hub_process: HubProcess) -> Iterator[KitHub]:
    with KitHub(hub_process, timeout=30) as kit:
        yield kit


@pytest.fixture
def session(kit: KitHub) -> Iterator[graphmind.Client]:
    client = graphmind.Client(app="crew-tests", url=kit.url, retry_interval=0.2)
    assert client.ready(10)
    instrument_crewai(session=client)
    yield client
    client.dispose()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.script(list(SCRIPT))
        yield fake


def _started(kit: KitHub) -> list[dict[str, Any]]:
    return [e for e in kit.events if e["type"] == "node.started"]


def _run_status(kit: KitHub) -> str:
    kit.wait_for(lambda: bool(kit.of_type("run.finished")))
    return str(kit.of_type("run.finished")[0]["status"])


def test_two_agents_their_steps_one_delegation_and_the_task(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    tools = Tools()
    out = crew(fake, tools).kickoff()
    assert out.raw == "researcher done"
    assert _run_status(kit) == "finished"
    started = _started(kit)
    steps = [e for e in started if e["kind"] == "llm"]
    # the run's first agent steps as llm:step, the other as llm:step@<role> (core names them)
    assert {(e["nodeId"], e["agent"]) for e in steps} == {
        ("llm:step", "researcher"),
        ("llm:step@writer", "writer"),
    }
    assert len({e["instanceId"] for e in steps}) == len(steps) == fake.request_count == 5
    handoffs = [e for e in started if e["nodeId"].startswith("handoff:")]
    assert [e["nodeId"] for e in handoffs] == ["handoff:researcher->writer"]
    assert handoffs[0]["agent"] == "researcher"
    # the writer's steps and tool run inside the delegation, as the writer; the researcher's in its task
    writer = [e for e in started if e.get("agent") == "writer"]
    assert {e["nodeId"] for e in writer} == {"llm:step@writer", "tool:draft"}
    assert {e["parentInstanceId"] for e in writer} == {handoffs[0]["instanceId"]}
    tasks = [e for e in started if e["nodeId"] == "task:research"]
    assert len(tasks) == 1 and tasks[0]["agent"] == "researcher"
    lookup = next(e for e in started if e["nodeId"] == "tool:lookup")
    assert lookup["agent"] == "researcher" and lookup["parentInstanceId"] == tasks[0]["instanceId"]


def test_a_delegation_injected_at_its_handoff_runs_no_coworker(
    kit: KitHub, session: graphmind.Client
) -> None:
    kit.set_debug(breakpoints=[("handoff:*", "before")])
    kit.auto_answer("inject", "the writer's answer, from the debugger")
    tools = Tools()
    with FakeOpenAI() as fake:
        fake.script([*SCRIPT[:2], "researcher done"])  # the writer's replies are never asked for
        out = crew(fake, tools).kickoff()
    assert out.raw == "researcher done"
    assert tools.count("draft") == 0
    assert fake.request_count == 3  # the researcher's three steps; none of the writer's
    assert "the writer's answer, from the debugger" in contents(fake.requests[2].body)


def test_a_delegation_edited_at_its_handoff_hands_the_coworker_the_edit(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    kit.set_debug(breakpoints=[("handoff:*", "before")])
    edited = {"task": "write a haiku", "context": "cairo facts", "coworker": "writer"}
    kit.auto_answer(lambda event: ("continue", None, {"input": edited}))
    crew(fake, Tools()).kickoff()
    assert "write a haiku" in contents(fake.requests[2].body)  # the writer's first request


def test_before_inject_on_a_tool_runs_no_body_and_the_next_request_carries_the_value(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    kit.set_debug(breakpoints=[("tool:lookup", "before")])
    kit.auto_answer("inject", "INJECTED: Cairo has 22 million people")
    tools = Tools()
    crew(fake, tools).kickoff()
    assert tools.count("lookup") == 0
    assert "INJECTED: Cairo has 22 million people" in contents(fake.requests[1].body)


def test_before_inject_on_a_model_call_sends_no_request(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    kit.set_debug(breakpoints=[("llm:step", "before")])
    kit.auto_answer("inject", {"content": "final answer from the debugger"})
    tools = Tools()
    out = crew(fake, tools).kickoff()
    assert out.raw == "final answer from the debugger"
    assert fake.request_count == 0 and tools.calls == []


def test_before_edit_of_a_tool_input(kit: KitHub, session: graphmind.Client, fake: FakeOpenAI) -> None:
    kit.set_debug(breakpoints=[("tool:lookup", "before")])
    kit.auto_answer(lambda event: ("continue", None, {"input": {"topic": "alexandria"}}))
    tools = Tools()
    crew(fake, tools).kickoff()
    assert ("lookup", "alexandria") in tools.calls and ("lookup", "cairo") not in tools.calls
    assert "facts about alexandria" in contents(fake.requests[1].body)


def test_retry_at_a_tools_error_gate(kit: KitHub, session: graphmind.Client, fake: FakeOpenAI) -> None:
    kit.set_debug(breakpoints=[("tool:lookup", "error")])
    kit.auto_answer("retry")
    tools = Tools(fail={"lookup": 1})
    crew(fake, tools).kickoff()
    assert tools.count("lookup") == 2
    assert "facts about cairo" in contents(fake.requests[1].body)
    assert "lookup service down" not in contents(fake.requests[1].body)


def test_abort_at_a_task_ends_the_kickoff_with_run_aborted(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    kit.set_debug(breakpoints=[("task:research", "before")])
    kit.auto_answer("abort")
    tools = Tools()
    with pytest.raises(RunAborted):
        crew(fake, tools).kickoff()
    assert fake.request_count == 0
    assert _run_status(kit) == "aborted"


def test_abort_at_a_tool_ends_the_kickoff_with_run_aborted(
    kit: KitHub, session: graphmind.Client, fake: FakeOpenAI
) -> None:
    """CrewAI turns a tool's exception into a message to the model; the run is aborted, so the
    next step raises RunAborted at once and kickoff() ends with it."""
    kit.set_debug(breakpoints=[("tool:lookup", "before")])
    kit.auto_answer("abort")
    tools = Tools()
    with pytest.raises(RunAborted):
        crew(fake, tools).kickoff()
    assert tools.calls == [] and fake.request_count == 1
    assert _run_status(kit) == "aborted"
