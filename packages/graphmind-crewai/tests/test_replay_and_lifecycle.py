"""A recorded crew replays with 0 provider requests and 0 tool bodies; instrument is idempotent,
reversible and the identity when disabled; the hook table stands in the installed CrewAI."""

from __future__ import annotations

from pathlib import Path

import crewai.agents.agent_executor
import crewai.crew
import crewai.lite_agent
import crewai.task
import crewai.tools.base_tool
import crewai.tools.structured_tool
import crewai.tools.tool_usage
import crewai.utilities.agent_utils
from crew_helpers import SCRIPT, Tools, crew

import graphmind
from graphmind.testing import FakeHub, assert_hooks_stand, assert_in_source, assert_supported, write_cassette
from graphmind_crewai import SUPPORTED, _hooks, instrument_crewai, uninstrument_crewai
from graphmind_openai.testing import FakeOpenAI


def test_a_recorded_crew_replays_with_no_request_and_no_tool_body(tmp_path: Path) -> None:
    with FakeHub(pause_on_error="off") as hub, FakeOpenAI() as fake:
        recording = graphmind.Client(app="crew", url=hub.url)
        assert recording.ready(10)
        instrument_crewai(session=recording)
        fake.script(list(SCRIPT))
        live = crew(fake, Tools()).kickoff()
        hub.wait_for(lambda: bool(hub.of_type("run.finished")))
        write_cassette(tmp_path / "crew.jsonl", recording.client_id, list(hub.events))
        recording.dispose()

        replaying = graphmind.Client(app="crew", replay={"source": tmp_path / "crew.jsonl"})
        instrument_crewai(session=replaying)
        fake.script(list(SCRIPT))
        tools = Tools()
        requests = fake.request_count
        replayed = crew(fake, tools).kickoff()
        replaying.dispose()
    assert replayed.raw == live.raw == "researcher done"
    assert fake.request_count == requests and tools.calls == []


def _originals() -> list[object]:
    return [
        crewai.crew.Crew.kickoff,
        crewai.task.Task._execute_core,
        crewai.agents.agent_executor.get_llm_response,
        crewai.lite_agent.get_llm_response,
        crewai.tools.base_tool.BaseTool.run,
        crewai.tools.base_tool.Tool.run,
        crewai.tools.structured_tool.CrewStructuredTool.invoke,
    ]


def test_instrument_twice_is_once_and_uninstrument_puts_the_originals_back(gm: graphmind.Client) -> None:
    before = _originals()
    assert instrument_crewai(session=gm) is True
    patched = _originals()
    assert all(a is not b for a, b in zip(before, patched, strict=True))
    assert instrument_crewai(session=gm) is True
    assert _originals() == patched
    uninstrument_crewai()
    assert _originals() == before
    uninstrument_crewai()  # a no-op
    assert _originals() == before


def test_a_disabled_session_patches_nothing() -> None:
    before = _originals()
    assert instrument_crewai(session=graphmind.Client(app="off", enabled=False)) is False
    assert _originals() == before


def test_the_installed_crewai_is_in_the_supported_range_and_every_hook_stands() -> None:
    assert_supported(SUPPORTED)
    for owner, row in _hooks.HOOKS:
        assert_hooks_stand((row,), owner)


def test_the_executor_still_asks_its_llm_and_runs_native_tools_where_the_rows_sit() -> None:
    executor = crewai.agents.agent_executor.AgentExecutor
    assert_in_source(executor.call_llm_native_tools, "get_llm_response(", hook=_hooks.HOOKS[2][1])
    assert_in_source(executor.call_llm_and_parse, "get_llm_response(", hook=_hooks.HOOKS[2][1])
    assert_in_source(crewai.task.Task.execute_sync, "self._execute_core(", hook=_hooks.HOOKS[1][1])
    assert_in_source(
        crewai.utilities.agent_utils,
        "available_functions[sanitized_name] = tool.run",
        hook=_hooks.HOOKS[4][1],
    )
