"""A failed call's stack as the wire carries it (`describe_error`): the text of
`traceback.format_exception`, chained exceptions included, with no `^^^` markers, so formatting it
never runs `ast.parse`. On CPython 3.11 before 3.11.8 a parse here can make another thread's parse
fail ("SystemError: AST constructor recursion depth mismatch"; docs/dev/ast-race.md)."""

from __future__ import annotations

import ast
import sys
from typing import Any

import pytest

from graphmind.adapter import describe_error


def _lookup(values: dict[str, list[int]]) -> int:
    return values["a"][0] + values["missing"][0]  # a sub-expression fails: 3.11 would mark it


def _raised(fn: Any) -> BaseException:
    try:
        fn()
    except BaseException as exc:
        return exc
    raise AssertionError("did not raise")


def test_formatting_a_failed_calls_stack_never_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    def first_then_second() -> None:
        try:
            _lookup({"a": [1]})
        except KeyError as exc:
            raise RuntimeError("lookup failed") from exc

    exc = _raised(first_then_second)
    parses: list[str] = []
    real = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        parses.append(str(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    error = describe_error(exc)

    assert parses == []
    stack = error["stack"]
    assert (error["name"], error["message"]) == ("RuntimeError", "lookup failed")
    assert 'return values["a"][0] + values["missing"][0]' in stack  # the source line is there
    assert "KeyError: 'missing'" in stack
    assert "The above exception was the direct cause of the following exception:" in stack
    assert "^" not in stack


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11+")
def test_an_exception_group_keeps_its_members() -> None:
    def raise_group() -> None:
        raise ExceptionGroup("both", [ValueError("one"), TypeError("two")])  # noqa: F821  (3.11+)

    stack = describe_error(_raised(raise_group))["stack"]

    assert "ExceptionGroup: both (2 sub-exceptions)" in stack
    assert "ValueError: one" in stack and "TypeError: two" in stack
