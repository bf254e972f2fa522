"""Gated `call` / `acall` for one LlamaIndex tool instance.

Agents call tools through these two methods (llama_index/core/agent/workflow/base_agent.py,
BaseWorkflowAgent._call_tool: `await tool.acall(**tool_input)`; FunctionCallingLLM.predict_and_call
through llama_index/core/tools/calling.py, `tool.call(...)` / `tool.acall(...)`). The instance
attribute shadows the class's method, which the dispatcher wraps in a span
(llama_index_instrumentation/__init__.py, DispatcherSpanMixin): the real call still opens that span,
inside the gated node.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from graphmind.adapter import Engine, NodeSpec, RunContext

from . import _links as links
from ._describe import tool_output_json
from ._edit import edited_tool_kwargs
from ._inject import tool_output_converter
from ._nodes import tool_spec
from ._team import scoped


def _context(engine: Engine) -> tuple[RunContext | None, str | None]:
    run, parent = links.current_context()
    return (run if run is not None else engine.current_run()), parent


def _spec(tool: Any, args: tuple[Any, ...], kwargs: dict[str, Any], run: RunContext | None) -> NodeSpec:
    spec = tool_spec(tool, args, kwargs, run, gated=True)
    spec.hold_timeout = links.current_timeout()  # the workflow's timeout runs during a hold
    return spec


def gated_call(engine_of: Callable[[], Engine], tool: Any, orig: Callable[..., Any]) -> Callable[..., Any]:
    convert = tool_output_converter(tool)

    @functools.wraps(orig)
    def call(*args: Any, **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(tool):
            return orig(*args, **kwargs)
        run, parent = _context(engine)
        with scoped(links.current_agents()):
            ex = engine.start_node(_spec(tool, args, kwargs, run), run=run, parent_instance_id=parent)
        mark = links.Inside(tool, ex)

        def calling(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
            def body() -> Any:
                token = links.inside.set(mark)
                try:
                    return orig(*args, **kwargs)
                finally:
                    links.inside.reset(token)

            return body

        ex.spec.edit = lambda value: calling(*edited_tool_kwargs(value, tool, kwargs))
        return ex.run_sync(calling(args, kwargs), tool_output_json, convert)

    return call


def gated_acall(engine_of: Callable[[], Engine], tool: Any, orig: Callable[..., Any]) -> Callable[..., Any]:
    convert = tool_output_converter(tool)

    @functools.wraps(orig)
    async def acall(*args: Any, **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(tool):
            return await orig(*args, **kwargs)
        run, parent = _context(engine)
        with scoped(links.current_agents()):
            ex = await engine.astart_node(_spec(tool, args, kwargs, run), run=run, parent_instance_id=parent)
        mark = links.Inside(tool, ex)

        def calling(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
            async def body() -> Any:
                # A sync tool's acall may run `call` in a thread with a copy of this context: the
                # mark makes that nested call pass through instead of gating the same call twice.
                token = links.inside.set(mark)
                try:
                    return await orig(*args, **kwargs)
                finally:
                    links.inside.reset(token)

            return body

        ex.spec.edit = lambda value: calling(*edited_tool_kwargs(value, tool, kwargs))
        return await ex.run_async(calling(args, kwargs), tool_output_json, convert)

    return acall
