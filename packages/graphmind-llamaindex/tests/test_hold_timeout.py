"""A workflow's timeout keeps running while a gate holds (docs/timeouts.md): the adapter passes it to
core, which warns once when a hold outlives it (issue 16 item 10)."""

from __future__ import annotations

import logging

import pytest
from li_fixtures import make_search
from llama_index.core.agent.workflow import FunctionAgent
from workflows.errors import WorkflowTimeoutError

import graphmind
from graphmind.testing import FakeHub
from graphmind_llamaindex import gate_tools, instrument_llamaindex
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM, tool_call


def _agent(client: graphmind.Client, timeout: float | None) -> FunctionAgent:
    llm = ScriptedFunctionCallingLLM(
        [{"content": "", "tool_calls": [tool_call("search", "call_1", query="cairo")]}, "Cairo it is."]
    )
    return FunctionAgent(tools=gate_tools([make_search([])], session=client), llm=llm, timeout=timeout)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "has been held longer than" in r.getMessage()]


async def test_a_hold_that_outlives_the_workflows_timeout_warns_once(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    instrument_llamaindex(client)
    # The 0.5 s timeout must be spent held at the gate, not getting there: a process's first agent
    # run pays one-off costs (lazy imports, model classes) that took 0.4-0.9 s on a loaded 2-core
    # machine, so the workflow timed out before the tool was called and nothing held. One run
    # without a hold or a timeout pays them first (a warm run reaches the gate in ~50 ms).
    assert str(await _agent(client, None).run("Where to?")) == "Cairo it is."
    hub.set_debug(breakpoints=[("tool:search", "before")])  # nobody answers: the timeout ends it
    with pytest.raises(WorkflowTimeoutError):
        await _agent(client, 0.5).run("Where to?")
    assert _warnings(caplog) == [
        "[graphmind] the before gate of tool:search has been held longer than the FunctionAgent "
        "workflow's timeout (0.5 s), which keeps running while a gate is held: the call may time out "
        "when it resumes. Prefer removing the timeout while debugging (pass timeout=None to the "
        "workflow or agent)."
    ]


async def test_without_a_workflow_timeout_a_hold_never_warns(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    instrument_llamaindex(client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    answered = []

    def answer(frame: dict) -> tuple[str, None]:
        answered.append(frame["nodeId"])
        return ("continue", None)

    hub.auto_answer(answer)
    assert str(await _agent(client, None).run("Where to?")) == "Cairo it is."
    assert answered == ["tool:search"] and _warnings(caplog) == []
