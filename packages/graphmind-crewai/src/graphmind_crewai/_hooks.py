"""The only hook table of the adapter: `HOOKS`, applied process-wide by `instrument_crewai()` and
undone by `uninstrument_crewai()` (one `graphmind.adapter.ProcessPatch`).

One `Hook` row per hook point, each on the module or class that holds the name CrewAI looks up at
call time. Each row's `upstream` names the line it depends on (in crewai 1.15.30);
tests/test_hooks_upstream.py checks them against the installed CrewAI. Why these and not CrewAI's
own `before_*_call` hooks: `_model.py` and `_tools.py` (a hook there can block a call, not answer for it).
"""

from __future__ import annotations

import crewai.agents.agent_executor
import crewai.crew
import crewai.lite_agent
import crewai.task
import crewai.tools.base_tool
import crewai.tools.structured_tool

from graphmind.adapter import Hook, Patches, ProcessPatch, hook_moved

from . import _model, _runs, _tools
from ._version import SUPPORTED, __version__

HOOKS: tuple[tuple[object, Hook[Patches]], ...] = (
    # crewai/crew.py:997 Crew.kickoff: the crew's run (kickoff_async runs it on a thread, :1189)
    (crewai.crew.Crew, Hook("", "kickoff", _runs.wrap_kickoff, SUPPORTED, "crewai/crew.py:997 Crew.kickoff")),
    # crewai/task.py:809 Task._execute_core: every task, from execute_sync (:593) and execute_async's thread (:635)
    (
        crewai.task.Task,
        Hook(
            "", "_execute_core", _runs.wrap_execute_core, SUPPORTED, "crewai/task.py:809 Task._execute_core"
        ),
    ),
    # crewai/agents/agent_executor.py:99 imports get_llm_response; called at :1639 and :1729 per step
    (
        crewai.agents.agent_executor,
        Hook(
            "",
            "get_llm_response",
            _model.wrap_get_llm_response,
            SUPPORTED,
            "crewai/agents/agent_executor.py:1729 AgentExecutor.call_llm_native_tools -> get_llm_response",
        ),
    ),
    # crewai/lite_agent.py:83 imports it; called at :943 (Agent.kickoff, a LiteAgent's steps)
    (
        crewai.lite_agent,
        Hook(
            "",
            "get_llm_response",
            _model.wrap_get_llm_response,
            SUPPORTED,
            "crewai/lite_agent.py:943 LiteAgent._invoke_loop -> get_llm_response",
        ),
    ),
    # crewai/tools/base_tool.py:326 BaseTool.run: a native tool call (agent_executor.py:2243 calls tool.run)
    (
        crewai.tools.base_tool.BaseTool,
        Hook("", "run", _tools.wrap_run, SUPPORTED, "crewai/tools/base_tool.py:326 BaseTool.run"),
    ),
    # crewai/tools/base_tool.py:532 Tool.run: the @tool decorator's class overrides run (no super())
    (
        crewai.tools.base_tool.Tool,
        Hook("", "run", _tools.wrap_run, SUPPORTED, "crewai/tools/base_tool.py:532 Tool.run"),
    ),
    # crewai/tools/structured_tool.py:424 CrewStructuredTool.invoke: text (ReAct) tool calling's call
    # (crewai/tools/tool_usage.py:622), which runs the tool's _run, not run
    (
        crewai.tools.structured_tool.CrewStructuredTool,
        Hook(
            "",
            "invoke",
            _tools.wrap_invoke,
            SUPPORTED,
            "crewai/tools/structured_tool.py:424 CrewStructuredTool.invoke",
        ),
    ),
)

# The one state of the process: the patches and the session the wrappers report to (None: the
# default client at each call). The latest `instrument_crewai(session=...)` sets it.
PATCH = ProcessPatch(
    HOOKS, moved=hook_moved("crewai", "graphmind-crewai", __version__, SUPPORTED, what="crew kickoff")
)
