"""The one pass every event goes through before it is buffered: snapshot, redact, shrink.

In: an event dict as the engine builds it. Identity fields (type, seq, ts, runId, nodeId, …) are
plain scalars; payload fields (input, output, deltas, attrs, …) may hold any Python value.
Out: a new dict that `json.dumps(allow_nan=False)` accepts, or None when the event is dropped.

Redaction (docs/protocol.md, "Redaction"; the byte-exact cases are
tests/fixtures/redaction-conformance.json, explained in docs/redaction-conformance.md):

- ``input`` is replaced by ``"__REDACTED__"`` under hide_inputs, or hide_tool_args on a tool node;
- ``output`` (and ``value``) under hide_outputs, or hide_tool_results on a tool node;
- a streamed delta keeps only its length (``{"t", "v": "", "chars"}`` plus toolCallId/toolName)
  under hide_outputs (every delta), hide_inputs / hide_tool_args (``tool-args`` deltas), or
  hide_tool_results (every delta of a tool node);
- ``originalInput`` (an edited node's original input) as ``input``; ``error`` is never redacted.

The event then carries ``"redaction": {"count", "keys"}``, appended after its other fields. When a
switch is on and a payload cannot be read (a getter or ``__iter__`` raises, a malformed ``deltas``),
every hideable field on the event is hidden (``deltas: []``) and ``redaction.failed`` is true: a
value that cannot be read safely is not sent raw. When an identity field cannot be read, the event
is dropped with one (rate-limited) warning. `process` never raises.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from .._base import forksafe
from .fields import (
    _DELTA_IDS,
    _DELTAS,
    _ENGINE_KEYS,
    _ENVELOPE_CHARS,
    _ID,
    _IN,
    _OWNED_FIELDS,
    _PAYLOAD_KEYS,
    _ROLE,
    _SHORT_TEXT,
    _SHRINK,
    _SKIP,
    DROP_WARN_INTERVAL,
    HIDEABLE_ORDER,
    IDENTITY_FIELDS,
    TOOL_ARGS,
    _plain_deltas,
    _shrink_delta,
)
from .jsonsafe import describe_exception, json_key, to_jsonable
from .mask import mask_event
from .payload import (
    approx_size,
    shrink_measured,
    shrink_oversized,
)
from .redaction import PLACEHOLDER, RedactionSwitches

__all__ = ["HIDEABLE_ORDER", "IDENTITY_FIELDS", "EventPipeline"]


class _Malformed(Exception):
    """A deltas value that is not a list of {t: str, v: str} objects."""


class _Unreadable(Exception):
    """An identity field could not be read: the event is dropped."""

    def __init__(self, field: str, cause: BaseException) -> None:
        super().__init__(field)
        self.field = field
        self.cause = cause


class EventPipeline:
    def __init__(
        self, switches: RedactionSwitches, warn: Callable[[str], None], mask: re.Pattern[str] | None = None
    ) -> None:
        self._switches = switches
        self._mask = mask
        self._any = switches.any
        # No switch and no mask: an engine-built event takes `_plain_trusted` straight away.
        self._trusted_ok = not self._any and mask is None
        self._warn = warn
        self._lock = forksafe.lock()
        self._last_warning = -math.inf
        self._unreported = 0
        self.dropped = 0

    @property
    def switches(self) -> RedactionSwitches:
        return self._switches

    def process(
        self, event: dict[str, Any], trusted: bool = False, owned: bool = False
    ) -> dict[str, Any] | None:
        """`trusted`: built by the gate engine, its identity strings checked ASCII: with no switch on,
        only its payload fields need a pass (same result). `owned`: see `_plain_trusted`."""
        sized = self.process_sized(event, trusted, owned)
        return None if sized is None else sized[0]

    def process_sized(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> tuple[dict[str, Any], int] | None:
        """`process`, and about how many characters the result takes as JSON (for the replay
        buffer's byte budget: the event is encoded later, by the transport thread, if ever).
        `payload` (with `trusted`): the engine built this event of its own keys (`_ENGINE_KEYS`)
        and these are its payload fields, so neither is looked for (a common node's two events);
        `measured`: the JSON characters of the payload fields the engine measured itself and left
        out of `payload` (an owned flat input, `NodeSpec.input_chars`). Both count only on the
        trusted path: with a switch or a mask on, every field is visited."""
        try:
            if type(event) is not dict:
                event = dict(event.items())
            elif self._trusted_ok and trusted and (payload is not None or event.keys() <= _ENGINE_KEYS):
                return self._plain_trusted(
                    event, owned, payload, measured
                )  # `_process`'s common case, one call shorter
            if self._mask is not None:
                out, size = self._process(event, trusted)
                return mask_event(out, self._mask), size
            return self._process(event, trusted)
        except _Unreadable as exc:
            self._drop(event, f"its {exc.field!r} field could not be read ({describe_exception(exc.cause)})")
        except Exception as exc:
            self._drop(event, f"it could not be read ({type(exc).__name__})")
        return None

    def _process(self, event: dict[str, Any], trusted: bool) -> tuple[dict[str, Any], int]:
        """Snapshot, redact, shrink: (the event as sent, about how many characters its JSON takes)."""
        if self._any:
            out = self._redacting(event)
            return out, approx_size(out)
        if trusted and event.keys() <= _ENGINE_KEYS:
            return self._plain_trusted(event)
        return self._plain(event)

    # ---- no switch: snapshot and shrink ------------------------------------------------------
    def _plain(self, event: dict[str, Any]) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        size = 2
        for k, v in event.items():
            if type(k) is not str or not k.isascii():
                k = self._key(k)
            size += len(k) + 4
            role = _ROLE.get(k)
            if role is None or role is _ID:
                t = type(v)
                # The common case: a plain scalar (`v - v == 0` is False for NaN and ±Infinity).
                if (
                    (t is str and v.isascii())
                    or t is int
                    or t is bool
                    or v is None
                    or (t is float and v - v == 0)
                ):
                    out[k] = v
                    size += len(v) if t is str else 8
                    continue
                if role is _ID:
                    out[k] = v = self._identity(k, v)
                else:
                    out[k] = v = to_jsonable(v)
                size += approx_size(v)
            elif role is _DELTAS:
                out[k] = v = _plain_deltas(to_jsonable(v))
                size += approx_size(v)
            elif role is not _SKIP:
                out[k], n = shrink_measured(to_jsonable(v))
                size += n
        return out, size

    def _plain_trusted(
        self,
        event: dict[str, Any],
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> tuple[dict[str, Any], int]:
        """`_plain` for an engine-built event, in place: every key is one the engine writes, every
        value outside `_ENGINE_PAYLOADS` a str/number/bool it made itself (identity strings checked
        ASCII once per node), so only the payload fields are visited. Same output as `_plain`.
        `owned`: an adapter built the dicts/lists in `_OWNED_FIELDS` fresh, of `json_scalar` leaves:
        a copy would be equal, so only the size bound and shrink run (adapters.md, "Owned payloads")."""
        size = _ENVELOPE_CHARS + measured
        # The payload fields this event has: as the engine says, or one C-level pass over its keys.
        for k in _PAYLOAD_KEYS.intersection(event) if payload is None else payload:
            v = event[k]
            t = type(v)
            if t is str:
                if len(v) <= _SHORT_TEXT and v.isascii():
                    size += len(v)
                    continue
            elif t is int or t is bool or v is None or (t is float and v - v == 0):
                continue
            role = _ROLE.get(k)
            if owned and (t is dict or t is list) and k in _OWNED_FIELDS:
                if role is None:  # usage: measured, never shrunk, as below
                    size += approx_size(v)
                else:
                    event[k], n = shrink_measured(v)
                    size += n
            elif role is _DELTAS:
                event[k] = v = _plain_deltas(to_jsonable(v))
                size += approx_size(v)
            elif role is None:
                event[k] = v = to_jsonable(v)
                size += approx_size(v)
            else:
                event[k], n = shrink_measured(to_jsonable(v))
                size += n
        return event, size

    # ---- a switch is on ----------------------------------------------------------------------
    def _redacting(self, event: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        pending: list[tuple[str, object, Any]] = []
        for k, v in event.items():
            if type(k) is not str or not k.isascii():
                k = self._key(k)
            role = _ROLE.get(k)
            if role is None or role is _ID:
                t = type(v)
                if (t is str and v.isascii()) or t is int or t is bool or v is None:
                    out[k] = v
                elif role is _ID:
                    out[k] = self._identity(k, v)
                else:
                    out[k] = to_jsonable(v)  # error, usage, loop, …: never redacted
            elif role is _SHRINK:
                out[k] = shrink_oversized(to_jsonable(v))
            elif role is not _SKIP:
                out[k] = None  # holds the field's place: filled in once the node kind is known
                pending.append((k, role, v))
        if pending:
            self._redact_pending(out, pending)
        return out

    def _redact_pending(self, out: dict[str, Any], pending: list[tuple[str, object, Any]]) -> None:
        sw = self._switches
        kind = out.get("kind")
        node_id = out.get("nodeId")
        tool = kind == "tool" if kind is not None else (type(node_id) is str and node_id.startswith("tool:"))
        hide_in = sw.hide_inputs or (tool and sw.hide_tool_args)
        hide_out = sw.hide_outputs or (tool and sw.hide_tool_results)
        hidden: dict[str, int] = {}
        failed = False
        for k, role, v in pending:
            if role is _DELTAS:
                try:
                    out[k], n = self._redact_deltas(v, tool)
                except Exception:
                    failed = True
                    continue
                if n:
                    hidden[k] = n
            elif hide_in if role is _IN else hide_out:
                out[k] = PLACEHOLDER  # never read: nothing to fail, nothing to leak
                hidden[k] = 1
            else:
                try:
                    out[k] = shrink_oversized(to_jsonable(v, strict=True))
                except Exception:
                    failed = True
        if failed:
            present = [k for k in HIDEABLE_ORDER if k in out]
            for k in present:
                out[k] = [] if k == "deltas" else PLACEHOLDER
            out["redaction"] = {"count": len(present), "keys": present, "failed": True}
        elif hidden:
            order = [k for k in HIDEABLE_ORDER if k in hidden]
            out["redaction"] = {"count": sum(hidden.values()), "keys": order}

    def _redact_deltas(self, deltas: Any, tool: bool) -> tuple[list[Any], int]:
        """(deltas as sent, how many had their text hidden). Raises on a malformed list."""
        sw = self._switches
        hide_all = sw.hide_outputs or (tool and sw.hide_tool_results)
        hide_args = sw.hide_inputs or sw.hide_tool_args
        if not isinstance(deltas, (list, tuple)):
            raise _Malformed("deltas is not a list")
        out: list[Any] = []
        hidden = 0
        for raw in deltas:
            if type(raw) is not dict:
                if not isinstance(raw, Mapping):
                    raise _Malformed("a delta is not an object")
                raw = dict(raw.items())
            delta = {k if type(k) is str else json_key(k): v for k, v in raw.items()}
            t, v = delta.get("t"), delta.get("v")
            if type(t) is not str:
                t = to_jsonable(t, strict=True)  # an enum kind counts as the string JSON writes
            if type(v) is not str:
                v = to_jsonable(v, strict=True)
            if type(t) is not str or type(v) is not str:
                raise _Malformed("a delta has no string t and v")
            if hide_all or (hide_args and t == TOOL_ARGS):
                kept: dict[str, Any] = {"t": t, "v": "", "chars": len(v)}
                for name in _DELTA_IDS:
                    if name in delta:
                        kept[name] = to_jsonable(delta[name], strict=True)
                out.append(kept)
                hidden += 1
            else:
                out.append(_shrink_delta(to_jsonable(delta, strict=True)))
        return out, hidden

    # ---- helpers -----------------------------------------------------------------------------
    def _key(self, key: Any) -> str:
        try:
            return json_key(key)
        except Exception as exc:
            raise _Unreadable("<key>", exc) from exc

    def _identity(self, field: str, value: Any) -> Any:
        try:
            return to_jsonable(value, strict=True)
        except Exception as exc:
            raise _Unreadable(field, exc) from exc

    def _drop(self, event: Any, why: str) -> None:
        """Count the drop; warn at once the first time, then at most once a minute."""
        try:
            kind = event.get("type") if isinstance(event, dict) else None
            label = f"a {kind}" if type(kind) is str else "an"
        except Exception:
            label = "an"
        with self._lock:
            self.dropped += 1
            self._unreported += 1
            now = time.monotonic()
            if now - self._last_warning < DROP_WARN_INTERVAL:
                return
            self._last_warning = now
            more = self._unreported - 1
            self._unreported = 0
        extra = f" ({more} more dropped since the last warning)" if more > 0 else ""
        message = (
            f"[graphmind] dropped {label} event: {why}{extra}. The app call is unaffected; "
            "the debugger will not show this event. Please report it with the adapter's name."
        )
        with contextlib.suppress(Exception):
            self._warn(message)
