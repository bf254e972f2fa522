"""Does a call match its recording? The loop guard's canonical form (key order, whitespace and
number spelling do not matter; ignored keys go at every depth), with a recorded "__REDACTED__"
standing for any value (a secret `graphmind record` stripped, or a value the app hid)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._events.jsonsafe import to_jsonable
from .._events.payload import TRUNCATED
from .._loop.fingerprint import DEFAULT_IGNORE_KEYS, text_function
from . import foreign as _foreign

DIFF_LINES = 40


class Matcher:
    """`foreign`: the recording is a trace another instrumentor made; a model step's and a tool
    call's inputs are compared in foreign.py's form (`kind` says which a call is)."""

    def __init__(self, ignore_keys: tuple[str, ...] = (), foreign: bool = False) -> None:
        self.ignore = frozenset((*DEFAULT_IGNORE_KEYS, *ignore_keys))
        self._text: Callable[[Any], str] = text_function(self.ignore)
        self.foreign = foreign

    def canonical(self, value: Any) -> str:
        return self._text(value)

    def _form(self, kind: str, value: Any) -> Any:
        if not self.foreign:
            return value
        return _foreign.comparable(kind, to_jsonable(value))

    def same(self, recorded: Any, actual: Any, kind: str = "") -> bool:
        """`actual` is the call's input as the adapter described it (any Python value); `kind` the
        node's kind (it chooses a foreign trace's comparison form)."""
        if self.foreign and kind == "tool":
            bare = _foreign.tool_arguments_match(recorded, to_jsonable(actual))
            if bare is not None:
                return bare
        recorded, actual = self._form(kind, recorded), self._form(kind, actual)
        if _is_truncated(recorded):
            # Only a preview was recorded: the call matches when its JSON starts the same way.
            text = json.dumps(to_jsonable(actual), ensure_ascii=False, separators=(",", ":"))
            return isinstance(recorded.get("preview"), str) and text.startswith(recorded["preview"])
        try:
            actual_text = self._text(actual)
        except Exception:
            actual_text = self._text(to_jsonable(actual))
        recorded_text = self._text(recorded)
        if actual_text == recorded_text:
            return True
        if proto.REDACTED not in recorded_text:
            return False
        return _wild_equal(json.loads(recorded_text), json.loads(actual_text))

    def diff(self, recorded: Any, actual: Any, kind: str = "") -> str:
        """A unified diff of the two inputs (expected = recorded), at most DIFF_LINES lines; a
        foreign trace's in the form they were compared in."""
        a = _pretty(self, self._form(kind, recorded))
        b = _pretty(self, self._form(kind, actual))
        lines = list(difflib.unified_diff(a, b, "recorded", "actual", n=1, lineterm=""))
        if len(lines) > DIFF_LINES:
            lines = [*lines[:DIFF_LINES], f"… ({len(lines) - DIFF_LINES} more lines)"]
        return "\n".join(lines)


def _pretty(matcher: Matcher, value: Any) -> list[str]:
    try:
        normal = json.loads(matcher.canonical(value))
    except Exception:
        normal = to_jsonable(value)
    return json.dumps(normal, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _wild_equal(recorded: Any, actual: Any) -> bool:
    if recorded == proto.REDACTED:
        return True
    if isinstance(recorded, dict):
        return (
            isinstance(actual, dict)
            and recorded.keys() == actual.keys()
            and all(_wild_equal(v, actual[k]) for k, v in recorded.items())
        )
    if isinstance(recorded, list):
        return (
            isinstance(actual, list)
            and len(recorded) == len(actual)
            and all(_wild_equal(r, a) for r, a in zip(recorded, actual, strict=True))
        )
    return bool(recorded == actual)


def _is_truncated(value: Any) -> bool:
    return isinstance(value, dict) and value.get("$graphmind") == TRUNCATED


def unreplayable(output: Any) -> str | None:
    """Why a recorded output cannot be handed back (hidden, or only a preview), else None."""
    stack = [output]
    while stack:
        value = stack.pop()
        if value == proto.REDACTED:
            return 'its recorded output is hidden ("__REDACTED__"), so it cannot be replayed'
        if isinstance(value, dict):
            if value.get("$graphmind") == TRUNCATED:
                return "its recorded output was over 512 KB (only a preview was recorded), so it cannot be replayed"
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None
