"""The loop guard compares flat arguments of short scalars as copies, not by their canonical text
(_fingerprint.flat_copy / same_flat): it must count exactly the calls the text comparison counts."""

from __future__ import annotations

import enum
import random
import sys
from types import FrameType
from typing import Any

from graphmind._events.jsonsafe import json_scalar
from graphmind._loop.fingerprint import (
    FLAT_MAX_CHARS,
    FLAT_MAX_KEYS,
    canonical_text,
    flat_copy,
    flat_owned,
    same_flat,
)
from graphmind._loop.guard import LoopGuard, LoopGuardConfig

IGNORE = frozenset({"_meta"})


class Level(enum.IntEnum):
    ONE = 1


class Word(str):
    pass


# Values whose texts collide across types (1, 1.0, True; "1" and 1; -0.0 and 0), escape alike or
# not (surrogates, quotes, non-ASCII), sit at the size bound, or make a dict not flat (NaN, inf,
# subclasses, containers, long text).
LEAVES: list[Any] = [
    0,
    1,
    -1,
    2,
    1.0,
    -0.0,
    0.0,
    2.0,
    1.5,
    0.1,
    1e16,
    10**16,
    1e-5,
    2**53 + 1,
    2.0**53,
    10**30,
    True,
    False,
    None,
    "",
    "1",
    "1.0",
    "true",
    "null",
    "a",
    "A",
    "é",
    "\ud800",
    'q"\\',
    "x" * FLAT_MAX_CHARS,
    "x" * (FLAT_MAX_CHARS + 1),
    float("nan"),
    float("nan"),  # another NaN object: NaN != NaN, yet both are written "NaN"
    float("inf"),
    float("-inf"),
    Level.ONE,
    Word("a"),
    [1],
    {"a": 1},
    (1,),
    b"a",
]
KEYS = ["a", "b", "c", "_meta", "é", "1"]


def _build(rng: random.Random) -> dict[Any, Any]:
    return {rng.choice(KEYS): rng.choice(LEAVES) for _ in range(rng.randint(0, 4))}


def _twin(rng: random.Random, value: dict[Any, Any]) -> dict[Any, Any]:
    """Another dict near `value`: the same, one value swapped, one key dropped, or reordered."""
    roll = rng.random()
    out = dict(value)
    if roll < 0.3 or not out:
        return out
    key = rng.choice(list(out))
    if roll < 0.8:
        out[key] = rng.choice(LEAVES)
    elif roll < 0.9:
        del out[key]
    else:
        out = dict(reversed(list(out.items())))
    return out


def _same_by_guard(a: Any, b: Any) -> bool:
    """Whether the guard counts `b` right after `a` as the same call (threshold 2 warns at once)."""
    warnings: list[str] = []
    guard = LoopGuard(LoopGuardConfig(threshold=2, mode="warn"), warnings.append)
    for seq, args in enumerate((a, b), 1):
        guard.observe(
            run_id="r",
            node_id="tool:t",
            kind="tool",
            name="t",
            args=args,
            seq=seq,
            attached=False,
            hide_fingerprint=False,
        )
    return bool(warnings)


def test_flat_arguments_count_as_identical_exactly_when_their_canonical_texts_are_equal() -> None:
    rng = random.Random(17)
    flat_pairs = 0
    for _ in range(20_000):
        a = _build(rng)
        b = _twin(rng, a) if rng.random() < 0.7 else _build(rng)
        expected = canonical_text(a) == canonical_text(b)
        assert _same_by_guard(a, b) is expected, (a, b)
        fa, fb = flat_copy(a, IGNORE), flat_copy(b, IGNORE)
        if fa is not None and fb is not None:
            flat_pairs += 1
            assert same_flat(fa, fb) is expected, (a, b)
    assert flat_pairs > 5_000  # the flat comparison itself was exercised, not only the text one


def _owned_by_guard(a: Any, b: Any) -> bool:
    """`_same_by_guard` for two owned inputs (NodeSpec.owned: kept as they are when flat)."""
    warnings: list[str] = []
    guard = LoopGuard(LoopGuardConfig(threshold=2, mode="warn"), warnings.append)
    for seq, args in enumerate((a, b), 1):
        guard.watch("r", "tool:t", "t", args, seq, lambda: False, False, False, None, True)
    return bool(warnings)


def _ownable(value: dict[Any, Any]) -> bool:
    """What a describer may hand over owned: str keys, JSON scalars or fresh containers as values."""
    return all(
        type(k) is str and json_scalar(k) and (json_scalar(v) or type(v) in (dict, list))
        for k, v in value.items()
    )


def test_an_owned_input_is_flat_exactly_when_its_copy_would_be_and_counts_the_same() -> None:
    rng = random.Random(23)
    owned_pairs = 0
    for _ in range(20_000):
        a = _build(rng)
        b = _twin(rng, a) if rng.random() < 0.7 else _build(rng)
        if not (_ownable(a) and _ownable(b)):
            continue
        owned_pairs += 1
        for value in (a, b):
            kept = flat_owned(value, IGNORE)
            assert (kept is None) is (flat_copy(value, IGNORE) is None), value
            assert kept is None or kept is value  # no copy: the node owns it
        assert _owned_by_guard(a, b) is (canonical_text(a) == canonical_text(b)), (a, b)
    assert owned_pairs > 5_000


def test_what_makes_arguments_not_flat() -> None:
    assert flat_copy({"q": "x", "n": 1, "f": 1.5, "b": True, "z": None}, IGNORE) is not None
    for value in (float("nan"), float("inf"), Level.ONE, Word("a"), [1], b"a", "x" * (FLAT_MAX_CHARS + 1)):
        assert flat_copy({"v": value}, IGNORE) is None, value
    assert flat_copy({"_meta": 1}, IGNORE) is None  # an ignored key: the text path drops it
    assert flat_copy({1: "a"}, IGNORE) is None
    assert flat_copy({f"k{i}": i for i in range(FLAT_MAX_KEYS + 1)}, IGNORE) is None
    assert flat_copy(["a"], IGNORE) is None


def test_a_flat_copy_does_not_follow_the_apps_later_changes() -> None:
    warnings: list[str] = []
    guard = LoopGuard(LoopGuardConfig(threshold=2, mode="warn"), warnings.append)
    args = {"q": "x"}
    kw: dict[str, Any] = {"run_id": "r", "node_id": "tool:t", "kind": "tool", "name": "t"}
    guard.observe(**kw, args=args, seq=1, attached=False, hide_fingerprint=False)
    args["q"] = "y"  # the app reuses its dict for the next call
    guard.observe(**kw, args=args, seq=2, attached=False, hide_fingerprint=False)
    assert warnings == []  # {"q": "x"} then {"q": "y"}: not the same call


def test_a_loop_on_flat_arguments_is_held_with_the_texts_fingerprint() -> None:
    guard = LoopGuard(LoopGuardConfig(), lambda message: None)
    hit = None
    for seq in (1, 2, 3):
        hit = guard.observe(
            run_id="r",
            node_id="tool:t",
            kind="tool",
            name="t",
            args={"q": "x", "n": 2.0} if seq != 2 else {"n": 2, "q": "x"},
            seq=seq,
            attached=True,
            hide_fingerprint=False,
        )
    assert hit is not None and hit.repeats == 3
    from graphmind._loop.fingerprint import fingerprint

    assert hit.fingerprint == fingerprint({"q": "x", "n": 2})


def test_an_astral_character_and_its_utf16_halves_count_as_the_canonical_text_says() -> None:
    # The canonical text is ASCII: "\U0001f600" and the two code points "\ud83d\ude00" are both
    # written \ud83d\ude00, so the text comparison counts them identical (and the recording shows
    # the same character for both); Python's == on the flat copies said they differ.
    astral, halves = "grin \U0001f600", "grin \ud83d\ude00"
    for a, b in (({"q": astral}, {"q": halves}), ({astral: 1}, {halves: 1})):
        assert canonical_text(a) == canonical_text(b)
        assert _same_by_guard(a, b), (a, b)
        assert _same_by_guard(b, a), (b, a)
    assert flat_copy({"q": "é ✓ \U0001f600"}, IGNORE) is not None  # no surrogate: still flat


def test_args_changed_by_another_thread_while_copied_do_not_break_the_call() -> None:
    """`flat_copy` iterates the app's dict in Python bytecode, so another thread can insert a key
    between two steps of its loop (RuntimeError: dictionary changed size during iteration). A
    trace hook plays that thread here, deterministically, at the loop's first line."""
    args = {"a": 1, "b": 2, "c": 3}
    inserted: list[bool] = []

    def in_loop(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and not inserted and "k" in frame.f_locals:
            inserted.append(True)
            args["other thread's key"] = 1
        return in_loop

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return in_loop if frame.f_code is flat_copy.__code__ else None

    guard = LoopGuard(LoopGuardConfig(), lambda message: None)
    previous = sys.gettrace()  # coverage's tracer, if any: put back after
    sys.settrace(tracer)
    try:
        hit = guard.watch("r", "tool:t", "t", args, 1, lambda: False, False, False, None)
    finally:
        sys.settrace(previous)
    assert inserted and hit is None  # the call goes on, uncounted, as for any unreadable args
