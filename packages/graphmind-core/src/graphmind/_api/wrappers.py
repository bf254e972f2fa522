"""Gated callables: `tool`, `wrap`, `wrap_tools`, `wrap_method` (and their undo).

Each gives a `tool:<name>` node whose input is the call's bound arguments as a dict. Sync functions
stay sync, coroutine functions stay async, generator and async-generator functions stay generators
and stream (_api/stream_tools.py). Wrapping twice returns the first wrapper; `unwrap` and
`unwrap_method` give the original back. A disabled client returns the very object it was given.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .._hub.code_holds import BreakpointArg, CodeHolds, Condition
from .._node.spec import NodeSpec
from .stream_tools import gate_async_generator, gate_generator

if TYPE_CHECKING:
    from .._node.engine import Engine

F = TypeVar("F", bound=Callable[..., Any])
ToolsT = TypeVar("ToolsT")

WRAPPED_ATTR = "__graphmind_wrapped__"


def unwrap(fn: Any) -> Any:
    """The original callable behind a GraphMind wrapper (or `fn` itself)."""
    return getattr(fn, WRAPPED_ATTR, fn)


def _tool_name(fn: Any) -> str:
    name = getattr(fn, "__name__", None) or getattr(fn, "name", None)
    return name if isinstance(name, str) and name else type(fn).__name__


class _ArgDescriber:
    """Turns (args, kwargs) into the input dict, binding positional arguments to their names."""

    __slots__ = ("_names", "_signature", "_simple", "defaults")

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            self._signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self._signature = None
        params = list(self._signature.parameters.values()) if self._signature else []
        self._simple = all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)
        self._names = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        # What a hold_if condition sees besides the arguments passed: the defaults of the others.
        self.defaults = {
            p.name: p.default
            for p in params
            if p.default is not p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if not args:
            return dict(kwargs)
        if self._simple and len(args) <= len(self._names):
            described = dict(zip(self._names, args, strict=False))
            if kwargs:
                described.update(kwargs)
            return described
        if self._signature is not None:
            try:
                bound = self._signature.bind_partial(*args, **kwargs)
            except TypeError:
                pass
            else:
                described = {}
                for name, value in bound.arguments.items():
                    if self._signature.parameters[name].kind == inspect.Parameter.VAR_KEYWORD:
                        described.update(value)
                    elif self._signature.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
                        described[name] = list(value)
                    else:
                        described[name] = value
                return described
        return {"args": list(args), **kwargs}


def gate_callable(engine: Engine, fn: F, name: str, kind: str = "tool", holds: CodeHolds | None = None) -> F:
    """The one place a plain callable becomes a gated one."""
    describe = _ArgDescriber(fn)
    node_id = f"{kind}:{name}"
    gates = holds.gates if holds is not None else frozenset()
    hold_if = holds.hold_if if holds is not None else None
    if hold_if is not None and describe.defaults:
        condition, defaults = hold_if, describe.defaults

        def hold_if(**arguments: Any) -> Any:  # the bound arguments, defaults applied
            return condition(**{**defaults, **arguments})

    if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
        # A streaming tool (_api/stream_tools.py), decided here once: a plain call never pays for it.
        def spec_for(args: tuple[Any, ...], kwargs: dict[str, Any]) -> NodeSpec:
            return NodeSpec(name, kind, describe(args, kwargs), node_id, breakpoints=gates, hold_if=hold_if)

        streams = gate_async_generator if inspect.isasyncgenfunction(fn) else gate_generator
        gated: Any = streams(engine, fn, spec_for)
    elif inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def agated(*args: Any, **kwargs: Any) -> Any:
            # A client disposed since: aexecute calls `fn` straight through (no liveness check here,
            # it would be a second one per call).
            spec = NodeSpec(name, kind, describe(args, kwargs), node_id, breakpoints=gates, hold_if=hold_if)
            return await engine.aexecute(spec, lambda: fn(*args, **kwargs))

        gated = agated
    else:

        @functools.wraps(fn)
        def sgated(*args: Any, **kwargs: Any) -> Any:
            spec = NodeSpec(name, kind, describe(args, kwargs), node_id, breakpoints=gates, hold_if=hold_if)
            return engine.execute(spec, lambda: fn(*args, **kwargs))

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
