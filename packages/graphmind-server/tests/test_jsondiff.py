"""Where two JSON values differ (graphmind_server/compare/jsondiff.py, `graphmind diff`'s detail lines)."""

from __future__ import annotations

from graphmind_server.compare.jsondiff import ABSENT, differences, parse_keys, report, window, without


def test_each_differing_leaf_is_named_by_its_path_and_a_missing_one_is_absent() -> None:
    a = {"messages": [{"role": "user", "content": "hi"}], "a b": 1, "same": {"x": [1, 2]}}
    b = {"messages": [{"role": "user", "content": "ho"}, {"role": "tool"}], "a b": 2, "same": {"x": [1, 2]}}
    assert differences(a, b, "input") == [
        ("input.messages[0].content", "hi", "ho"),
        ("input.messages[1]", ABSENT, {"role": "tool"}),
        ('input["a b"]', 1, 2),
    ]
    assert differences({"k": 1, "j": 2}, {"j": 2, "k": 1}, "output") == []  # key order never counts


def test_ignored_keys_go_at_every_depth_and_the_value_given_is_kept() -> None:
    value = {"id": 1, "items": [{"id": 2, "text": "t"}]}
    assert without(value, parse_keys(" id ,, ")) == {"items": [{"text": "t"}]}
    assert value == {"id": 1, "items": [{"id": 2, "text": "t"}]}
    assert parse_keys(None) == frozenset()


def test_the_window_opens_before_the_first_difference_and_is_cut_on_both_sides() -> None:
    head, tail = "x" * 500, "y" * 500
    at, a, b = window(f"{head}A\n{tail}", f"{head}B\n{tail}")
    assert at == 500
    assert a == f'"…{"x" * 60}A\\n{"y" * 98}…"' and b == f'"…{"x" * 60}B\\n{"y" * 98}…"'
    assert window(ABSENT, {"k": 1})[1:] == ("(absent)", '{"k": 1}')


def test_the_report_shows_five_places_and_counts_the_rest() -> None:
    lines = report("output", list(range(8)), [n + 1 for n in range(8)])
    assert lines[0] == "    at output[0]:" and lines[1:3] == ["      A: 0", "      B: 1"]
    assert lines[-1] == "    … and 3 more differing places in output" and len(lines) == 5 * 3 + 1
