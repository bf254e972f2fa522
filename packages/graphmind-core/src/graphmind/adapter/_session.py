"""`engine_for`: the adapter-facing engine of a `graphmind.Client`, or of the default one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._api.client import Client
    from .._node.engine import Engine


def engine_for(session: Client | None = None) -> Engine:
    """The engine of `session`, or of the process-wide default client when None."""
    if session is None:
        from .. import get_client

        session = get_client()
    return session._engine
