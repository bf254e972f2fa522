"""One `ClientSession.call_tool` as one `tool:<name>` node, through core's gate engine.

```
node.started ─► before ─► call_tool (the real request) ─► after ─► node.finished
                  │ inject: a CallToolResult built from the value; the server is not called
                  └─ error gate: the SDK raised (a protocol error, a timeout), or the result has isError
                     continue: the app gets what it would have had (the same isError result, or the exception)
```

MCP reports a tool's own failure as a result (`isError: true`), not as an exception. The body turns
such a result into `ToolResultError` so the engine's error gate (and pause-on-error) sees it; when
the gate continues, the app gets the very result back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any

from graphmind.adapter import Engine, NodeSpec, RunContext, Settled

from ._result import describe_result, error_text, is_error, to_result
from ._rounds import Rounds

if (
    TYPE_CHECKING
):  # the proxy never imports mcp's models unless a value is injected (they take seconds to import)
    from mcp.types import CallToolResult


class ToolResultError(Exception):
    """A tool answered `isError: true`. Carries the result so `continue` hands the app that result
    (the SDK's `CallToolResult`, or under graphmind mcp-proxy its wire form)."""

    def __init__(self, name: str, result: Any, hidden: bool) -> None:
        if hidden:
            message = f"tool {name} failed (isError: true); its content is hidden (GRAPHMIND_HIDE_TOOL_RESULTS / GRAPHMIND_HIDE_OUTPUTS)"
        else:
            message = f"tool {name} failed (isError: true): {error_text(result)}"
        super().__init__(message)
        self.result = result


class ToolCall:
    """The body, the description and the inject converter of one call, for `NodeExecution.run_async`."""

    __slots__ = (
        "args",
        "arguments",
        "effect",
        "hidden",
        "kwargs",
        "name",
        "original",
        "output_schema",
        "validate",
    )

    def __init__(
        self,
        original: Callable[..., Awaitable[Any]],
        validate: Callable[[str, CallToolResult], Awaitable[None]],
        name: str,
        arguments: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        hidden: bool,
    ) -> None:
        self.original = original
        self.validate = validate
        self.name = name
        self.arguments = arguments
        self.args = args
        self.kwargs = kwargs
        self.hidden = hidden
        self.output_schema: Any = None  # the tool's outputSchema where known: the inject box's skeleton
        self.effect: Any = None  # its class from its annotations (_effects.py), where known

    async def body(self) -> Any:
        result = await self.original(self.name, self.arguments, *self.args, **self.kwargs)
        if is_error(result):
            raise ToolResultError(self.name, result, self.hidden)
        return result

    def edit(self, value: Any) -> Callable[[], Awaitable[Any]]:
        """The body with edited `arguments` (the node's input is the arguments object; the one JSON ->
        call conversion of this adapter, in the app and under mcp-proxy alike)."""
        if not isinstance(value, dict):
            raise ValueError(f"MCP tool arguments are an object, not {type(value).__name__}")

        async def edited() -> Any:
            self.arguments = value
            return await self.body()

        return edited

    async def from_injected(self, value: Any) -> Settled:
        """Builds the result and checks it against the tool's `outputSchema` (the session's own
        validator, `ClientSession.validate_tool_result`): a mismatch raises, and the engine holds the
        gate again with the reason, so a host never receives a result it would reject."""
        result = to_result(value)
        if not result.is_error:
            await self.validate(self.name, result)
        return Settled(result, describe_result(result))


def spec_for(call: ToolCall, server: str | None) -> NodeSpec:
    # MCP's per-request `_meta` is not part of the input: the loop guard compares arguments only.
    return NodeSpec(
        name=call.name,
        kind="tool",
        input=call.arguments if call.arguments is not None else {},
        attrs={"mcp": server} if server else None,
        edit=call.edit,
        output_schema=call.output_schema,
        effects=call.effect,
    )


async def call_tool_node(
    engine: Engine,
    call: ToolCall,
    server: str | None,
    run: RunContext | None,
    *,
    rounds: Rounds | None = None,
    line: Hashable | None = None,
) -> Any:
    """`rounds`: the call is an app-level `Client.call_tool`; its rounds are written into this node.
    `line`: the loop streak of a call outside any run (the session's; default the task's)."""
    ex = await engine.astart_node(spec_for(call, server), run=run, line=line)
    if rounds is not None:
        rounds.node = ex
    try:
        return await ex.run_async(call.body, describe_result, call.from_injected)
    except ToolResultError as exc:
        return exc.result  # the error gate continued: the app gets the isError result it would have had
    except BaseException as exc:
        if not ex.ended:  # cancelled (the host or the app gave up on the call): the node still ends
            ex.fail(exc)
        raise
