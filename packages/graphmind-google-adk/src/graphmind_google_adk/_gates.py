"""The after and error gates of one call seen through ADK's callbacks, for model and tool calls alike.

ADK calls the body itself and tells the plugin only before, after and on error, so what the engine
decides at a gate (graphmind's one gate engine) is carried out here with ADK's own means: an inject
is the value the callback returns (ADK uses a non-None return instead of the call's), a retry runs the
call again through `Call.rerun` (the same model with the same `LlmRequest`, the same tool with the
same args) and passes the new result through the gates again; continue at the error gate returns
None, so ADK raises its own exception object.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphmind import protocol as proto
from graphmind.adapter import NodeExecution, Owned, RunAborted

from ._hooks import passes


@dataclass(eq=False, slots=True)
class Call:
    """One open call: its node and what its gates need of the framework."""

    ex: NodeExecution
    # result -> (output, usage); an `Owned` tuple when the describer built both of plain leaves
    describe: Callable[[Any], tuple[Any, dict[str, Any] | None]]
    convert: Callable[[Any], Any]  # injected JSON -> the framework's type (raises on a bad shape)
    rerun: Callable[[], Awaitable[Any]]  # the call again, for a retry


async def opened(call: Call) -> Any:
    """A call's node has just started (a before callback, model or tool): its before gate when one
    can matter, i.e. the injected value the callback returns, or None for ADK to make the call.
    Detached nothing can hold, so the gate is skipped; a replay answers at it, attached or not."""
    ex = call.ex
    if ex.may_hold() or ex.host.replay is not None:
        return await before(call)
    return None


async def before(call: Call) -> Any:
    """The before gate: the injected value the callback returns, or None for ADK to make the call
    (with an edited input put into ADK's own request or args first)."""
    ex = call.ex
    try:
        answer = await ex.abefore(call.convert)
    except RunAborted:
        raise
    except Exception as exc:  # a replay's recorded error or divergence: the app gets it as itself
        raise passes(exc) from None
    if answer.injects:
        ex.finish(answer.raw)
        return answer.value
    if answer.body is not None:  # continue with an edited input (the engine decided it: _edit.py)
        answer.body.apply()
    return None


async def after(call: Call, result: Any, replaced: bool = False) -> Any:
    """The after gate on `result`: what the callback returns (None: ADK keeps its own result)."""
    ex = call.ex
    while True:
        described = call.describe(result)
        output, usage = described
        if ex.gate_needed(proto.AFTER):
            answer = await ex.aafter(output, call.convert)
            if answer.retries:
                if answer.body is not None:  # retry with an edited input
                    call.rerun = answer.body
                try:
                    result = await call.rerun()
                except Exception as exc:
                    return await error(call, exc, reraise=True)
                replaced = True
                continue
            if answer.injects:
                ex.finish(answer.raw)
                return answer.value
        ex.finish(output, usage=usage, owned=type(described) is Owned)
        return result if replaced else None


async def error(call: Call, exc: BaseException, reraise: bool = False) -> Any:
    """The error gate on `exc`: a replacement result, or None for ADK to raise its own exception
    (`reraise`: the failure came from a retry this module ran, so it raises it itself)."""
    ex = call.ex
    while True:
        if isinstance(exc, Exception) and ex.gate_needed(proto.ERROR_GATE):
            answer = await ex.aerror(exc, call.convert)
            if answer.retries:
                if answer.body is not None:  # retry with an edited input
                    call.rerun = answer.body
                try:
                    result = await call.rerun()
                except Exception as again:
                    exc, reraise = again, True
                    continue
                return await after(call, result, replaced=True)
            if answer.injects:
                ex.finish(answer.raw)
                return answer.value
        ex.fail(exc)
        if reraise:
            raise passes(exc)
        return None
