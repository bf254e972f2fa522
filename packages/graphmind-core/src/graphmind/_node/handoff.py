"""A handoff (or delegation) from one agent to another as one gated node, `handoff:<from>-><to>`
(docs/protocol.md, "Agents"), for every adapter that has agents.

Its input is what is handed over (the conversation or the task the target gets). At its before
gate: continue (the target gets the input, or the edit of it a person made), inject (answer as the
target without running it: the adapter goes on as if the target had returned that value), abort.
An adapter either runs the target itself after the gate (`call=None`: the node ends at once, its
output the input the target gets) or hands the target's run over as `call(input)`: the node then
spans the target's run, inside the target's agent scope, and its output is what the target returned.
The decision is the gate engine's (decide.py); this module only reads `injected` afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._runs.agents import HANDOFF_KIND, agent_scope, checked_name, handoff_node_id
from .spec import NodeSpec

if TYPE_CHECKING:
    from .engine import Engine, NodeExecution


@dataclass(frozen=True, slots=True)
class Handoff:
    """What a handoff's gate decided. `input`: what the target agent gets (a person's edit, if one
    was made). `injected`: a person answered as the target: do not run it; `output` is the answer
    (the adapter's `from_injected` conversion of it). Otherwise `output` is the target's result when
    the adapter passed `call`, else `input` again. `edited`: `input` is a person's edit (JSON), not
    the value the adapter handed over (which it may keep in the framework's own types)."""

    input: Any
    injected: bool
    output: Any
    edited: bool = False


class _Passed:
    """The body of a handoff without `call`: the input the target gets, passed through the gate."""

    __slots__ = ("input",)

    def __init__(self, value: Any) -> None:
        self.input = value


def _identity(value: Any) -> Any:
    return value


def _output(result: Any) -> Any:
    return result.input if isinstance(result, _Passed) else result


def _spec(source: str, target: str, handed: Any, attrs: dict[str, Any] | None) -> NodeSpec:
    checked_name(source)
    checked_name(target)
    return NodeSpec(
        f"{source}->{target}",
        HANDOFF_KIND,
        handed,
        node_id=handoff_node_id(source, target),
        attrs={**(attrs or {}), "from": source, "to": target},
    )


def _decided(node: NodeExecution, result: Any, current: list[Any], handed: Any) -> Handoff:
    edited = current[0] is not handed
    if node.injected:
        return Handoff(current[0], True, result, edited)
    return Handoff(current[0], False, _output(result), edited)


def handoff(
    engine: Engine,
    source: str,
    target: str,
    handed: Any,
    *,
    call: Callable[[Any], Any] | None = None,
    from_injected: Callable[[Any], Any] = _identity,
    attrs: dict[str, Any] | None = None,
) -> Handoff:
    """Runs the handoff from `source` to `target` through the gate engine, from sync code.

    `handed`: the handed-over input as JSON (what the gate shows and a person may edit). `call`:
    runs the target with the (possibly edited) input and returns its result, or None when the
    adapter runs the target itself once this returns. `from_injected`: an injected JSON value as the
    framework's own type. Raises RunAborted at an abort. Disabled or disposed: passes straight on."""
    if not engine.live:
        return Handoff(handed, False, call(handed) if call is not None else handed)
    current = [handed]

    def body(value: Any) -> Any:
        current[0] = value
        if call is None:
            return _Passed(value)
        with agent_scope(source), agent_scope(target):  # the target's path goes through the source
            return call(value)

    spec = _spec(source, target, handed, attrs)
    spec.edit = lambda edited: lambda: body(edited)
    with agent_scope(source):  # the handoff is the source agent's act
        node = engine.start_node(spec)
    result = node.run_sync(lambda: body(handed), _output, from_injected)
    return _decided(node, result, current, handed)


async def ahandoff(
    engine: Engine,
    source: str,
    target: str,
    handed: Any,
    *,
    call: Callable[[Any], Awaitable[Any]] | None = None,
    from_injected: Callable[[Any], Any] = _identity,
    attrs: dict[str, Any] | None = None,
) -> Handoff:
    """`handoff` from async code: a hold awaits; `call` is a coroutine function."""
    if not engine.live:
        return Handoff(handed, False, await call(handed) if call is not None else handed)
    current = [handed]

    async def body(value: Any) -> Any:
        current[0] = value
        if call is None:
            return _Passed(value)
        with agent_scope(source), agent_scope(target):
            return await call(value)

    spec = _spec(source, target, handed, attrs)
    spec.edit = lambda edited: lambda: body(edited)
    with agent_scope(source):
        node = await engine.astart_node(spec)
    result = await node.run_async(lambda: body(handed), _output, from_injected)
    return _decided(node, result, current, handed)
