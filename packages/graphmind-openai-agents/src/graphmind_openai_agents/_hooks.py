"""The only hook tables of the adapter: `HOOKS`, applied process-wide by `instrument_openai_agents()`
and undone by `uninstrument_openai_agents()`, and `MODEL_HOOKS`, put on each model a turn calls.

One `graphmind.adapter.Hook` row per hook point, each on the module or class that holds the name
the SDK looks up at call time, applied and undone by one `Patches`: idempotent (a second call patches
nothing more; its `session` becomes the one reported to), reversible (the very originals go back,
and every model the `get_model` row gated is undone too), and a disabled session patches nothing.
Each row's `upstream` names the line it depends on; tests/test_hooks_upstream.py checks them against
the installed SDK.
"""

from __future__ import annotations

import agents.run
import agents.run_internal.guardrails
import agents.run_internal.run_loop
import agents.run_internal.tool_execution
import agents.run_internal.turn_resolution
import agents.tool

from graphmind.adapter import Hook, Patches, ProcessPatch, hook_moved

from . import _handoffs, _model, _runs, _tools
from ._version import SUPPORTED, __version__

MODEL_HOOKS: tuple[Hook[Patches], ...] = (
    # agents/models/interface.py:68 Model.get_response: awaited once per non-streamed turn at
    # agents/run_internal/run_loop.py:3026 (inside get_response_with_retry's lambda)
    Hook(
        "",
        "get_response",
        _model.wrap_get_response,
        SUPPORTED,
        "agents/models/interface.py:68 Model.get_response",
    ),
    # agents/models/interface.py:103 Model.stream_response: iterated once per streamed turn at
    # agents/run_internal/run_loop.py:2622 (inside stream_response_with_retry's lambda)
    Hook(
        "",
        "stream_response",
        _model.wrap_stream_response,
        SUPPORTED,
        "agents/models/interface.py:103 Model.stream_response",
    ),
)
_models = _model.Models(MODEL_HOOKS)

HOOKS: tuple[tuple[object, Hook[Patches]], ...] = (
    # agents/run_internal/run_loop.py:2958 / :2514: `model = get_model(execution_agent, run_config)`
    # once per turn (imported at :226): the model the turn calls gets its two methods gated (_model.py)
    (
        agents.run_internal.run_loop,
        Hook(
            "",
            "get_model",
            _model.wrap_get_model(_models),
            SUPPORTED,
            "agents/run_internal/run_loop.py:2958 get_new_response -> get_model(execution_agent, run_config)",
        ),
    ),
    # agents/run_internal/tool_execution.py:2091: every function tool invocation of the run loop
    (
        agents.run_internal.tool_execution,
        Hook(
            "",
            "_invoke_function_tool_with_metadata",
            _tools.wrap_invoke,
            SUPPORTED,
            "agents/run_internal/tool_execution.py:2091 _invoke_tool_and_run_post_invoke",
        ),
    ),
    # agents/tool.py:697: a @function_tool's invoker catches the body's error (raw mode, _tools.py)
    (
        agents.tool._FailureHandlingFunctionToolInvoker,
        Hook(
            "",
            "__call__",
            _tools.wrap_invoker_call,
            SUPPORTED,
            "agents/tool.py:697 _FailureHandlingFunctionToolInvoker.__call__",
        ),
    ),
    # agents/run_internal/turn_resolution.py:963 / :1455 look `execute_handoffs` up at call time
    (
        agents.run_internal.turn_resolution,
        Hook(
            "",
            "execute_handoffs",
            _handoffs.wrap_execute_handoffs,
            SUPPORTED,
            "agents/run_internal/turn_resolution.py:963 execute_handoffs_call = execute_handoffs",
        ),
    ),
    # agents/run_internal/guardrails.py:38 / :50: each guardrail runs in one of these two
    (
        agents.run_internal.guardrails,
        Hook(
            "",
            "run_single_input_guardrail",
            _tools.wrap_input_guardrail,
            SUPPORTED,
            "agents/run_internal/guardrails.py:31 run_single_input_guardrail",
        ),
    ),
    (
        agents.run_internal.guardrails,
        Hook(
            "",
            "run_single_output_guardrail",
            _tools.wrap_output_guardrail,
            SUPPORTED,
            "agents/run_internal/guardrails.py:43 run_single_output_guardrail",
        ),
    ),
    # agents/run.py:574 AgentRunner.run: Runner.run and run_sync (agents/run.py:2596, in _run_sync_impl) await it
    (
        agents.run.AgentRunner,
        Hook("", "run", _runs.wrap_runner_run, SUPPORTED, "agents/run.py:574 AgentRunner.run"),
    ),
    # agents/run.py:2902: run_streamed's task awaits the module's start_streaming (imported at :133)
    (
        agents.run,
        Hook("", "start_streaming", _runs.wrap_start_streaming, SUPPORTED, "agents/run.py:2902 run_loop"),
    ),
)

# The one state of the process: the patches and the session the wrappers report to (None: the
# default client at each call). The latest `instrument_openai_agents(session=...)` sets it;
# uninstrument also undoes every model the `get_model` row gated.
PATCH = ProcessPatch(
    HOOKS,
    moved=hook_moved("openai-agents", "graphmind-openai-agents", __version__, SUPPORTED, what="agent run"),
    also_undo=_models.undo,
)


def instrumented() -> bool:
    return PATCH.active
