"""Which agent made a call: until core reports agents (`graphmind.adapter.agent_scope`), each node
names its agent in `attrs.agent` (the agent's role) and this scope does nothing."""

from __future__ import annotations

import contextlib
from typing import Any


def scope(agent: Any) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()
