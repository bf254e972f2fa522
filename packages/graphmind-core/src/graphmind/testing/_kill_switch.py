"""The default session in the kit's cases: under the kill switch (`disabled`), and configured only
after the thing was instrumented (`configured_later`)."""

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
def no_default_client() -> Iterator[None]:
    """No default client during the block, as when an app's modules are imported before `main()`
    calls `graphmind.configure(...)`; the one made inside is disposed afterwards, the earlier one put back."""
    import graphmind

    with graphmind._default_lock:
        saved_default, graphmind._default = graphmind._default, None
    try:
        yield
    finally:
        with graphmind._default_lock:
            made, graphmind._default = graphmind._default, saved_default
        if made is not None:
            made.dispose()


@contextlib.contextmanager
def kill_switch() -> Iterator[None]:
    """GRAPHMIND_DISABLED=1 and no default client yet; both restored afterwards."""
    saved_env = os.environ.get("GRAPHMIND_DISABLED")
    os.environ["GRAPHMIND_DISABLED"] = "1"
    try:
        with no_default_client():
            yield
    finally:
        if saved_env is None:
            os.environ.pop("GRAPHMIND_DISABLED", None)
        else:
            os.environ["GRAPHMIND_DISABLED"] = saved_env
