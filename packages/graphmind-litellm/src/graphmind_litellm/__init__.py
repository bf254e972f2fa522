"""GraphMind adapter for LiteLLM.

    import litellm
    from graphmind_litellm import GraphmindLogger, instrument_litellm

    litellm.callbacks = [GraphmindLogger()]   # every call an `llm:step` node, for any provider
    instrument_litellm()                      # + hold, inject, retry and abort on every call

The logger is LiteLLM's own callback mechanism (what a callback can and cannot do is in its module);
`instrument_litellm()` wraps `litellm.completion` / `acompletion` (and `text_completion`,
`responses`, `embedding` with their async twins) so every gate can do everything.
"""

from __future__ import annotations

import graphmind

from . import _hooks
from ._logger import GraphmindLogger
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "GraphmindLogger", "__version__", "instrument_litellm", "uninstrument_litellm"]


def instrument_litellm(*, session: graphmind.Client | None = None) -> bool:
    """Gates every `litellm.completion` / `acompletion` / `text_completion` / `responses` / `embedding`
    call (and their async twins): before, after and error gates with inject, retry and abort.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Returns whether the functions are instrumented: a second call patches nothing more (its
    `session` becomes the one reported to); a disabled session (`GRAPHMIND_DISABLED=1`) patches
    nothing. Call it before any `from litellm import
    completion`: a name imported earlier keeps the plain function (use `litellm.completion`).
    """
    return _hooks.PATCH.instrument(session)


def uninstrument_litellm() -> None:
    """Puts the original LiteLLM functions back (a no-op when not instrumented)."""
    _hooks.PATCH.uninstrument()
