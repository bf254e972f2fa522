"""The kill switch with the default session, for the kit's `disabled` case (issue 16 item 3)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


def instance_attrs(thing: Any) -> list[list[str] | None]:
    """Instance attribute names of the thing and of what it holds (a subject may make a pair of clients)."""
    objects = [thing, *(thing if isinstance(thing, tuple) else ())]
    with contextlib.suppress(TypeError):
        objects += list(vars(thing).values())
    return [sorted(vars(obj)) if hasattr(obj, "__dict__") else None for obj in objects]


@contextlib.contextmanager
def kill_switch() -> Iterator[None]:
    """GRAPHMIND_DISABLED=1 and no default client yet; both restored afterwards."""
    import graphmind

    saved_env = os.environ.get("GRAPHMIND_DISABLED")
    with graphmind._default_lock:
        saved_default, graphmind._default = graphmind._default, None
    os.environ["GRAPHMIND_DISABLED"] = "1"
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop("GRAPHMIND_DISABLED", None)
        else:
            os.environ["GRAPHMIND_DISABLED"] = saved_env
        with graphmind._default_lock:
            made, graphmind._default = graphmind._default, saved_default
        if made is not None:
            made.dispose()
