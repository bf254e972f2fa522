"""The tool side: every tool execution is one `tool:<name>` node with the model's `toolUseId` as its
instance, a Wrap handler of Strands' `ExecuteToolStage` (strands/middleware/stages.py:283).

Strands' tool terminal turns a tool's exception into an error `ToolResultEvent` that carries it
(strands/tools/executors/_executor.py:687), so the model sees `Error: ...` and the agent goes on. The
node raises that very exception inside the gate engine, so the error gate holds on it: retry runs the
tool again (`next_fn` once more), inject answers with a result, and continue hands Strands the
error result it made, as without GraphMind. A tool interrupt (`ToolInterruptEvent`, or
`InterruptException` from a middleware) is Strands' own flow: the node ends and the interrupt goes
on untouched. A tool's stream events (`ToolStreamEvent`) are passed on when the node ends, after
its gates.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from strands.interrupt import InterruptException
from strands.types._events import ToolInterruptEvent
from strands.types.events import ToolResultEvent

from graphmind import ReplayedError
from graphmind.adapter import Engine, NodeSpec

from . import _describe, _edit, _inject


@dataclass
class _Halt:
    """The tool stopped for an interrupt: the event to pass on, or the exception to raise again."""

    event: Any = None
    exc: BaseException | None = None


def _describe_output(result: Any) -> Any:
    if isinstance(result, _Halt):
        return {"interrupted": True}
    return _describe.tool_output(result.tool_result)


def _function(tool: Any) -> Callable[..., Any] | None:
    """The Python function behind a `@tool` (`DecoratedFunctionTool._tool_func`,
    strands/tools/decorator.py), for reload; None for other tools."""
    fn = getattr(tool, "_tool_func", None)
    return fn if callable(fn) else None


async def gate_tool(
    engine: Engine, ctx: Any, next_fn: Callable[[Any], AsyncGenerator[Any, None]]
) -> AsyncGenerator[Any, None]:
    """One tool execution as a gated `tool:<name>` node; yields what the execution yields."""
    tool_use = ctx.tool_use
    name, use_id = str(tool_use.get("name")), str(tool_use.get("toolUseId"))
    passed: list[Any] = []  # the last attempt's events besides its result
    failed: dict[int, ToolResultEvent] = {}  # an attempt's exception -> the error result it came in

    async def run(context: Any = ctx) -> Any:
        passed.clear()
        result: ToolResultEvent | None = None
        events = next_fn(context)
        try:
            async for event in events:
                if isinstance(event, ToolResultEvent):
                    result = event
                elif isinstance(event, ToolInterruptEvent):
                    return _Halt(event=event)
                else:
                    passed.append(event)
        except InterruptException as exc:
            return _Halt(exc=exc)
        finally:
            await events.aclose()  # the chain's own cleanup (the tool's span and metrics) runs now
        if result is None:  # the chain yielded no result: Strands says so itself (_executor.py:349)
            return _Halt()
        if result.exception is not None:
            failed[id(result.exception)] = result
            raise result.exception
        return result

    def edit(value: Any) -> Callable[[], Any]:  # an edited input: the same execution, other arguments
        edited = ctx.replace(tool_use={**tool_use, "input": _edit.tool_input(value)})
        return lambda: run(edited)

    spec = engine.spec_or_none(
        "tool",
        name,
        lambda: NodeSpec(
            name,
            "tool",
            _describe.json_value(tool_use.get("input")),
            instance_id=use_id,
            attrs={"framework": "strands"},
            edit=edit,
            function=_function(ctx.tool),  # reload: core puts the new code into it
        ),
    )
    if spec is None:
        async for event in next_fn(ctx):
            yield event
        return
    ex = await engine.astart_node(spec)
    try:
        result = await ex.run_async(run, _describe_output, lambda value: _inject.tool_result(value, use_id))
    except ReplayedError as exc:  # a recorded error, replayed: the error result Strands made of it
        result = _inject.replayed_error(exc, use_id, decorated=_function(ctx.tool) is not None)
    except Exception as exc:
        held = failed.get(id(exc))
        if held is None:
            raise
        result = held  # continue at the error gate: the error result Strands made, as without GraphMind
    for event in passed:
        yield event
    if isinstance(result, _Halt):
        if result.exc is not None:
            raise result.exc
        if result.event is not None:
            yield result.event
        return
    yield result
