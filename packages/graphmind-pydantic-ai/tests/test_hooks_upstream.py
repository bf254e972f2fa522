"""Fails loudly when a Pydantic AI hook this adapter relies on moves (docs/pydantic-ai.md has the
table, with the file:line each row was read at)."""

from __future__ import annotations

import inspect

from pydantic_ai import Agent
from pydantic_ai.agent.abstract import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import CompletedStreamedResponse, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.tool_manager import ToolManager

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_pydantic_ai import SUPPORTED, GraphmindCapability
from graphmind_pydantic_ai._capability import CONTROL_FLOW
from graphmind_pydantic_ai._hooks import HOOKS
from graphmind_pydantic_ai.testing import ScriptedModel

ITER = HOOKS[0]


def test_the_installed_pydantic_ai_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in HOOKS)
    assert_hooks_stand(HOOKS, Agent(ScriptedModel(["x"]).model))


def test_every_way_to_run_an_agent_enters_iter_which_takes_per_run_capabilities() -> None:
    assert "capabilities" in inspect.signature(Agent.iter).parameters
    assert_in_source(AbstractAgent.run, "async with self.iter(", hook=ITER)
    assert_in_source(AbstractAgent.run_stream, "async with self.iter(", hook=ITER)
    assert_in_source(AbstractAgent.run_sync, "self.run(", hook=ITER)
    assert_in_source(AbstractAgent.run_stream_sync, "self.run_stream(", hook=ITER)
    assert_in_source(AbstractAgent.run_stream_events, "self.run(", hook=ITER)


def test_the_capability_overrides_hooks_the_framework_still_calls() -> None:
    for name in ("wrap_run", "get_wrapper_model", "wrap_tool_execute"):
        assert name in vars(AbstractCapability), f"AbstractCapability.{name} is gone"
        assert name in vars(GraphmindCapability)
    params = inspect.signature(AbstractCapability.wrap_tool_execute).parameters
    assert list(params) == ["self", "ctx", "call", "tool_def", "args", "handler"]
    # output tools never reach wrap_tool_execute; the control-flow exceptions pass through it
    assert_in_source(ToolManager._run_execute_hooks, "validated.tool.tool_def.kind != 'output'")
    source = inspect.getsource(ToolManager._run_execute_hooks)
    for exc in CONTROL_FLOW:
        assert exc.__name__ in source, f"{exc.__name__} is no longer control flow in tool_manager.py"


def test_the_model_wrapper_serves_request_and_request_stream_and_the_stream_reads_its_event_iterator() -> (
    None
):
    for name in ("request", "request_stream"):
        assert name in vars(WrapperModel)
    assert list(inspect.signature(WrapperModel.request_stream).parameters) == [
        "self",
        "messages",
        "model_settings",
        "model_request_parameters",
        "run_context",
    ]
    assert_in_source(StreamedResponse.__aiter__, "self._get_event_iterator()")
    assert "replay_events" in inspect.signature(CompletedStreamedResponse.__init__).parameters


def test_the_framework_tells_a_request_only_model_by_its_class_request_stream() -> None:
    # `gated_model` relies on it: a request-only model's wrapper keeps `Model.request_stream`.
    from pydantic_ai import _agent_graph

    assert_in_source(
        _agent_graph._ensure_model_supports_streaming,
        "type(model).request_stream is models.Model.request_stream",
    )
