"""`mask=` and GRAPHMIND_MASK: regular expressions applied to every string an event records.

The four hide switches (`_events/redaction.py`) hide whole fields and never touch `error`; a mask rewrites
every match, errors included, in the one pipeline pass (`_events/pipeline.py`) before the event is
buffered, so a secret that ends up in an exception message never leaves the process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASKED", "MASK_ENV", "mask_event", "mask_value", "resolve_mask"]

MASKED = "__MASKED__"
MASK_ENV = "GRAPHMIND_MASK"
# Wire fields the mask never rewrites: the protocol's own identity and bookkeeping, not app data.
_MASK_SKIP = frozenset(
    {
        "type",
        "runId",
        "seq",
        "ts",
        "nodeId",
        "instanceId",
        "parentInstanceId",
        "gateId",
        "kind",
        "gate",
        "reason",
        "actions",
        "status",
        "redaction",
        "implicit",
    }
)


def resolve_mask(option: Any, environ: Mapping[str, str]) -> re.Pattern[str] | None:
    """`mask=` (a regular expression or a list of them) and GRAPHMIND_MASK (one expression, or a JSON
    list of them), combined: every match in every string the app records becomes __MASKED__.
    A pattern that does not compile raises ValueError here; Options.resolve turns that into one warning
    and hides every input and output instead: a mask that silently does nothing would leak."""
    patterns: list[str] = []
    for name, value in (("mask", option), (MASK_ENV, environ.get(MASK_ENV, "").strip() or None)):
        if value is None:
            continue
        if name == MASK_ENV and isinstance(value, str) and value.startswith("["):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError(
                    f"{MASK_ENV} starts with [ but is not a JSON list of strings: {value!r}"
                ) from None
        items = [value] if isinstance(value, (str, re.Pattern)) else value
        if not isinstance(items, (list, tuple)) or not items:
            raise ValueError(f"{name} must be a regular expression or a list of them, got {value!r}")
        for item in items:
            text = item.pattern if isinstance(item, re.Pattern) else item
            if not isinstance(text, str) or not text:
                raise ValueError(f"{name} must hold non-empty regular expressions (strings), got {item!r}")
            try:
                re.compile(text)
            except re.error as exc:
                raise ValueError(f"{name}: {text!r} is not a regular expression ({exc})") from None
            patterns.append(text)
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def mask_event(event: dict[str, Any], pattern: re.Pattern[str]) -> dict[str, Any]:
    """The event with every match of `pattern` in its app data replaced (a new dict; containers the
    pipeline made are rebuilt where something changed, strings elsewhere are kept as they are)."""
    return {k: v if k in _MASK_SKIP else _mask(v, pattern) for k, v in event.items()}


def mask_value(value: Any, pattern: re.Pattern[str]) -> Any:
    """One JSON value with every match of `pattern` in its strings (keys included) replaced."""
    return _mask(value, pattern)


def _mask(value: Any, pattern: re.Pattern[str]) -> Any:
    t = type(value)
    if t is str:
        return pattern.sub(MASKED, value) if pattern.search(value) else value
    if t is dict:
        return {(_mask(k, pattern) if type(k) is str else k): _mask(v, pattern) for k, v in value.items()}
    if t is list:
        return [_mask(v, pattern) for v in value]
    return value
