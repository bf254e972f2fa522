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
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar

from .._base.names import readable_name
from .._effects.classify import NO_STUB as _NO_STUB
from .._effects.classify import explicit
from .._events.jsonsafe import json_scalars
from .._events.payload import flat_scalar_chars
from .._hub.code_holds import BreakpointArg, CodeHolds, Condition
from .._node.spec import NodeSpec
from .call_target import WRAPPED_ATTR, CallTarget, reload_problem
from .stream_tools import gate_async_generator, gate_generator

if TYPE_CHECKING:
    from .._node.engine import Engine

F = TypeVar("F", bound=Callable[..., Any])
_GENERATORS = (types.GeneratorType, types.AsyncGeneratorType)
ToolsT = TypeVar("ToolsT")
__all__ = [
    "WRAPPED_ATTR",
    "EngineSource",
    "ToolOptions",
    "gate_callable",
    "tool",
    "unwrap",
    "unwrap_method",
    "wrap",
    "wrap_method",
    "wrap_tools",
]


class ToolOptions(TypedDict, total=False):
    """The keyword options of `tool` / `wrap` / `wrap_tools` / `wrap_method` (a Client's methods)."""

    breakpoint: BreakpointArg
    hold_if: Condition | None
    effects: str | None
    effects_stub: Any


class EngineSource(Protocol):
    """The default session (_api/default.py): the engine a call reports to, found when it happens."""

    @property
    def enabled(self) -> bool: ...

    def __call__(self) -> Engine: ...


if TYPE_CHECKING:
    # A given client's engine (fixed), or the default session (looked up at each call).
    EngineRef = Engine | EngineSource


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


def gate_callable(
    engine: EngineRef,
    fn: F,
    name: str,
    kind: str = "tool",
    holds: CodeHolds | None = None,
    effects: str | None = None,
    effects_stub: tuple[Any] | None = None,
) -> F:
    """The one place a plain callable becomes a gated one. Its calls can be edited and reloaded
    (`CallTarget`): the wrapper reads the target's function at each call. `engine`: a client's, or
    the default session, asked at each call (`bound or find()`: a given client pays one test)."""
    bound: Engine | None = None if callable(engine) else engine
    find: Callable[[], Engine] = engine if callable(engine) else _never
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
            effects=effects,
            effects_stub=effects_stub,
        )

    warned: list[bool] = []

    def returned(result: Any) -> Any:
        """The seed streams (or drains) a generator a plain function returns; here it reaches the
        caller untouched and unrecorded (docs/protocol.md), so the app is told once per tool."""
        if not warned and isinstance(result, _GENERATORS):
            warned.append(True)
            what = "a generator" if isinstance(result, types.GeneratorType) else "an async generator"
            (bound or find()).warn(
                f"[graphmind] {node_id} returned {what} from a plain function: the caller "
                "gets it untouched, but its items are neither streamed nor recorded; declare the function "
                "with `yield` to stream them"
            )
        return result

    if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
        # A streaming tool (_api/stream_tools.py), decided here once: a plain call never pays for it.
        streams = gate_async_generator if inspect.isasyncgenfunction(fn) else gate_generator
        gated: Any = streams((lambda: bound) if bound is not None else find, target, spec_for)
    elif inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def agated(*args: Any, **kwargs: Any) -> Any:
            # A client disposed since: aexecute calls `fn` straight through (no liveness check here,
            # it would be a second one per call).
            engine_now = bound or find()
            return returned(
                await engine_now.aexecute(spec_for(args, kwargs), lambda: target.fn(*args, **kwargs))
            )

        gated = agated
    else:

        @functools.wraps(fn)
        def sgated(*args: Any, **kwargs: Any) -> Any:
            return returned(
                (bound or find()).execute(spec_for(args, kwargs), lambda: target.fn(*args, **kwargs))
            )

        gated = sgated
    setattr(gated, WRAPPED_ATTR, fn)
    gated.__graphmind_node__ = node_id
    return gated  # type: ignore[no-any-return]


def _engine_of(engine: EngineRef) -> Engine:
    """A client's engine, or the default session's now (for a warning at decoration time)."""
    return engine() if callable(engine) else engine


def _never() -> Engine:
    raise AssertionError("a wrapper bound to a client never looks for the default one")


def wrap(
    engine: EngineRef,
    fn: F,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    effects: str | None = None,
    effects_stub: Any = _NO_STUB,
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
    fallback = _tool_name(fn)
    # the default session's client is found only if a warning is due (decorating builds no client)
    named = (
        fallback
        if name is None
        else readable_name(name, fallback, "tool", lambda *a, **k: _engine_of(engine).warn(*a, **k))
    )
    if effects is not None:
        explicit(effects)  # a bad class raises here, at the decorator line
    stub = None if effects_stub is _NO_STUB else (effects_stub,)
    return gate_callable(engine, fn, named or fallback, holds=holds, effects=effects, effects_stub=stub)


def tool(
    engine: EngineRef,
    name: Any = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    effects: str | None = None,
    effects_stub: Any = _NO_STUB,
) -> Any:
    """`@tool`, `@tool()`, `@tool("search")`, `@tool(breakpoint=...)`: `wrap` as a decorator."""
    if callable(name):
        return wrap(
            engine, name, breakpoint=breakpoint, hold_if=hold_if, effects=effects, effects_stub=effects_stub
        )
    if (
        engine.enabled
    ):  # disabled: a no-op (the seed); enabled: wrong at the decorator line, not the first call
        CodeHolds.of(breakpoint, hold_if)

    def decorate(fn: F) -> F:
        return wrap(
            engine,
            fn,
            name,
            breakpoint=breakpoint,
            hold_if=hold_if,
            effects=effects,
            effects_stub=effects_stub,
        )

    return decorate


def wrap_tools(
    engine: EngineRef,
    tools: ToolsT,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    effects: str | None = None,
    effects_stub: Any = _NO_STUB,
) -> ToolsT:
    """Wraps a `{name: callable}` dict (keys name the nodes), a list, or one callable; same shape back.
    `breakpoint` / `hold_if` apply to each tool."""
    if not engine.enabled:
        return tools
    CodeHolds.of(breakpoint, hold_if)
    holds: dict[str, Any] = {
        "breakpoint": breakpoint,
        "hold_if": hold_if,
        "effects": effects,
        "effects_stub": effects_stub,
    }
    if isinstance(tools, Mapping):
        return {key: wrap(engine, fn, key, **holds) for key, fn in tools.items()}  # type: ignore[return-value]
    if isinstance(tools, (list, tuple)):
        return type(tools)(wrap(engine, fn, **holds) for fn in tools)
    if callable(tools):
        return wrap(engine, tools, **holds)
    raise TypeError(f"graphmind: wrap_tools() takes a dict, a list or a callable, got {type(tools).__name__}")


def wrap_method(
    engine: EngineRef,
    obj: Any,
    method_name: str,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    effects: str | None = None,
    effects_stub: Any = _NO_STUB,
) -> Any:
    """Gates one method of one object, in place (other instances are untouched). Returns `obj`."""
    if not engine.enabled:
        return obj
    CodeHolds.of(breakpoint, hold_if)
    current = getattr(obj, method_name)
    if hasattr(current, WRAPPED_ATTR):
        return obj
    gated = wrap(
        engine,
        current,
        name or method_name,
        breakpoint=breakpoint,
        hold_if=hold_if,
        effects=effects,
        effects_stub=effects_stub,
    )
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
