from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import threading
import time
from typing import Any

import pytest

from graphmind._loop.guard import (
    LoopGuard,
    LoopGuardConfig,
    LoopHit,
    fingerprint,
    resolve_loop_guard_config,
)
from graphmind.testing import one_kb_tool_args

DETACHED_WARNING = (
    "[graphmind] possible loop: search (tool:search) was called 3× in a row with identical arguments; "
    "no debugger is attached to hold it (start `graphmind` to pause it there). Polling on purpose? add it to "
    'loop_guard={"allow_nodes": [...]} or GRAPHMIND_LOOP_ALLOW; GRAPHMIND_ON_LOOP=off silences this'
)
WARN_MODE_WARNING = (
    "[graphmind] possible loop: search (tool:search) was called 3× in a row with identical arguments; "
    "GRAPHMIND_ON_LOOP=warn, so it is not being held. Polling on purpose? add it to "
    'loop_guard={"allow_nodes": [...]} or GRAPHMIND_LOOP_ALLOW; GRAPHMIND_ON_LOOP=off silences this'
)


class Harness:
    """A LoopGuard plus a seq counter, called the way the engine calls it."""

    def __init__(self, config: LoopGuardConfig | None = None, attached: bool = True) -> None:
        self.warnings: list[str] = []
        self.guard = LoopGuard(config or LoopGuardConfig(), self.warnings.append)
        self.attached = attached
        self.seq = 0

    def call(
        self,
        name: str = "search",
        args: Any = None,
        *,
        kind: str = "tool",
        run: str = "r1",
        hide: bool = False,
    ) -> LoopHit | None:
        self.seq += 1
        return self.guard.observe(
            run_id=run,
            node_id=f"{kind}:{name}",
            kind=kind,
            name=name,
            args={"q": "x"} if args is None else args,
            seq=self.seq,
            attached=self.attached,
            hide_fingerprint=hide,
        )


# ---- the acceptance lines -----------------------------------------------------------
def test_three_identical_calls_are_held_at_the_third_when_attached() -> None:
    h = Harness()
    assert h.call() is None
    assert h.call() is None
    hit = h.call()
    assert hit is not None
    assert hit.as_wire() == {
        "repeats": 3,
        "firstSeq": 1,
        "lastSeq": 3,
        "fingerprint": fingerprint({"q": "x"}),
    }
    assert len(hit.fingerprint) == 64
    assert h.warnings == []


def test_three_identical_calls_warn_once_when_detached() -> None:
    h = Harness(attached=False)
    for _ in range(6):
        assert h.call() is None
    assert h.warnings == [DETACHED_WARNING]


def test_warn_mode_never_holds_and_warns_once_per_streak() -> None:
    h = Harness(LoopGuardConfig(mode="warn", mode_origin="env"))
    for _ in range(4):
        assert h.call() is None
    h.call("read")
    for _ in range(3):
        assert h.call() is None
    assert h.warnings == [WARN_MODE_WARNING, WARN_MODE_WARNING]


def test_alternating_tools_are_never_held() -> None:
    h = Harness()
    for _ in range(10):
        assert h.call("search") is None
        assert h.call("read") is None
    assert h.warnings == []


def test_integral_floats_count_as_the_same_number() -> None:
    h = Harness()
    h.call(args={"a": 1.0})
    h.call(args={"a": 1})
    assert h.call(args={"a": 1.0}) is not None


def test_pagination_keys_make_calls_different() -> None:
    h = Harness()
    for page in range(2, 8):
        assert h.call(args={"q": "x", "page": page}) is None


def test_meta_with_a_fresh_progress_token_is_ignored() -> None:
    h = Harness()
    h.call(args={"q": "x", "_meta": {"progressToken": 1}})
    h.call(args={"q": "x", "_meta": {"progressToken": 2}})
    hit = h.call(args={"nested": None, "q": "x", "_meta": {"progressToken": 3}} | {"nested": None})
    assert hit is None  # a different argument set ("nested" added): the streak restarted
    h.call(args={"q": "x", "nested": None, "_meta": {"progressToken": 4}})
    assert h.call(args={"nested": None, "q": "x", "_meta": {"progressToken": 5}}) is not None


def test_an_allow_listed_tool_is_never_held_nor_warned() -> None:
    for allow in (("tool:search",), ("search",)):
        for attached in (True, False):
            h = Harness(LoopGuardConfig(allow_nodes=allow), attached=attached)
            for _ in range(6):
                assert h.call() is None
            assert h.warnings == []


# ---- the rest of the page's rules -----------------------------------------------------------
def test_llm_steps_between_do_not_break_the_streak() -> None:
    h = Harness()
    hits = []
    for _ in range(3):
        assert h.call("step", args={"messages": ["grows"] * h.seq}, kind="llm") is None
        hits.append(h.call())
    assert hits[:2] == [None, None]
    assert hits[2] is not None and hits[2].first_seq == 2 and hits[2].last_seq == 6


def test_same_tool_with_other_arguments_restarts_the_count() -> None:
    h = Harness()
    h.call(args={"q": "x"})
    h.call(args={"q": "x"})
    h.call(args={"q": "y"})
    h.call(args={"q": "x"})
    assert h.call(args={"q": "x"}) is None
    assert h.call(args={"q": "x"}) is not None


def test_every_further_identical_call_is_held_and_the_count_keeps_running() -> None:
    h = Harness(attached=False)
    for _ in range(3):
        h.call()
    assert len(h.warnings) == 1
    h.attached = True  # a debugger attaches later: the next identical call is held
    hit = h.call()
    assert hit is not None and hit.repeats == 4 and hit.first_seq == 1
    hit = h.call()
    assert hit is not None and hit.repeats == 5


def test_streaks_are_per_run() -> None:
    h = Harness()
    for _ in range(2):
        h.call(run="a")
        h.call(run="b")
    assert h.call(run="a") is not None
    assert h.call(run="b") is not None


def test_key_order_and_whitespace_do_not_matter() -> None:
    h = Harness()
    h.call(args={"a": 1, "b": [1, {"x": "y", "z": 2}]})
    h.call(args={"b": [1, {"z": 2, "x": "y"}], "a": 1})
    assert h.call(args={"b": [1, {"z": 2.0, "x": "y"}], "a": 1.0}) is not None


def test_watched_kinds_and_threshold_come_from_config() -> None:
    h = Harness(LoopGuardConfig(kinds=("llm",), threshold=2))
    assert h.call() is None and h.call() is None and h.call() is None  # tools are not watched now
    assert h.call("step", kind="llm") is None
    assert h.call("step", kind="llm") is not None


def test_ignore_keys_replace_the_default_and_apply_at_every_depth() -> None:
    h = Harness(LoopGuardConfig(ignore_keys=("requestId",)))
    h.call(args={"q": "x", "inner": {"requestId": 1}, "requestId": 1})
    h.call(args={"q": "x", "inner": {"requestId": 2}, "requestId": 2})
    assert h.call(args={"q": "x", "inner": {"requestId": 3}}) is not None
    assert fingerprint({"_meta": 1}, ("requestId",)) != fingerprint({"_meta": 2}, ("requestId",))


def test_the_fingerprint_is_redacted_under_hidden_inputs() -> None:
    h = Harness()
    h.call(hide=True)
    h.call(hide=True)
    hit = h.call(hide=True)
    assert hit is not None and hit.fingerprint == "__REDACTED__"


def test_off_or_zero_threshold_watches_nothing() -> None:
    for config in (LoopGuardConfig(mode="off"), LoopGuardConfig(threshold=0)):
        h = Harness(config)
        assert not config.enabled
        assert all(h.call() is None for _ in range(5))
        h.attached = False
        assert all(h.call() is None for _ in range(5))
        assert h.warnings == []


def test_parallel_identical_calls_are_counted() -> None:
    guard = LoopGuard(LoopGuardConfig(), lambda message: None)
    hits: list[LoopHit] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def call(seq: int) -> None:
        start.wait(5)
        hit = guard.observe(
            run_id="r",
            node_id="tool:search",
            kind="tool",
            name="search",
            args={"q": "x"},
            seq=seq,
            attached=True,
            hide_fingerprint=False,
        )
        if hit is not None:
            with lock:
                hits.append(hit)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(h.repeats for h in hits) == [3, 4, 5, 6, 7, 8]


def test_the_warning_never_contains_the_arguments() -> None:
    h = Harness(attached=False)
    for _ in range(3):
        h.call(args={"password": "hunter2"})
    assert len(h.warnings) == 1 and "hunter2" not in h.warnings[0]


def test_the_warning_names_the_option_when_the_option_chose_warn() -> None:
    h = Harness(resolve_loop_guard_config({"mode": "warn"}, {}))
    for _ in range(3):
        h.call()
    assert 'loop_guard={"mode": "warn"}, so it is not being held' in h.warnings[0]


def test_odd_arguments_never_break_the_guard() -> None:
    class Proxy:
        def __getattribute__(self, name: str) -> Any:
            raise RuntimeError("trap")

    cyclic: list[Any] = []
    cyclic.append(cyclic)
    h = Harness()
    for args in (Proxy(), cyclic, {1: "a", "1": "b"}, {(1, 2): 3}, b"\x00" * 10, float("nan")):
        for _ in range(2):
            assert h.call(args=args) is None
        assert h.call(args=args) is not None, args


# ---- fingerprint ----------------------------------------------------------------------------
class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Query:
    q: str


def test_fingerprint_canonical_forms() -> None:
    assert fingerprint({"a": 1.0, "b": -0.0}) == fingerprint({"b": 0, "a": 1})
    assert fingerprint([1e16]) == fingerprint([10**16])
    assert fingerprint({"a": 1.5}) != fingerprint({"a": 1})
    assert fingerprint({"a": True}) != fingerprint({"a": 1})
    assert fingerprint({"v": "1.0"}) != fingerprint(
        {"v": 1}
    )  # a string that looks like a float stays a string
    assert fingerprint({9: 1.0, 10: 2}) == fingerprint({9: 1, 10: 2})  # both paths order keys alike
    assert fingerprint((1, 2)) == fingerprint([1, 2])
    assert fingerprint(Query("x")) == fingerprint({"q": "x"})
    assert fingerprint({"c": Colour.RED}) == fingerprint({"c": "red"})
    assert fingerprint({"_meta": {"t": 1}, "q": 1}) == fingerprint({"q": 1})
    assert fingerprint({"text": 'a "_meta": b'}) != fingerprint({"text": "other"})
    assert fingerprint(b"a" * 100 + b"x") != fingerprint(b"a" * 100 + b"y")  # bytes compare in full
    assert fingerprint({"s": "é😀"}) == fingerprint({"s": "é😀"})


def test_fingerprinting_a_1kb_input_is_cheap() -> None:
    """Under 0.5 ms for 1 KB, and no dearer than a few plain sorted JSON digests of the same input.

    Best of 20 interleaved batches: on a shared machine a batch that lost the CPU says nothing about
    the fingerprint, and one that did not is there among twenty. The baseline (json.dumps with sorted
    keys, then SHA-256, the obvious way to fingerprint) is timed in the same batches, so a machine
    that is slow for both does not fail the ratio; a fingerprint that got slow does."""
    args = one_kb_tool_args(meta=False)
    assert 1000 <= len(str(args)) <= 1100

    def baseline() -> str:
        return hashlib.sha256(json.dumps(args, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    fingerprint(args)
    baseline()
    calls = 100
    best_ms, best_baseline_ms = float("inf"), float("inf")
    for _ in range(20):
        start = time.perf_counter()
        for _ in range(calls):
            fingerprint(args)
        best_ms = min(best_ms, (time.perf_counter() - start) / calls * 1000)
        start = time.perf_counter()
        for _ in range(calls):
            baseline()
        best_baseline_ms = min(best_baseline_ms, (time.perf_counter() - start) / calls * 1000)
    assert best_ms < 0.5, f"{best_ms:.4f} ms per fingerprint at best"
    ratio = best_ms / best_baseline_ms
    assert ratio < 4, (
        f"{best_ms:.4f} ms per fingerprint, {ratio:.1f}x a sorted JSON digest ({best_baseline_ms:.4f} ms)"
    )


# ---- configuration --------------------------------------------------------------------------
def test_defaults() -> None:
    config = resolve_loop_guard_config(None, {})
    assert config == LoopGuardConfig(
        threshold=3, mode="pause", allow_nodes=(), ignore_keys=("_meta",), kinds=("tool",)
    )
    assert config.enabled
    assert config.as_dict() == {
        "threshold": 3,
        "mode": "pause",
        "allow_nodes": [],
        "ignore_keys": ["_meta"],
        "kinds": ["tool"],
        "enabled": True,
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("5", 5), (" 7 ", 7), ("0", 0), ("", 3), ("-1", 3), ("2.5", 3), ("three", 3), ("+4", 3), ("٣", 3)],
)
def test_env_threshold(raw: str, expected: int) -> None:
    assert resolve_loop_guard_config(None, {"GRAPHMIND_LOOP_THRESHOLD": raw}).threshold == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("pause", "pause"),
        ("warn", "warn"),
        ("off", "off"),
        ("OFF", "off"),
        (" Warn ", "warn"),
        ("0", "off"),
        ("false", "off"),
        ("none", "off"),
        ("NONE", "off"),
        ("hold", "pause"),
        ("1", "pause"),
        ("", "pause"),
    ],
)
def test_env_mode(raw: str, expected: str) -> None:
    assert resolve_loop_guard_config(None, {"GRAPHMIND_ON_LOOP": raw}).mode == expected


def test_env_allow_list() -> None:
    config = resolve_loop_guard_config(None, {"GRAPHMIND_LOOP_ALLOW": " pollJob, tool:heartbeat ,,"})
    assert config.allow_nodes == ("pollJob", "tool:heartbeat")


def test_option_beats_env_beats_default_field_by_field() -> None:
    env = {"GRAPHMIND_LOOP_THRESHOLD": "4", "GRAPHMIND_ON_LOOP": "warn", "GRAPHMIND_LOOP_ALLOW": "a"}
    config = resolve_loop_guard_config({"threshold": 5, "allow_nodes": ["poll_job"]}, env)
    assert (config.threshold, config.mode, config.allow_nodes) == (5, "warn", ("poll_job",))
    config = resolve_loop_guard_config({"mode": "pause"}, env)
    assert (config.threshold, config.mode, config.allow_nodes) == (4, "pause", ("a",))


def test_camel_case_option_keys_and_replacing_lists() -> None:
    config = resolve_loop_guard_config(
        {"allowNodes": ["x"], "ignoreKeys": ["rid"], "kinds": ["tool", "llm"]}, {}
    )
    assert config.allow_nodes == ("x",) and config.ignore_keys == ("rid",) and config.kinds == ("tool", "llm")
    assert resolve_loop_guard_config({"ignore_keys": []}, {}).ignore_keys == ()


def test_loop_guard_false_turns_it_off_and_true_or_none_mean_defaults() -> None:
    assert not resolve_loop_guard_config(False, {}).enabled
    assert resolve_loop_guard_config(True, {"GRAPHMIND_ON_LOOP": "warn"}).mode == "warn"
    assert resolve_loop_guard_config({"threshold": None}, {"GRAPHMIND_LOOP_THRESHOLD": "6"}).threshold == 6


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"treshold": 5}, "no option 'treshold'"),
        ({"threshold": -1}, "threshold=-1"),
        ({"threshold": True}, "threshold=True"),
        ({"threshold": 2.5}, "threshold=2.5"),
        ({"mode": "hold"}, "mode='hold'"),
        ({"allow_nodes": [1]}, "allow_nodes=[1]"),
        ("yes", "loop_guard='yes'"),
    ],
)
def test_option_mistakes_are_one_line_errors(option: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as info:
        resolve_loop_guard_config(option, {})
    assert "\n" not in str(info.value)


def test_a_dict_whose_items_raise_still_fingerprints() -> None:
    class Bad(dict):  # type: ignore[type-arg,unused-ignore]
        def items(self) -> Any:
            raise RuntimeError("no")

        def keys(self) -> Any:
            raise RuntimeError("no")

    assert fingerprint(Bad(a=1)) == fingerprint(Bad(a=1))
    assert len(fingerprint(Bad(a=1))) == 64


def _reference_canonical(value: Any, ignore: frozenset[str]) -> Any:
    """The definition, written the slow obvious way (exact JSON types, string keys)."""
    if isinstance(value, dict):
        return {k: _reference_canonical(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, (list, tuple)):
        return [_reference_canonical(v, ignore) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def test_every_path_of_the_fingerprint_matches_the_definition() -> None:
    import hashlib
    import json
    import random

    rng = random.Random(3)
    leaves: list[Any] = [
        0,
        1,
        -7,
        1.0,
        -0.0,
        2.5,
        1e16,
        1e-5,
        3e20,
        True,
        False,
        None,
        "",
        "v1.0",
        "e+5",
        '"_meta":',
        "é😀",
        'a"b\\c',
        12345678901234567890,
    ]
    keys = ["a", "b", "_meta", "page", "Z", "é", "_meta2", "10", "9"]

    def build(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice(leaves)
        if roll < 0.7:
            return {rng.choice(keys): build(depth + 1) for _ in range(rng.randint(0, 4))}
        items = [build(depth + 1) for _ in range(rng.randint(0, 3))]
        return tuple(items) if rng.random() < 0.2 else items

    for ignore in (frozenset({"_meta"}), frozenset({"_meta", "page"}), frozenset()):
        for _ in range(3000):
            value = build(0)
            text = json.dumps(_reference_canonical(value, ignore), sort_keys=True, separators=(",", ":"))
            assert fingerprint(value, ignore) == hashlib.sha256(text.encode()).hexdigest(), value


def test_old_runs_are_forgotten_so_memory_stays_bounded() -> None:
    from graphmind._loop.guard import MAX_TRACKED_RUNS

    h = Harness()
    h.call(run="first")
    h.call(run="first")
    for i in range(MAX_TRACKED_RUNS):
        h.call(run=f"other-{i}")
    assert len(h.guard._streaks) == MAX_TRACKED_RUNS
    assert h.call(run="first") is None  # its streak was evicted: counting starts again
    h.guard.forget_run("first")
    assert "first" not in h.guard._streaks


def test_arguments_that_differ_only_past_the_size_limit_are_not_a_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Environment page: the comparison uses the full arguments although the recorded input is
    # truncated. Two 600 KB queries that differ only in their last character record the same
    # shrunk input, yet they are different calls; the same one three times is a loop.
    import graphmind
    from graphmind._events.payload import MAX_PAYLOAD_BYTES, shrink_measured

    big = "x" * (MAX_PAYLOAD_BYTES + 100_000)
    first, second = {"q": big + "a"}, {"q": big + "b"}
    assert shrink_measured(first)[0] == shrink_measured(second)[0]  # what the hub would see
    assert shrink_measured(first)[0] != first  # …is the truncated form
    caplog.set_level("WARNING", logger="graphmind")
    client = graphmind.Client(app="loop-big", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    try:
        search = client.wrap(lambda q: len(q), "search")
        for args in (first, second, first, second, first, second):
            search(**args)
        assert "possible loop" not in caplog.text
        for _ in range(3):
            search(**first)
        assert "possible loop: search (tool:search) was called 3× in a row" in caplog.text
    finally:
        client.dispose()


def test_a_retry_answered_after_another_call_took_the_line_leaves_that_streak_alone() -> None:
    # search holds on its 3rd repeat; while it is held, fetch is called twice on the same line (a
    # parallel call in the run); the retry answered then must not reset fetch's streak.
    h = Harness()
    h.call("search")
    h.call("search")
    hit = h.call("search")
    assert hit is not None
    assert h.call("fetch", {"u": "a"}) is None
    assert h.call("fetch", {"u": "a"}) is None
    hit.restart()
    third = h.call("fetch", {"u": "a"})
    assert third is not None and third.repeats == 3 and third.first_seq == 4
