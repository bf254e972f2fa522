"""What a gated callable calls, as data: the function (which `reload` swaps for its new
definition), how a call's arguments become the node's input, and how an edited input becomes the
call's arguments again (docs/protocol.md, "Editing a held call"; the engine decides, _node/edit.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._node.code_reload import WRAPPED_ATTR, reload_callable, reload_problem

__all__ = ["WRAPPED_ATTR", "ArgDescriber", "CallTarget", "reload_problem"]

_EMPTY = inspect.Parameter.empty


class ArgDescriber:
    """Turns (args, kwargs) into the input dict, binding positional arguments to their names."""

    __slots__ = ("_names", "_simple", "defaults", "signature")

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        params = list(self.signature.parameters.values()) if self.signature else []
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
            # zip's `strict=` keyword alone costs a keyword parse per call; args fit the names (above)
            described = dict(zip(self._names, args))  # noqa: B905
            if kwargs:
                described.update(kwargs)
            return described
        if self.signature is not None:
            try:
                bound = self.signature.bind_partial(*args, **kwargs)
            except TypeError:
                pass
            else:
                described = {}
                for name, value in bound.arguments.items():
                    if self.signature.parameters[name].kind == inspect.Parameter.VAR_KEYWORD:
                        described.update(value)
                    elif self.signature.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
                        described[name] = list(value)
                    else:
                        described[name] = value
                return described
        return {"args": list(args), **kwargs}


class CallTarget:
    """One gated callable's function and its arguments both ways. The wrapper reads `fn` and
    `describe` at each call, so after a reload later calls of the same wrapper run the new code."""

    __slots__ = ("describe", "fn")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.describe = ArgDescriber(fn)

    def edit(self, value: Any) -> Callable[[], Any]:
        """The body that calls the function with an edited input (the node's `input` shape:
        arguments by parameter name). Raises ValueError naming an unknown or missing parameter."""
        args, kwargs = self.arguments(value)
        fn = self.fn
        return lambda: fn(*args, **kwargs)

    def arguments(self, value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if not isinstance(value, dict):
            raise ValueError(f"the input must be an object of arguments by name, not {type(value).__name__}")
        signature = self.describe.signature
        if signature is None:  # no signature to map through: the describer's {"args": [...], **kwargs}
            rest = {k: v for k, v in value.items() if k != "args"}
            listed = value.get("args", [])
            return (tuple(listed) if isinstance(listed, list) else (listed,)), rest
        params = signature.parameters
        takes = ", ".join(params) or "no parameters"
        var_kw = any(p.kind == p.VAR_KEYWORD for p in params.values())
        if not var_kw:
            unknown = [k for k in value if k not in params]
            if unknown:
                raise ValueError(f"unknown parameter {unknown[0]!r} (it takes {takes})")
        star = next((p for p in params.values() if p.kind == p.VAR_POSITIONAL), None)
        extra = value.get(star.name) if star is not None else None
        if extra is not None and not isinstance(extra, list):
            raise ValueError(f"*{star.name} must be a list")  # type: ignore[union-attr]
        by_position = bool(extra)  # a *args value: every parameter before it goes by position
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for p in params.values():
            present = p.name in value
            if p.kind == p.VAR_POSITIONAL:
                args.extend(extra or ())
            elif p.kind == p.VAR_KEYWORD:
                kwargs.update({k: v for k, v in value.items() if k not in params})
            elif not present and p.default is _EMPTY:
                raise ValueError(f"missing parameter {p.name!r} (it takes {takes})")
            elif p.kind == p.POSITIONAL_ONLY or (by_position and p.kind == p.POSITIONAL_OR_KEYWORD):
                args.append(value[p.name] if present else p.default)
            elif present:
                kwargs[p.name] = value[p.name]
        return tuple(args), kwargs

    def reload(self) -> None:
        """Re-imports the function's module from its source file and takes the new definition."""
        self.fn = reload_callable(self.fn)
        self.describe = ArgDescriber(self.fn)
