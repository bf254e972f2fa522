"""`engine_for`: the adapter-facing engine of a `graphmind.Client`, or of the default one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _session as _default_session

if TYPE_CHECKING:
    from .._api.client import Client
    from .._node.engine import Engine


def engine_for(session: Client | None = None) -> Engine:
    """The engine of `session`, or with None the default client's as it is now: ask per call and
    never keep it, so a `graphmind.configure()` made after instrumenting is followed (the one
    rule of the default session: graphmind/_api/default.py)."""
    if session is None:
        return _default_session()()
    return session._engine


def enabled_for(session: Client | None = None) -> bool:
    """Whether instrumenting for `session` can ever record anything: False for a disabled client,
    and for the default session only under GRAPHMIND_DISABLED=1 (nothing can turn GraphMind on
    then). Builds no client: an adapter instrumented at import, before `graphmind.configure(...)`,
    reports to the client `configure` builds (and its calls go straight through while the default
    client of the moment is disabled)."""
    if session is None:
        return _default_session().enabled
    return bool(session.enabled)
