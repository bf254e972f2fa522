"""GraphMind: a live debugger for LLM agents. The core SDK.

    import graphmind as gm

    gm.configure(app="support-agent")

    @gm.tool
    def search(query: str) -> list[str]: ...

    with gm.run("handle-ticket"):
        search(query="refund")

With no hub attached every call runs as if GraphMind were not there. Run `graphmind` and open
http://127.0.0.1:4747 to watch, hold and steer it. Adapter authors: `graphmind.adapter`.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ._base import forksafe
from ._version import __version__

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._api.client import Client
    from ._api.default import DefaultSession
    from ._api.run_scope import RunScope
    from ._api.span import Span
    from ._api.wrappers import unwrap
    from ._base.errors import RunAborted
    from ._effects.classify import EffectArgs
    from ._hub.code_holds import BreakpointArg, Condition
    from ._replay.errors import ReplayDivergence, ReplayedError
    from ._runs.run import RunContext
    from .protocol import PROTOCOL_VERSION, REDACTED

# `import graphmind` imports none of the SDK (issue 37: every script and test process paid ~105 ms
# for it, detached or not): these names load their module on first use (PEP 562), and the first
# client built (`configure`, `get_client`, `Client(...)`) loads the rest. The names are the same
# objects as before; `dir(graphmind)` lists them.
_LAZY = {
    "Client": "._api.client",
    "RunScope": "._api.run_scope",
    "Span": "._api.span",
    "unwrap": "._api.wrappers",
    "RunAborted": "._base.errors",
    "BreakpointArg": "._hub.code_holds",
    "Condition": "._hub.code_holds",
    "ReplayDivergence": "._replay.errors",
    "ReplayedError": "._replay.errors",
    "RunContext": "._runs.run",
    "PROTOCOL_VERSION": ".protocol",
    "REDACTED": ".protocol",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphmind' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # looked up once: the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def _client_class() -> type[Client]:
    from ._api.client import Client

    return Client


__all__ = [
    "PROTOCOL_VERSION",
    "REDACTED",
    "Client",
    "ReplayDivergence",
    "ReplayedError",
    "RunAborted",
    "RunContext",
    "RunScope",
    "Span",
    "__version__",
    "adispose",
    "aready",
    "configure",
    "current_run",
    "dispose",
    "get_client",
    "ready",
    "run",
    "span",
    "stats",
    "tool",
    "tool_call",
    "unwrap",
    "wrap",
    "wrap_method",
    "wrap_tools",
]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_default: Client | None = None
_default_lock = forksafe.lock()
_default_session: DefaultSession | None = None
# What builds the default client (`configure`, `get_client`): `Client`, or while a test marked for a
# cassette runs, the pytest plugin's recorder (the code under test may call `configure` itself).
_make: Callable[..., Client] | None = None


def _session() -> DefaultSession:
    """What the module-level API (and an adapter given no `session=`) reports to: the default client
    as it is when each call happens, not when a function was decorated (_api/default.py)."""
    global _default_session
    session = _default_session
    if session is None:
        from ._api.default import DefaultSession

        session = _default_session = DefaultSession(sys.modules[__name__])
    return session


def configure(app: str | None = None, **options: Any) -> Client:
    """Builds a client and makes it the process-wide default (the previous default is disposed).
    Functions decorated before (`@graphmind.tool`, `wrap`, ...) report to it from their next call."""
    global _default
    client = (_make or _client_class())(app, **options)
    with _default_lock:
        previous, _default = _default, client
    if previous is not None:
        previous.dispose()
    return client


def get_client() -> Client:
    """The process-wide default client, created on first use."""
    global _default
    client = _default
    if client is None:
        with _default_lock:
            if _default is None:
                _default = (_make or _client_class())()
            client = _default
    return client


# `run`, `tool`, `wrap`, `wrap_tools`, `wrap_method` and `span` build nothing: what they return
# finds the default client when it is called or entered, so `configure()` may come before or after.
def run(name: str, meta: dict[str, Any] | None = None, *, thread: Any = None) -> RunScope:
    return _session().run(name, meta, thread=thread)


def tool(
    name: Any = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    **effect: Unpack[EffectArgs],
) -> Any:
    return _session().tool(name, breakpoint=breakpoint, hold_if=hold_if, **effect)


def wrap(
    fn: F,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    **effect: Unpack[EffectArgs],
) -> F:
    return _session().wrap(fn, name, breakpoint=breakpoint, hold_if=hold_if, **effect)


def wrap_tools(
    tools: T,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    **effect: Unpack[EffectArgs],
) -> T:
    return _session().wrap_tools(tools, breakpoint=breakpoint, hold_if=hold_if, **effect)


def wrap_method(
    obj: Any,
    method_name: str,
    name: str | None = None,
    *,
    breakpoint: BreakpointArg = None,
    hold_if: Condition | None = None,
    **effect: Unpack[EffectArgs],
) -> Any:
    return _session().wrap_method(obj, method_name, name, breakpoint=breakpoint, hold_if=hold_if, **effect)


def span(name: str, kind: str = "custom", input: Any = None) -> Span:
    return _session().span(name, kind, input)


def tool_call(call_id: str) -> Any:
    return get_client().tool_call(call_id)


def current_run() -> RunContext | None:
    return get_client().current_run()


def ready(timeout: float = 2.0) -> bool:
    return get_client().ready(timeout)


def aready(timeout: float = 2.0) -> Awaitable[bool]:
    return get_client().aready(timeout)


def stats() -> dict[str, Any]:
    return get_client().stats()


def dispose() -> None:
    global _default
    with _default_lock:
        client, _default = _default, None
    if client is not None:
        client.dispose()


async def adispose() -> None:
    global _default
    with _default_lock:
        client, _default = _default, None
    if client is not None:
        await client.adispose()
