"""The one patch this package makes (`instrument_runner` / `uninstrument_runner`, in __init__.py, apply it).

ADK's plugin callbacks are the hook points (`GraphmindPlugin`, docs/google-adk.md has the table); a
patch is needed for one thing only: `PluginManager._run_callbacks` wraps every exception a plugin
raises in `RuntimeError("Error in plugin ...")` (google/adk/plugins/plugin_manager.py:277-322), which
would turn an abort from the debugger into an error the app cannot tell from a bug. The row below
re-raises our `RunAborted` itself (the very object, chained by ADK as `__cause__`), and the errors
the plugin raises on purpose (`passes`: a replay's recorded error, a retry's failure); every other
exception, and every other plugin's, goes on as ADK made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.adk.plugins.plugin_manager import PluginManager

import graphmind
from graphmind.adapter import Hook, Patches, RunAborted, hook_moved, instrument_once

from ._version import SUPPORTED, __version__


@dataclass(eq=False)
class State(Patches):
    pass


_PASSES = "_graphmind_passes"


def passes(exc: BaseException) -> BaseException:
    """Marks an exception the plugin raises on purpose (a replay's recorded error or divergence, a
    retry's failure) to leave ADK's callbacks as itself, like RunAborted."""
    try:
        setattr(exc, _PASSES, True)
    except Exception:  # an exception type that refuses attributes: it goes on wrapped, as ADK makes it
        pass
    return exc


def wrap_run_callbacks(original: Any, state: State) -> Any:
    async def _run_callbacks(callback_name: Any, **kwargs: Any) -> Any:
        try:
            return await original(callback_name, **kwargs)
        except RuntimeError as exc:
            cause = exc.__cause__
            if cause is not None and (isinstance(cause, RunAborted) or getattr(cause, _PASSES, False)):
                raise cause from None
            raise

    return _run_callbacks


HOOKS = (
    # plugin_manager.py:277-322 PluginManager._run_callbacks: every run_*_callback goes through it,
    # and it raises RuntimeError(...) from a plugin's exception; instance attribute, so undo restores the class's.
    Hook(
        "",
        "_run_callbacks",
        wrap_run_callbacks,
        SUPPORTED,
        "google/adk/plugins/plugin_manager.py:277-322 PluginManager._run_callbacks (raise RuntimeError(...) from e)",
    ),
)
MARK = "_graphmind_google_adk"
_MOVED = hook_moved("google-adk", "graphmind-google-adk", __version__, SUPPORTED)


def instrument_plugin_manager(
    manager: PluginManager, *, session: graphmind.Client | None = None
) -> PluginManager:
    """Lets `RunAborted` out of `manager`'s callbacks as itself (safe twice; undone by `uninstrument_runner`)."""

    def apply(target: Any) -> State:
        state = State(session)
        state.apply(target, HOOKS, state)
        return state

    result: PluginManager = instrument_once(manager, MARK, session, apply, _MOVED)
    return result
