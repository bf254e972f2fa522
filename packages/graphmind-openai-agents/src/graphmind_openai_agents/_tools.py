"""Each function tool call: one gated `tool:<name>` node.

The run loop invokes every function tool through one module function,
`_invoke_function_tool_with_metadata(function_tool=, context=, arguments=)`
(agents/run_internal/tool_execution.py:2091, imported there at :86; defined at agents/tool.py:2278),
which awaits `function_tool.on_invoke_tool(ctx, arguments)` (agents/tool.py:2289) under the tool's
timeout. The row replaces that name in `tool_execution`'s namespace: every function tool of every
agent, `agent.as_tool()` included, passes it; what it returns (`_FunctionToolInvocationResult`,
agents/tool.py:2271) is what an injected result becomes.

A tool made with `@function_tool` catches its own errors: its invoker
(`_FailureHandlingFunctionToolInvoker.__call__`, agents/tool.py:697) turns an exception into the
message the model sees (`failure_error_function`). So that the error gate sees the exception
itself, the invoker row lets it through while our node runs (`_RAW`), and when the gate answers
continue, the tool is invoked once more with its body replaced by raising that very exception: the
SDK's own handler then does exactly what it would have done (the message to the model, or the
exception re-raised when `failure_error_function=None`), and the tool's body does not run again.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
from collections.abc import Callable
from typing import Any

from agents.tool import _FailureHandlingFunctionToolInvoker, _FunctionToolInvocationResult

from graphmind.adapter import NodeSpec, Patches, json_scalar, owned_copy

from . import _describe, _edit


class _Failure:
    """One gated tool call's raw mode: the exception its body raised; the one to hand the SDK's handler.
    (Class defaults, no `__init__`: one made per gated tool call.)"""

    error: BaseException | None = None
    handled: BaseException | None = None


_RAW: contextvars.ContextVar[_Failure | None] = contextvars.ContextVar("graphmind_agents_raw", default=None)


def _injected_result(value: Any) -> Any:
    # What on_invoke_tool returned: the SDK sends the model str() of it (a dict as Python's repr),
    # exactly as for a tool that returned this value.
    return _FunctionToolInvocationResult(value)


def _describe_result(result: Any) -> Any:
    return _describe.tool_output(getattr(result, "output", result))


def tool_function(function_tool: Any) -> Callable[..., Any] | None:
    """The Python function a function tool runs, for reload (`NodeSpec.function`): the one
    `@function_tool` was given, which its invoker keeps (`_get_wrapped_callable`,
    agents/tool.py:671, set at :2868 in `function_tool`), else an `on_invoke_tool` that is itself a
    function (a `FunctionTool` built by hand). None: `agent.as_tool()` and the like (the gate says
    reload is not offered, and why)."""
    invoker = getattr(function_tool, "on_invoke_tool", None)
    getter = getattr(invoker, "_get_wrapped_callable", None)
    found = getter() if callable(getter) else None
    if inspect.isfunction(found) or inspect.ismethod(found):
        return found
    return invoker if inspect.isfunction(invoker) or inspect.ismethod(invoker) else None


def wrap_invoke(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def invoke(*, function_tool: Any, context: Any, arguments: str, **kwargs: Any) -> Any:
        engine = state.engine()  # per call: graphmind.configure() may replace the default client
        if not engine.live:
            return await original(function_tool=function_tool, context=context, arguments=arguments, **kwargs)
        name = str(getattr(function_tool, "name", "tool"))
        call_id = getattr(context, "tool_call_id", None)
        if not isinstance(call_id, str):
            call_id = None
        # json.loads built the arguments, but a nested value's leaves still need their check:
        # core's owned_copy does both (docs/adapters.md, "Owned payloads"); anything it does not
        # take (a NaN, a lone surrogate) is recorded as parsed, through the pipeline's full pass.
        node_input, owned = owned_copy(_describe.tool_input(arguments))
        spec = NodeSpec(
            name,
            "tool",
            node_input,
            attrs={"framework": "openai-agents", "callId": call_id},
            owned=owned and json_scalar(call_id),
            function=tool_function(function_tool),
        )
        raw = isinstance(function_tool.on_invoke_tool, _FailureHandlingFunctionToolInvoker)
        failure = _Failure()

        current = [arguments]  # the arguments the body runs with: an edit changes them

        async def run(args: str) -> Any:
            current[0] = args
            failure.error = None
            token = _RAW.set(failure if raw else None)
            try:
                return await original(function_tool=function_tool, context=context, arguments=args, **kwargs)
            finally:
                _RAW.reset(token)

        def real() -> Any:
            return run(arguments)

        spec.edit = _edit.tool_edit(run)

        try:
            return await engine.aexecute(
                spec, real, describe_output=_describe_result, from_injected=_injected_result
            )
        except Exception as exc:
            if not raw or failure.error is not exc:
                raise
            # Continue at the error gate: the SDK's own failure handling of that very exception.
            failure.handled = exc
            token = _RAW.set(failure)
            try:
                return await original(
                    function_tool=function_tool, context=context, arguments=current[0], **kwargs
                )
            finally:
                _RAW.reset(token)

    invoke.__wrapped__ = original  # type: ignore[attr-defined]
    return invoke


def wrap_invoker_call(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def __call__(self: Any, ctx: Any, input: str) -> Any:
        failure = _RAW.get()
        if failure is None:
            return await original(self, ctx, input)
        token = _RAW.set(None)  # the tool's body (a nested agent run) sees no raw mode of ours
        try:
            handled = failure.handled
            if handled is not None:
                raising = copy.copy(self)
                raising._invoke_tool_impl = _raise(handled)
                return await original(raising, ctx, input)
            try:
                return await self._invoke_tool_impl(ctx, input)
            except Exception as exc:
                failure.error = exc
                raise
        finally:
            _RAW.reset(token)

    __call__.__wrapped__ = original  # type: ignore[attr-defined]
    return __call__


def _raise(exc: BaseException) -> Callable[..., Any]:
    async def body(_ctx: Any, _input: str) -> Any:
        raise exc

    return body


# ---- handoffs (_handoffs.py) and guardrails --------------------------------------------------------


def _guardrail_output(result: Any) -> Any:
    output = getattr(result, "output", None)
    info = getattr(output, "output_info", None)
    return {
        "tripwireTriggered": bool(getattr(output, "tripwire_triggered", False)),
        "info": _describe.tool_output(info),
    }


def _wrap_guardrail(kind: str) -> Callable[[Callable[..., Any], Patches], Callable[..., Any]]:
    def wrap(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
        async def run_guardrail(*args: Any, **kwargs: Any) -> Any:
            engine = state.engine()
            if not engine.live:
                return await original(*args, **kwargs)
            # run_single_input_guardrail(agent, guardrail, ...) / run_single_output_guardrail(guardrail, agent, ...)
            position = 1 if kind == "input" else 0
            guardrail = kwargs.get("guardrail") or (args[position] if len(args) > position else None)
            name = str(guardrail.get_name()) if guardrail is not None else kind
            spec = NodeSpec(
                name,
                "custom",
                {"guardrail": kind},
                node_id=f"guardrail:{name}",
                attrs={"framework": "openai-agents", "guardrail": kind},
            )
            try:
                result = await original(*args, **kwargs)
            except Exception as exc:
                engine.observe_ungated(spec, None, error=exc)
                raise
            engine.observe_ungated(spec, _guardrail_output(result))
            return result

        run_guardrail.__wrapped__ = original  # type: ignore[attr-defined]
        return run_guardrail

    return wrap


wrap_input_guardrail = _wrap_guardrail("input")
wrap_output_guardrail = _wrap_guardrail("output")
