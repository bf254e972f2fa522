"""The loop guard's fingerprint: a digest of a call's arguments after canonicalisation.

Identical means: same arguments once key order, whitespace and number spelling (1.0 vs 1) are
ignored, and the ignore keys (MCP's per-request ``_meta`` by default) are removed at every depth.
The digest is the SHA-256 hex of the canonical JSON text (docs/protocol.md, "Redaction").

It runs at the start of every watched call, attached or not, so it is built around the C JSON
encoder: most arguments are hashed after one C encode, and only those that might hold an
integral float or an ignored key take a Python pass (bench/fingerprint.py measures it).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from .._events.jsonsafe import CIRCULAR, MAX_DEPTH, TOO_DEEP, json_key, surrogate_free, to_jsonable
from .._events.payload import FLAT_KEYS, FLAT_STR

__all__ = ["DEFAULT_IGNORE_KEYS", "fingerprint", "flat_copy", "flat_owned", "same_flat", "text_function"]

DEFAULT_IGNORE_KEYS = ("_meta",)


def _fp_default(value: Any) -> Any:
    """How the canonical encoder spells a value JSON has no type for."""
    # type() based checks: isinstance() falls back to value.__class__, which a Proxy-like object raises on.
    t = type(value)
    if issubclass(t, (bytes, bytearray, memoryview)):
        try:
            data = value.tobytes() if issubclass(t, memoryview) else bytes(value)
        except Exception:
            return to_jsonable(value)
        return {"$bytes": data.hex()}  # the whole content: a preview would make distinct calls equal
    return to_jsonable(value)


def _c_encoder(sort_keys: bool) -> Callable[[Any, int], Any] | None:
    """The C encoder behind `_encoder` (None without the C accelerator): compact, ASCII, NaN allowed,
    unknown types spelled by `_fp_default`, no circular-reference markers (see `_encoder`)."""
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return None
    encode: Callable[[Any, int], Any] = c_make(
        None, _fp_default, json.encoder.encode_basestring_ascii, None, ":", ",", sort_keys, False, True
    )
    return encode


def _encoder(sort_keys: bool) -> Callable[[Any], str]:
    """A compact ASCII JSON encoder that spells unknown types with `_fp_default`.

    Built once around the C encoder with no circular-reference markers: a cycle surfaces as
    RecursionError, which sends the value down the slow path (that one marks cycles). This saves
    a dict insert and delete per container on every fingerprint.
    """
    encode = _c_encoder(sort_keys)
    if encode is None:  # no C accelerator (another interpreter): the stdlib encoder, same text
        return json.JSONEncoder(
            sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=True, allow_nan=True, default=_fp_default
        ).encode

    def run(value: Any) -> str:
        if isinstance(value, str):  # the C encoder only takes containers and scalars through _iterencode
            return json.encoder.encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return run


# ensure_ascii: the text is ASCII (cheap to hash, no surrogate trouble); sort_keys: key order ignored.
_canonical = _encoder(sort_keys=True)
# The same encoder's C part, called directly on a dict or list (`text_function`: one call less).
_canonical_c = _c_encoder(sort_keys=True)
# The slow path hands over dicts already in sort_keys order (see _normalise).
_canonical_sorted = _encoder(sort_keys=False)
# An integral float as repr() writes it: "1.0", "-0.0", "1e+16". Matching inside a string only costs
# the slow path, never a wrong answer.
_INTEGRAL_FLOAT = re.compile(r"[0-9]\.0(?![0-9])|[0-9]e\+")


def _first(item: tuple[Any, Any]) -> Any:
    return item[0]


def _json_first(item: tuple[Any, Any]) -> str:
    return json_key(item[0])


def _normalise(value: Any, ignore: frozenset[str], depth: int, path: set[int]) -> Any:
    """The slow path: what the encoder sees, with integral floats as ints and ignored keys gone.

    Mirrors the C encoder's type checks (dict subclasses as objects, tuples as arrays) so that a
    value takes the same shape whichever path fingerprints it.
    """
    t = type(value)  # the C encoder's checks are type based too (PyUnicode_Check, …)
    if issubclass(t, str) or value is None or t is bool:
        return value
    if issubclass(t, int):
        return int(value)
    if issubclass(t, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return float(value)
    if issubclass(t, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        if id(value) in path:
            return CIRCULAR
        path.add(id(value))
        try:
            if issubclass(t, dict):
                items = list(value.items())
                try:
                    items.sort(key=_first)  # the order sort_keys gives on the fast path
                except TypeError:  # mixed key types: the fast path refused this dict anyway
                    items.sort(key=_json_first)
                out: dict[str, Any] = {}
                for k, v in items:
                    key = json_key(k)
                    if key not in ignore:
                        out[key] = _normalise(v, ignore, depth + 1, path)
                return out
            return [_normalise(v, ignore, depth + 1, path) for v in value]
        finally:
            path.discard(id(value))
    return _normalise(_fp_default(value), ignore, depth + 1, path)


def fingerprint(args: Any, ignore_keys: Iterable[str] = DEFAULT_IGNORE_KEYS) -> str:
    """sha256 hex of the canonical JSON of `args`: sorted keys, no whitespace, integral floats
    written as integers, `ignore_keys` removed at every depth."""
    return digest_of(canonical_text(args, ignore_keys))


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def canonical_text(args: Any, ignore_keys: Iterable[str] = DEFAULT_IGNORE_KEYS) -> str:
    """The canonical JSON text `fingerprint` hashes (ASCII).

    Fast path: the C JSON encoder writes `args` directly; the text is only rebuilt through
    `_normalise` when it might hold an integral float or an ignored key, or when the encoder
    refuses the value (mixed or odd key types, a cycle, deep nesting).
    """
    return text_function(ignore_keys)(args)


def text_function(ignore_keys: Iterable[str] = DEFAULT_IGNORE_KEYS) -> Callable[[Any], str]:
    """`canonical_text` for one set of ignore keys, its lookups done once: the loop guard calls it
    on every watched call (one function per set, kept for the process)."""
    ignore = ignore_keys if type(ignore_keys) is frozenset else frozenset(ignore_keys)
    text_of = _text_functions.get(ignore)
    if text_of is None:
        text_of = _text_functions.setdefault(ignore, _make_text_function(ignore))
    return text_of


def _make_text_function(ignore: frozenset[str]) -> Callable[[Any], str]:
    needles = tuple(json.dumps(k) + ":" for k in ignore)  # the `"key":` spellings of the ignore keys
    encode = _canonical_c

    def text_of(args: Any) -> str:
        text: str | None
        try:
            value = args
            if type(args) is dict and not ignore.isdisjoint(args):
                value = _tidy(
                    args, ignore
                )  # MCP's _meta sits at the top: skip an encode that would be redone
            if encode is not None and type(value) is dict:
                text = "".join(encode(value, 0))  # `_canonical` inlined for the common shape
            else:
                text = _canonical(value)
            # `_suspicious` inlined (it runs on every watched call); the second check below is rare.
            suspicious = ("." in text or "+" in text) and _INTEGRAL_FLOAT.search(text) is not None
            if not suspicious:
                for needle in needles:
                    if needle in text:
                        suspicious = True
                        break
            if suspicious:
                # Plain dicts and lists: drop ignored keys, turn integral floats into ints, encode again.
                text = _canonical(_tidy(value, ignore))
                if _suspicious(text, needles):
                    text = None  # e.g. "1.0" or '"_meta":' inside a string value, or inside an odd type
        except Exception:  # TypeError (odd keys), RecursionError (a cycle), or user code raising
            text = None
        if text is None:
            try:
                normal = _normalise(args, ignore, 0, set())
            except Exception:  # a dict subclass whose items() raises: compare what the recording shows
                normal = _normalise(to_jsonable(args), ignore, 0, set())
            text = _canonical_sorted(normal)
        return text

    return text_of


def _suspicious(text: str, needles: tuple[str, ...]) -> bool:
    """Might the canonical text hold an integral float or an ignored key?"""
    # Cheapest test first: "." and "+" are single-character (memchr) scans.
    if ("." in text or "+" in text) and _INTEGRAL_FLOAT.search(text) is not None:
        return True
    for needle in needles:  # noqa: SIM110 (a loop, not any(<generator>): this runs on every watched call)
        if needle in text:
            return True
    return False


def _tidy(value: Any, ignore: frozenset[str]) -> Any:
    """Copy of exact dicts and lists without ignored keys and with integral floats as ints.

    Only called on a value the C encoder already accepted, so it has no cycle. Other types are
    left for the encoder's default hook; if they still hold something suspicious, the caller
    takes the slow path.
    """
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is str and k in ignore:
                continue
            tv = type(v)
            if tv is dict or tv is list:
                v = _tidy(v, ignore)
            elif tv is float and v.is_integer():
                v = int(v)
            out[k] = v
        return out
    if t is list:
        return [_tidy(v, ignore) if type(v) in (dict, list, float) else v for v in value]
    if t is float and value.is_integer():
        return int(value)
    return value


# ignore set -> its canonical text function (text_function)
_text_functions: dict[frozenset[str], Callable[[Any], str]] = {}


# ---- flat arguments: "same canonical text?" without encoding ---------------------------------
# The loop guard asks on every watched call whether this call's canonical text equals the previous
# one's. For the most common shape, a flat dict of short scalars, a copy of the dict answers that
# without an encode (`same_flat`); graphmind-core's tests/test_loop_guard_flat.py proves the
# answers equal over awkward values. The bounds keep what a streak holds on to small.
# `payload.flat_scalar_chars` measures inputs flat by the same bounds (one pass for both).
FLAT_MAX_KEYS = FLAT_KEYS
FLAT_MAX_CHARS = FLAT_STR


def flat_copy(args: Any, ignore: frozenset[str]) -> dict[str, Any] | None:
    """A copy of `args` when it is an exact dict of at most FLAT_MAX_KEYS exact-str keys, none of them
    ignored, whose values are of exact type str (at most FLAT_MAX_CHARS), int, bool, None or a
    finite float; else None (the caller compares canonical texts). A key or str with a surrogate
    code point is not flat: the ASCII text writes an astral character and its two UTF-16 halves
    alike (both as a pair of \\u escapes), where the copies differ."""
    if type(args) is not dict or len(args) > FLAT_MAX_KEYS or not ignore.isdisjoint(args):
        return None
    for k, v in args.items():
        t = type(v)
        if type(k) is not str or not surrogate_free(k):
            return None
        if t is str:
            if len(v) > FLAT_MAX_CHARS or not surrogate_free(v):
                return None
        elif not (t is int or t is bool or v is None or (t is float and v - v == 0)):  # v - v: NaN, inf
            return None
    return args.copy()


def flat_owned(args: Any, ignore: frozenset[str]) -> dict[str, Any] | None:
    """`flat_copy` of a node's owned input (`NodeSpec.owned`: fresh containers the node keeps, whose
    leaves are JSON scalars, so no surrogate, NaN or infinity): the dict itself, no copy and no
    surrogate search; None when it is not flat (a nested value, a long str, too many keys)."""
    if type(args) is not dict or len(args) > FLAT_MAX_KEYS or not ignore.isdisjoint(args):
        return None
    for k, v in args.items():
        t = type(v)
        if type(k) is not str or (t is str and len(v) > FLAT_MAX_CHARS) or t is dict or t is list:
            return None
    return args


def same_flat(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two `flat_copy` dicts have the same canonical text. Keys: the same set. Values: a
    str's text is one-to-one (no surrogates: `flat_copy`); numbers are equal exactly when their texts are (an integral float is
    written as the int, 1.0 and 1 are both "1", Python compares int and float exactly); None only
    equals None; but True == 1 == 1.0 in Python while JSON writes "true": so the bools must sit at
    the same keys."""
    if a != b:
        return False
    for k, v in a.items():  # noqa: SIM110 (a loop, not all(<generator>): this runs on every identical call)
        if (type(v) is bool) is not (type(b[k]) is bool):
            return False
    return True
