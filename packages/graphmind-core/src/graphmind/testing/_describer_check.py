"""The gate-matrix kit's check mode for describers: every payload an adapter hands core (a node's
input and attrs, its output and usage, streamed text) must be a fresh JSON-safe value
(docs/adapters.md, "The describer contract"), and a model step names its model in `attrs.model`.

JSON-safe: dicts with str keys, lists, exact str (no lone surrogate), int, bool, None and finite
floats, nothing else: not a tuple, an enum, a str subclass, a pydantic model or an SDK object (an
"app object"). Fresh: built for core, so nothing the app or the framework holds changes it later: a
value that reads differently at the end of the case than when it was handed over was not.

The check sits at the one door every event passes (the client's pipeline), records what it finds
and never changes an event; `run_case` fails the case with the list at its end.
"""

from __future__ import annotations

import json
from typing import Any

from ..adapter import Patches, json_scalar

__all__ = ["DescriberCheck", "problem_in"]

# The fields a describer fills (NodeSpec.input / attrs, Settled / finish output and usage, ex.token text).
DESCRIBED = ("input", "attrs", "output", "usage", "value", "deltas")


def problem_in(value: Any, path: str = "") -> str | None:
    """Where `value` is not plain JSON, and what is there; None when it is."""
    t = type(value)
    if t is dict:
        for k, v in value.items():
            if type(k) is not str:
                return f"{path or 'the value'} has a {type(k).__name__} key {k!r}"
            found = problem_in(v, f"{path}.{k}" if path else k)
            if found is not None:
                return found
        return None
    if t is list:
        for i, v in enumerate(value):
            found = problem_in(v, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if json_scalar(value):
        return None
    where = path or "the value"
    if t is float:
        return f"{where} is {value!r}, not a finite number"
    if t is str:
        return f"{where} holds a lone surrogate"
    return f"{where} is a {t.__module__}.{t.__qualname__}, not a JSON value (an app object?)"


class DescriberCheck:
    """Watches one client's events; `problems()` lists every payload that broke the contract."""

    def __init__(self, client: Any) -> None:
        self._found: list[str] = []
        self._handed: list[tuple[str, Any, str]] = []  # (where, the container, its JSON when handed over)
        self._patches = Patches()
        pipeline = client._pipeline  # the one pass every event takes (graphmind/_pipeline.py)
        original = pipeline.process_sized

        def process_sized(event: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            self._look(event)
            return original(event, *args, **kwargs)

        self._patches.set(pipeline, "process_sized", process_sized)

    def _look(self, event: dict[str, Any]) -> None:
        kind = f"{event.get('type')} {event.get('nodeId', '')}".rstrip()
        if event.get("type") == "node.started" and event.get("kind") == "llm":
            attrs = event.get("attrs")
            model = attrs.get("model") if type(attrs) is dict else None
            if type(model) is not str or not model:
                # the one place the hub prices a model step by (docs/protocol.md, "The model of a model step")
                self._found.append(f"{kind}: attrs.model is {model!r}, not the model's name")
        for field in DESCRIBED:
            if field not in event:
                continue
            value = event[field]
            where = f"{kind}: {field}"
            found = problem_in(value, field)
            if found is not None:
                self._found.append(f"{kind}: {found}")
            elif type(value) is dict or type(value) is list:
                self._handed.append((where, value, json.dumps(value, sort_keys=True)))

    def problems(self) -> list[str]:
        """What broke the contract so far, a line each (a changed value is one that was not fresh)."""
        changed = [
            f"{where} changed after it was handed over: not a fresh value (the app's or the framework's own)"
            for where, value, seen in self._handed
            if problem_in(value) is not None or json.dumps(value, sort_keys=True) != seen
        ]
        return self._found + changed

    def close(self) -> None:
        self._patches.undo()
