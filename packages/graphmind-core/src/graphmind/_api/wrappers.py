"""Gated callables: `tool`, `wrap`, `wrap_tools`, `wrap_method` (and their undo).

Each gives a `tool:<name>` node whose input is the call's bound arguments as a dict. Sync functions
stay sync, coroutine functions stay async, generator and async-generator functions stay generators
and stream (_api/stream_tools.py). Wrapping twice returns the first wrapper; `unwrap` and
`unwrap_method` give the original back. A disabled client returns the very object it was given.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .._events.jsonsafe import json_scalars
from .._events.payload import flat_scalar_chars
from .._hub.code_holds import BreakpointArg, CodeHolds, Condition
from .._node.spec import NodeSpec
from .call_target import WRAPPED_ATTR, CallTarget, reload_problem
from .stream_tools import gate_async_generator, gate_generator

if TYPE_CHECKING:
    from .._node.engine import Engine

F = TypeVar("F", bound=Callable[..., Any])
ToolsT = TypeVar("ToolsT")
__all__ = ["WRAPPED_ATTR", "gate_callable", "unwrap", "unwrap_method", "wrap", "wrap_method", "wrap_tools"]


def unwrap(fn: Any) -> Any:
    """The original callable behind a GraphMind wrapper (or `fn` itself)."""
    return getattr(fn, WRAPPED_ATTR, fn)


def _tool_name(fn: Any) -> str:
    name = getattr(fn, "__name__", None) or getattr(fn, "name", None)
    return name if isinstance(name, str) and name else type(fn).__name__


def _output_schema(fn: Callable[..., Any]) -> Any:
    """The JSON Schema of a pydantic model `fn` says it returns (the inject box's skeleton), or None."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:
        return None
    try:
        returns = typing.get_type_hints(fn).get("return")
        if isinstance(returns, type) and issubclass(returns, pydantic.BaseModel):
            return returns.model_json_schema()  # type: ignore[attr-defined]
    except Exception:  # an annotation that does not resolve: no skeleton
        pass
    return None


def gate_callable(engine: Engine, fn: F, name: str, kind: str = "tool", holds: CodeHolds | None = None) -> F:
    """The one place a plain callable becomes a gated one. Its calls can be edited and reloaded
    (`CallTarget`): the wrapper reads the target's function at each call."""
    target = CallTarget(fn)
    node_id = f"{kind}:{name}"
    gates = holds.gates if holds is not None else frozenset()
    hold_if = holds.hold_if if holds is not None else None
    if hold_if is not None and target.describe.defaults:
        condition, defaults = hold_if, target.describe.defaults

        def hold_if(**arguments: Any) -> Any:  # the bound arguments, defaults applied
            return condition(**{**defaults, **arguments})

    # Reload is offered where it can work: a function a module defines at its top level.
    reload = target.reload if reload_problem(fn) is None else None
    unreloadable = fn if reload is None else None  # the gate says why (notReloadable)
    edit, schema = target.edit, _output_schema(fn)

    def spec_for(args: tuple[Any, ...], kwargs: dict[str, Any]) -> NodeSpec:
        described = target.describe(args, kwargs)
        # The describer's fresh dict, of the call's arguments (a keyword's name an ASCII str): when
        # each one is a short JSON scalar (the common tool call), one pass measures it, the node
        # owns it, the pipeline neither copies nor visits it and the loop guard keeps it as it is.
        keys_ok = not kwargs or json_scalars(kwargs)
        chars = flat_scalar_chars(described) if keys_ok else None
        return NodeSpec(
            name,
            kind,
            described,
            node_id,
            breakpoints=gates,
            hold_if=hold_if,
            owned=chars is not None or (keys_ok and json_scalars(described.values())),
            input_chars=chars,
            edit=edit,
            reload=reload,
            function=unreloadable,
            output_schema=schema,
        )

    if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
        # A streaming tool (_api/stream_tools.py), decided here once: a plain call never pays for it.
        streams = gate_async_generator if inspect.isasyncgenfunction(fn) else gate_generator
        gated: Any = streams(engine, target, spec_for)
    elif inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def agated(*args: Any, **kwargs: Any) -> Any:
            # A client disposed since: aexecute calls `fn` straight through (no liveness check here,
            # it would be a second one per call).
            return await engine.aexecute(spec_for(args, kwargs), lambda: target.fn(*args, **kwargs))

        gated = agated
    else:

        @functools.wraps(fn)
        def sgated(*args: Any, **kwargs: Any) -> Any:
            return engine.execute(spec_for(args, kwargs), lambda: target.fn(*args, **kwargs))

        gated = sgated
    setattr(gated, WRAPPED_ATTR, fn)
    gated.__graphmind_node__ = node_id
    return gated  # type: ignore[no-any-return]


def wrap(
    engine: Engine,
    fn: F,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
) -> F:
    """A gated version of `fn`, producing a `tool:<name>` node per call (holds: _hub/code_holds.py)."""
    # The seed: a disabled session is a no-op, so a bad value is an error only when enabled.
    if not engine.enabled:
        return fn
    holds = CodeHolds.of(breakpoint, hold_if)
    if hasattr(fn, WRAPPED_ATTR):
        return fn
    if not callable(fn):
        raise TypeError(f"graphmind: wrap() takes a callable, got {type(fn).__name__}")
    return gate_callable(engine, fn, name or _tool_name(fn), holds=holds)


def wrap_tools(
    engine: Engine, tools: ToolsT, *, breakpoint: BreakpointArg = None, hold_if: Condition | None = None
) -> ToolsT:
    """Wraps a `{name: callable}` dict (keys name the nodes), a list, or one callable; same shape back.
    `breakpoint` / `hold_if` apply to each tool."""
    if not engine.enabled:
        return tools
    CodeHolds.of(breakpoint, hold_if)
    holds: dict[str, Any] = {"breakpoint": breakpoint, "hold_if": hold_if}
    if isinstance(tools, Mapping):
        return {key: wrap(engine, fn, str(key), **holds) for key, fn in tools.items()}  # type: ignore[return-value]
    if isinstance(tools, (list, tuple)):
        return type(tools)(wrap(engine, fn, **holds) for fn in tools)
    if callable(tools):
        return wrap(engine, tools, **holds)
    raise TypeError(f"graphmind: wrap_tools() takes a dict, a list or a callable, got {type(tools).__name__}")


def wrap_method(
    engine: Engine,
    obj: Any,
    method_name: str,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
) -> Any:
    """Gates one method of one object, in place (other instances are untouched). Returns `obj`."""
    if not engine.enabled:
        return obj
    CodeHolds.of(breakpoint, hold_if)
    current = getattr(obj, method_name)
    if hasattr(current, WRAPPED_ATTR):
        return obj
    gated = wrap(engine, current, name or method_name, breakpoint=breakpoint, hold_if=hold_if)
    gated.__graphmind_own_attr__ = method_name in getattr(obj, "__dict__", {})
    try:
        setattr(obj, method_name, gated)
    except (AttributeError, TypeError, ValueError):
        # pydantic models and frozen dataclasses refuse setattr; the instance dict still takes it.
        object.__setattr__(obj, method_name, gated)
    return obj


def unwrap_method(obj: Any, method_name: str) -> Any:
    """Undoes `wrap_method`. Returns `obj`."""
    current = getattr(obj, method_name, None)
    if current is None or not hasattr(current, WRAPPED_ATTR):
        return obj
    if getattr(current, "__graphmind_own_attr__", False):
        object.__setattr__(obj, method_name, getattr(current, WRAPPED_ATTR))
    else:
        try:
            delattr(obj, method_name)
        except (AttributeError, TypeError):
            object.__delattr__(obj, method_name)
    return obj
