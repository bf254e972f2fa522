"""Reload at a held gate (docs/protocol.md, "Editing a held call"): a function's module run again
from its source file, in the same module object, and the function's new definition taken.

Two ways, one run of the module: `reload_callable` hands back the new definition (a gated
callable's `CallTarget` calls it from then on); `reload_in_place` puts the new definition's code
into the function object itself, for a tool a framework holds (`NodeSpec.function`: an OpenAI
Agents SDK `FunctionTool`, a Pydantic AI or ADK tool, a LangChain `StructuredTool` keep their own
reference to the function, which then runs the new code). What neither can do: a function defined
inside another (a closure), the script that was run (`__main__`: running it again would run the
program), objects already built keep their old class, and a framework that read the function's
signature when the tool was made (its argument schema) keeps what it read.
"""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import sys
import types
from typing import Any

WRAPPED_ATTR = "__graphmind_wrapped__"
_MISSING, _GONE = object(), object()


class ReloadError(Exception):
    """The callable's code cannot be re-imported; the message says why (the gate's `refused`)."""


def reload_problem(fn: Any) -> str | None:
    """Why `fn` cannot be reloaded, or None (asked once, at wrap time: `exec.paused.reloadable`)."""
    func = fn.__func__ if inspect.ismethod(fn) else fn
    module_name = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return f"{fn!r} has no module and qualified name to reload it from"
    if "<locals>" in qualname:
        return f"{qualname} is defined inside a function (a closure): only what a module defines at its top level reloads"
    if module_name == "__main__":
        return (
            f"{qualname} is defined in the script that was run (__main__): reloading it would run the "
            "script again; move it into a module of its own"
        )
    path = getattr(sys.modules.get(module_name), "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return f"module {module_name} has no Python source file to reload from"
    return None


def _rerun(func: Any) -> tuple[types.ModuleType, types.CodeType, bool]:
    """Runs `func`'s module again from its source file, in the same module object: (the module, the
    code it ran, whether the source no longer defines `func`'s top-level name). A SyntaxError (or
    anything the module raises) propagates; a syntax error leaves the module as it was."""
    module_name, qualname = func.__module__, func.__qualname__
    module = sys.modules[module_name]
    path = module.__file__
    assert path is not None
    with open(path, "rb") as file:  # the source itself, never a cached .pyc of the same second
        source = importlib.util.decode_source(file.read())
    code = compile(source, path, "exec", dont_inherit=True)
    # Run in the module's own namespace (its functions keep it as their globals), the old top-level
    # name taken out first, so a source that no longer defines it is seen (and the old one put back).
    namespace = module.__dict__
    top = qualname.split(".", 1)[0]
    old = namespace.pop(top, _MISSING)
    gone = False
    try:
        exec(code, namespace)
    finally:
        if top not in namespace and old is not _MISSING:
            namespace[top] = old
            gone = True
    linecache.checkcache(path)  # tracebacks show the new lines
    return module, code, gone


def _checked(fn: Any) -> tuple[Any, Any]:
    """(the bound object or None, the function) of `fn`; ReloadError when it cannot reload."""
    problem = reload_problem(fn)
    if problem is not None:
        raise ReloadError(problem)
    bound = getattr(fn, "__self__", None) if inspect.ismethod(fn) else None
    return bound, (fn.__func__ if bound is not None else fn)


def reload_callable(fn: Any) -> Any:
    """`fn`'s new definition: its module run again (`_rerun`), then the same qualified name looked
    up (a bound method is bound to the same object again)."""
    bound, func = _checked(fn)
    module_name, qualname = func.__module__, func.__qualname__
    module, _, gone = _rerun(func)
    target: Any = module
    try:
        if gone:
            raise AttributeError(qualname)
        for part in qualname.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise ReloadError(f"module {module_name} no longer defines {qualname}") from None
    target = getattr(target, WRAPPED_ATTR, target)  # a module-level @gm.tool is rebuilt: its function
    if bound is not None and not inspect.ismethod(target):
        target = types.MethodType(target, bound)
    if not callable(target):
        raise ReloadError(f"{module_name}.{qualname} is no longer callable")
    return target


def _defined(code: types.CodeType, qualname: str) -> types.CodeType | None:
    """The code of the definition `qualname` names in a module's code (the last one, as running the
    module binds the last), walking class bodies for a method; None when there is none."""
    found: types.CodeType | None = code
    for part in qualname.split("."):
        assert found is not None
        inner = [c for c in found.co_consts if isinstance(c, types.CodeType) and c.co_name == part]
        found = inner[-1] if inner else None
        if found is None:
            return None
    return found


def reload_in_place(fn: Any) -> None:
    """Runs `fn`'s module again (`_rerun`) and puts the new definition's code, defaults and
    annotations into the function object `fn` is (or is bound to), so every reference to it, a
    framework's own included, runs the new code from its next call."""
    _, func = _checked(fn)
    if not isinstance(func, types.FunctionType):
        raise ReloadError(f"{fn!r} is not a Python function")
    module_name, qualname = func.__module__, func.__qualname__
    module, code, gone = _rerun(func)
    new_code = None if gone else _defined(code, qualname)
    if new_code is None:
        raise ReloadError(f"module {module_name} no longer defines {qualname}")
    if new_code.co_freevars != func.__code__.co_freevars:
        raise ReloadError(
            f"{qualname} now uses other names from an enclosing scope; restart the app to load it"
        )
    func.__code__ = new_code
    # The new function object, where the module binds it plainly (not under a framework's decorator):
    # the defaults and annotations its `def` line evaluated.
    new: Any = module
    for part in qualname.split("."):
        new = getattr(new, part, None)
    new = getattr(new, WRAPPED_ATTR, new)
    if isinstance(new, types.FunctionType) and new.__code__ is new_code:
        func.__defaults__, func.__kwdefaults__ = new.__defaults__, new.__kwdefaults__
        func.__annotations__ = new.__annotations__
