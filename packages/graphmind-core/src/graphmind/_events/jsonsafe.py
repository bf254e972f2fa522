"""JSON-safe snapshots of arbitrary Python values.

Every payload an adapter hands to core (a prompt, tool arguments, a pydantic response, a user
object) goes through `to_jsonable` once, when the event is built: the result is a *copy* made of
dict/list/str/int/float/bool/None only, so a value the app mutates later does not change what was
recorded, and `json.dumps(..., allow_nan=False)` always accepts it.

Reading a user value can run user code (properties, `items()`, `__iter__`, `__repr__`,
`model_dump`). Any exception there becomes the string ``"[Unreadable: <ExcType>: <msg>]"`` in place
of that value, or, with ``strict=True``, an `UnreadableValue` raised to the caller (the redaction
pass uses that to send the failure shape instead of a half-read payload).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
import pathlib
import re
import sys
import types
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

__all__ = [
    "CIRCULAR",
    "MAX_DEPTH",
    "TOO_DEEP",
    "UnreadableValue",
    "json_key",
    "json_scalar",
    "json_scalars",
    "plain_message",
    "surrogate_free",
    "to_jsonable",
]

MAX_DEPTH = 64
"""Containers nested deeper than this are replaced by `TOO_DEEP`."""
REPR_LIMIT = 1000
BYTES_PREVIEW = 64
MESSAGE_LIMIT = 200
CIRCULAR = "[Circular]"
TOO_DEEP = "[Too deep]"

_SURROGATE = re.compile("[\ud800-\udfff]")
_NO_PUBLIC_FIELDS = object()
# Objects that have a __dict__ but whose attributes are not "their data": a module's namespace or a
# class body would flood the recording, so they are shown by repr().
# A plain function that returns one of these (not a generator function): conformance.md, "streams".
_LAZY = (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType)
_REPR_ONLY = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class UnreadableValue(Exception):
    """Reading a value ran user code that raised (only raised by ``to_jsonable(strict=True)``)."""

    def __init__(self, cause: BaseException) -> None:
        self.cause = cause
        super().__init__(describe_exception(cause))


# datetime, decimal and uuid values, looked up in the modules already imported (no value of a type
# exists before its module is imported): `import graphmind` does not import them (issue 37). The
# tuples are rebuilt when sys.modules has grown since the last look (one len() per value here).
_modules = sys.modules
_types_seen = -1
_iso_types: tuple[type[Any], ...] = ()
_str_types: tuple[type, ...] = (pathlib.PurePath,)


def _value_types() -> None:
    global _types_seen, _iso_types, _str_types
    dt, dec, uid = _modules.get("datetime"), _modules.get("decimal"), _modules.get("uuid")
    # getattr: a module still being imported (in sys.modules, not yet filled) has none of them yet
    iso = (getattr(dt, "datetime", None), getattr(dt, "date", None), getattr(dt, "time", None))
    strs = (getattr(uid, "UUID", None), getattr(dec, "Decimal", None))
    _iso_types = tuple(t for t in iso if isinstance(t, type))
    _str_types = (pathlib.PurePath, *(t for t in strs if isinstance(t, type)))
    _types_seen = len(_modules) if all(isinstance(t, type) for t in iso + strs) else -1


def describe_exception(exc: BaseException) -> str:
    """``"<ExcType>: <message>"``, cut short; never raises (an exception's own __str__ may)."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:
        message = "<message unreadable>"
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + "…"
    return f"{name}: {message}" if message else name


def _unreadable(exc: BaseException, strict: bool) -> str:
    if strict:
        if isinstance(exc, UnreadableValue):
            raise exc
        raise UnreadableValue(exc) from exc
    return f"[Unreadable: {describe_exception(exc)}]"


def surrogate_free(text: str) -> bool:
    """No surrogate code point in `text`: its JSON text is one-to-one (an ASCII text: no search)."""
    return text.isascii() or _SURROGATE.search(text) is None


def clean_str(text: str) -> str:
    """Return `text` with lone surrogates replaced by U+FFFD (UTF-8 cannot encode them).

    A well-formed surrogate pair (a str built from UTF-16 halves) is joined into its character.
    """
    if surrogate_free(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def json_scalar(value: Any) -> bool:
    """True when `to_jsonable` returns `value` itself and JSON writes it as it is: an exact str with no
    lone surrogate, an exact int or bool, None, or a finite float. An adapter that builds a payload
    of such leaves in fresh dicts and lists may hand it to the engine as owned (docs/adapters.md,
    "Owned payloads"): the pipeline then skips its snapshot copy."""
    t = type(value)
    if t is str:
        return value.isascii() or _SURROGATE.search(value) is None  # surrogate_free, inlined (per leaf)
    if t is int or t is bool or value is None:
        return True
    return t is float and value - value == 0  # False for NaN and ±Infinity


def json_scalars(values: Iterable[Any]) -> bool:
    """`json_scalar` of every one of `values` (an ASCII str, an int, a bool, None: no call)."""
    for v in values:
        t = type(v)
        if not ((t is str and v.isascii()) or t is int or t is bool or v is None or json_scalar(v)):
            return False
    return True


def plain_message(message: Any) -> bool:
    """The one ownership proof core offers describers (docs/adapters.md, "Owned payloads"): True
    when `message` is an exact dict the describer built, every value a `json_scalar` except
    `tool_calls`, which may be a list of exact dicts of `json_scalar` values the describer built
    too. Call it only on dicts the describer just made (an app's dict is never one: copy it into a
    new one first); a True answer lets the node own the message without the pipeline's copy."""
    if type(message) is not dict:
        return False
    for k, v in message.items():
        t = type(v)
        if (t is str and v.isascii()) or v is None:
            continue
        if k == "tool_calls" and t is list:
            for call in v:
                if type(call) is not dict or not json_scalars(call.values()):
                    return False
        elif not json_scalar(v):
            return False
    return True


def _float(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if value != value:
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def json_key(key: Any) -> str:
    """The object key JSON writes for a dict key (`json.dumps` spelling); may raise for odd keys."""
    if type(key) is str:
        return clean_str(key)
    if isinstance(key, enum.Enum):
        return json_key(key.value)
    if isinstance(key, str):
        return clean_str(str.__str__(key))
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        try:
            return int.__repr__(key)
        except ValueError:  # more digits than sys.get_int_max_str_digits() allows
            return huge_int_text(int(key))
    if isinstance(key, float):
        f = _float(float(key))
        return f if isinstance(f, str) else float.__repr__(f)
    if isinstance(key, (bytes, bytearray, memoryview)):
        return clean_str(bytes(key).decode("utf-8", "replace"))
    # json.dumps refuses other key types; a readable spelling beats losing the entry.
    return clean_str(str(key))


def huge_int_text(value: int) -> str:
    """What stands for an int that JSON cannot spell in decimal here (more digits than
    `sys.get_int_max_str_digits()` allows): its size, since its digits cannot be written."""
    return f"[int of {value.bit_length()} bits: too many digits to write]"


def describe_huge_ints(value: Any) -> Any:
    """`value` (already JSON-safe) with every int that `str()` refuses replaced by `huge_int_text`.
    Called only after an encode failed, so the common path never pays for the walk."""
    t = type(value)
    if t is int:
        try:
            int.__repr__(value)
        except ValueError:
            return huge_int_text(value)
        return value
    if t is dict:
        return {k: describe_huge_ints(v) for k, v in value.items()}
    if t is list:
        return [describe_huge_ints(v) for v in value]
    return value


def bytes_marker(value: bytes | bytearray | memoryview) -> dict[str, Any]:
    data = value.tobytes() if isinstance(value, memoryview) else bytes(value)
    return {"$bytes": len(data), "preview": data[:BYTES_PREVIEW].decode("utf-8", "replace")}


def to_jsonable(value: Any, *, strict: bool = False) -> Any:
    """A JSON-safe snapshot copy of `value` (see the module docstring). Never raises unless strict."""
    t = type(value)
    # Fast path: the common scalars need no state.
    if t is str:
        return value if value.isascii() else clean_str(value)
    if t is int or t is bool or value is None:
        return value
    if t is float:
        return _float(value)
    try:
        return _conv(value, 0, set(), strict)
    except UnreadableValue:
        raise
    except Exception as exc:  # a RecursionError or a bug below: never let it reach the app
        return _unreadable(exc, strict)


def _conv(value: Any, depth: int, path: set[int], strict: bool) -> Any:
    t = type(value)
    if t is str:
        return value if value.isascii() else clean_str(value)
    if t is int or t is bool or value is None:
        return value
    if t is float:
        return _float(value)
    if t is dict or t is list or t is tuple:
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        ident = id(value)
        if ident in path:
            return CIRCULAR
        path.add(ident)
        depth += 1
        try:
            # The leaves of a payload are mostly ASCII strings and ints: kept inline, with no call
            # per leaf (the same result as `_conv`, which returns them as they are).
            if t is dict:
                out: dict[str, Any] = {}
                for k, v in value.items():
                    if type(k) is not str or not k.isascii():
                        k = json_key(k)
                    tv = type(v)
                    if (tv is str and v.isascii()) or tv is int or tv is bool or v is None:
                        out[k] = v
                    else:
                        out[k] = _conv(v, depth, path, strict)
                return out
            items: list[Any] = []
            for v in value:
                tv = type(v)
                if (tv is str and v.isascii()) or tv is int or tv is bool or v is None:
                    items.append(v)
                else:
                    items.append(_conv(v, depth, path, strict))
            return items
        except UnreadableValue:
            raise
        except Exception as exc:  # e.g. "dictionary changed size during iteration"
            return _unreadable(exc, strict)
        finally:
            path.discard(ident)
    return _conv_other(value, depth, path, strict)


def _conv_other(value: Any, depth: int, path: set[int], strict: bool) -> Any:
    """Everything that is not an exact builtin container or scalar. Runs user code: guarded."""
    try:
        # Value-like types first: no nesting, no identity tracking.
        if isinstance(value, enum.Enum):
            return _conv(value.value, depth, path, strict)
        if isinstance(value, str):
            return clean_str(str.__str__(value))
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return _float(float(value))
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes_marker(value)
        if len(_modules) != _types_seen:  # a module imported since: its value types may exist now
            _value_types()
        if isinstance(value, _iso_types):
            return str(value.isoformat())  # a datetime, date or time (the types looked up above)
        if isinstance(value, _str_types):
            return str(value)
        if isinstance(value, _REPR_ONLY):
            return _repr(value)
        if isinstance(value, _LAZY):
            # Reading it would run the app's code early (or forever): it is named, never consumed.
            return (
                f"[{type(value).__name__} {getattr(value, '__name__', '?')}: not consumed, so not recorded]"
            )
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        ident = id(value)
        if ident in path:
            return CIRCULAR
        path.add(ident)
        try:
            return _conv_structured(value, depth + 1, path, strict)
        finally:
            path.discard(ident)
    except UnreadableValue:
        raise
    except Exception as exc:
        return _unreadable(exc, strict)


def _conv_structured(value: Any, depth: int, path: set[int], strict: bool) -> Any:
    cls = type(value)
    dump = getattr(cls, "model_dump", None)
    if dump is not None and hasattr(cls, "model_fields"):  # pydantic v2
        try:
            dumped = value.model_dump(mode="json")
        except Exception:
            # mode="json" refuses fields of arbitrary types; the python dump still has the data.
            dumped = value.model_dump()
        return _conv(dumped, depth, path, strict)
    if isinstance(value, Mapping):
        return {json_key(k): _conv(v, depth, path, strict) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(cls, "_fields"):  # NamedTuple
        return {json_key(k): _conv(v, depth, path, strict) for k, v in zip(cls._fields, value, strict=False)}
    if isinstance(value, (list, tuple, deque)):
        return [_conv(v, depth, path, strict) for v in value]
    if isinstance(value, AbstractSet):
        items = list(value)
        with contextlib.suppress(Exception):
            items.sort()  # sets iterate in hash order, which changes between processes
        return [_conv(v, depth, path, strict) for v in items]
    if dataclasses.is_dataclass(value):
        return {
            json_key(f.name): _conv(getattr(value, f.name), depth, path, strict)
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Sequence) and not isinstance(value, range):
        return [_conv(v, depth, path, strict) for v in value]
    if cls.__module__.split(".", 1)[0] == "numpy" and hasattr(value, "tolist"):
        return _conv(value.tolist(), depth, path, strict)
    fields = _public_fields(value)
    if fields is not _NO_PUBLIC_FIELDS:
        assert isinstance(fields, dict)
        return {json_key(k): _conv(v, depth, path, strict) for k, v in fields.items()}
    return _repr(value)


def _public_fields(value: Any) -> Any:
    attrs = getattr(value, "__dict__", None)  # a Proxy-like object raises here: unreadable
    if not isinstance(attrs, Mapping):
        return _NO_PUBLIC_FIELDS
    public = {k: v for k, v in attrs.items() if not (isinstance(k, str) and k.startswith("_"))}
    # An object that keeps everything private says more through its repr than as {}.
    return public if public else _NO_PUBLIC_FIELDS


def _repr(value: Any) -> str:
    text = repr(value)
    if type(text) is not str:
        text = str.__str__(text)
    if len(text) > REPR_LIMIT:
        text = text[: REPR_LIMIT - 1] + "…"
    return clean_str(text)
