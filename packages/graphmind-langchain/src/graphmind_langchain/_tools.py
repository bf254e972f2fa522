"""Gated `_run` / `_arun` for one LangChain tool instance.

LangChain decides what to pass by inspecting the instance's method
(langchain_core/tools/base.py, BaseTool.run: `_signature_parameters(self._run).get("run_manager")`
and `_get_runnable_config_param(self._run)`; BaseTool.arun does the same on `self._arun`, or on
`self._run` when the class keeps BaseTool._arun). The wrapper keeps the original signature, so
`config` still arrives, and adds `run_manager` when it is missing: its `run_id` is how the gated
call finds the handler's node, and the wrapper drops it before calling a method without it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from graphmind.adapter import Engine, NodeSpec

from . import _registry as registry
from ._describe import tool_output_json
from ._edit import edited_tool_call

_FILTERED = ("run_manager", "callbacks", "config")


def signature_with_run_manager(orig: Callable[..., Any]) -> tuple[inspect.Signature | None, bool]:
    """(the signature LangChain should see, whether `orig` itself takes run_manager)."""
    try:
        sig = inspect.signature(orig)
    except (TypeError, ValueError):
        return None, False
    if "run_manager" in sig.parameters:
        return sig, True
    params = list(sig.parameters.values())
    extra = inspect.Parameter("run_manager", inspect.Parameter.KEYWORD_ONLY, default=None)
    var_kw = [p for p in params if p.kind == p.VAR_KEYWORD]
    rest = [p for p in params if p.kind != p.VAR_KEYWORD]
    return sig.replace(parameters=[*rest, extra, *var_kw]), False


def _described(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    described = {k: v for k, v in kwargs.items() if k not in _FILTERED}
    if args:
        if not described and len(args) == 1:
            return args[0]
        described["args"] = list(args)
    return described


def _converter(tool: Any) -> Callable[[Any], Any]:
    if getattr(tool, "response_format", "content") != "content_and_artifact":
        return lambda value: value

    def to_pair(value: Any) -> Any:
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return tuple(value)
        if isinstance(value, dict) and "content" in value:
            return (value["content"], value.get("artifact"))
        return (value, None)

    return to_pair


def tool_function(tool: Any, orig: Callable[..., Any], coroutine: bool) -> Callable[..., Any] | None:
    """The Python function a tool runs, for reload (`NodeSpec.function`: core puts the new code into
    it): a `Tool` / `StructuredTool`'s `coroutine` or `func` (langchain_core/tools/structured.py:103),
    else the `_run` / `_arun` of the app's own `BaseTool` subclass; None for LangChain's own tools."""
    fn = (getattr(tool, "coroutine", None) if coroutine else None) or getattr(tool, "func", None)
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return fn
    owner = str(getattr(getattr(orig, "__func__", None), "__module__", ""))
    return orig if inspect.ismethod(orig) and not owner.startswith("langchain") else None


def gated_run(
    engine_of: Callable[[], Engine], tool: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    sig, takes_rm = signature_with_run_manager(orig)
    convert = _converter(tool)
    function = tool_function(tool, orig, coroutine=False)

    @functools.wraps(orig)
    def _run(*args: Any, **kwargs: Any) -> Any:
        run_manager = kwargs.get("run_manager") if takes_rm else kwargs.pop("run_manager", None)
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or registry.is_inside(token):
            return orig(*args, **kwargs)

        def calling(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
            def call() -> Any:
                mark = registry.inside.set(registry.Inside(token))
                try:
                    return orig(*args, **kwargs)
                finally:
                    registry.inside.reset(mark)

            return call

        def edit(value: Any) -> Callable[[], Any]:
            return calling(*edited_tool_call(value, tool, orig, kwargs, _FILTERED))

        offer = registry.claim(getattr(run_manager, "run_id", None), token)
        if offer is not None:
            offer.ex.spec.edit, offer.ex.spec.function = edit, function
            return offer.ex.run_sync(calling(args, kwargs), tool_output_json, convert)
        spec = NodeSpec(tool.name, "tool", _described(args, kwargs), edit=edit, function=function)
        return client.execute(
            spec, calling(args, kwargs), describe_output=tool_output_json, from_injected=convert
        )

    if sig is not None:
        _run.__signature__ = sig  # type: ignore[attr-defined]
    return _run


def gated_arun(
    engine_of: Callable[[], Engine], tool: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    sig, takes_rm = signature_with_run_manager(orig)
    convert = _converter(tool)
    function = tool_function(tool, orig, coroutine=True)

    @functools.wraps(orig)
    async def _arun(*args: Any, **kwargs: Any) -> Any:
        run_manager = kwargs.get("run_manager") if takes_rm else kwargs.pop("run_manager", None)
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or registry.is_inside(token):
            return await orig(*args, **kwargs)

        def calling(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
            async def call() -> Any:
                # BaseTool._arun runs self._run in an executor with a copy of this context, so the
                # gated _run sees this mark and does not gate the same call twice.
                mark = registry.inside.set(registry.Inside(token))
                try:
                    return await orig(*args, **kwargs)
                finally:
                    registry.inside.reset(mark)

            return call

        def edit(value: Any) -> Callable[[], Awaitable[Any]]:
            return calling(*edited_tool_call(value, tool, orig, kwargs, _FILTERED))

        offer = registry.claim(getattr(run_manager, "run_id", None), token)
        if offer is not None:
            offer.ex.spec.edit, offer.ex.spec.function = edit, function
            return await offer.ex.run_async(calling(args, kwargs), tool_output_json, convert)
        spec = NodeSpec(tool.name, "tool", _described(args, kwargs), edit=edit, function=function)
        return await client.aexecute(
            spec, calling(args, kwargs), describe_output=tool_output_json, from_injected=convert
        )

    if sig is not None:
        _arun.__signature__ = sig  # type: ignore[attr-defined]
    return _arun
