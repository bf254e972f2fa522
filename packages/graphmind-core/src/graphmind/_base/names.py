"""A name the app gave (a run's, a tool's, a span's) as the text its node is called by.

Names are meant to be `str`; anything else is written with `str()`. An object whose `str()` raises
must not crash the call it names (the seeds' fail-open promise: the body runs as if GraphMind were
not there), so its node takes a fallback name and the app gets one warning.
"""

from __future__ import annotations

from collections.abc import Callable


def readable_name(value: object, fallback: str, what: str, warn: Callable[..., None]) -> str:
    """`value` as text, or `fallback` (warned once per `what`) when `str(value)` raises."""
    if type(value) is str:
        return value
    try:
        return str(value)
    except Exception as exc:
        warn(
            f"[graphmind] a {what} name could not be read as text (str() raised {type(exc).__name__}), "
            f"so its node is called {fallback!r}; pass the name as a str",
            key=f"unreadable-name-{what}",
        )
        return fallback
