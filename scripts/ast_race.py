"""Can formatting a traceback in one thread break `ast.parse` in another? (docs/dev/ast-race.md)

    uv run python scripts/ast_race.py [seconds per case]

On CPython 3.11, `traceback.format_exception` places its `^^^` markers with `ast.parse` of each
frame's line (`traceback._extract_caret_anchors_from_line_segment`), and `ast.parse` keeps its
recursion depth in per-interpreter state (`struct ast_state`, Python/Python-ast.c
`PyAST_mod2obj`) until CPython 3.12.2 / 3.11.8 (gh-106905, PR #113035). While one thread builds
its AST objects, a garbage collection that runs Python code (a `__del__`, a `gc.callbacks` entry)
can hand the GIL to another thread; if that one parses, the first thread's depth count is
overwritten and its parse fails with `SystemError: AST constructor recursion depth mismatch`.

Thread "parser" parses a nested module in a loop (pytest's assertion rewriting and its failure
formatting do that); thread "formatter" formats a failed call's exception in a loop, as
GraphMind's `describe_error` does for every node that fails. Cases:

- carets + finalizers: the formatter takes CPython's caret path; garbage with `__del__` in cycles
  is made all along (as any large test suite makes it);
- carets, no finalizers: the same without Python code in collections;
- describe_error: GraphMind's formatting as it is now (no caret path), with finalizers.

Prints, per case, the SystemErrors each thread met.
"""

from __future__ import annotations

import ast
import gc
import sys
import threading
import time
import traceback
from collections.abc import Callable

from graphmind.adapter import describe_error

# A module whose AST is large and deep: a long build in `ast2obj_*`, with many allocations.
SOURCE = "\n".join(f"x{i} = " + "(" * 40 + f"a{i} + b[{i}] * c.d(e, f=g)" + ")" * 40 for i in range(60))


class Cycle:
    """Garbage in a reference cycle whose `__del__` is Python code: a collection runs it."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _ = [0] * 4


def failing_call() -> None:
    values: dict[str, list[int]] = {"a": [1]}
    _ = values["a"][0] + values["missing"][0]  # a sub-expression fails: the line gets carets


def an_exception() -> BaseException:
    try:
        failing_call()
    except KeyError as exc:
        return exc
    raise AssertionError("unreachable")


def with_carets(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def run_case(
    seconds: float, format_error: Callable[[BaseException], str], finalizers: bool
) -> dict[str, int]:
    errors = {"parser": 0, "formatter": 0, "parses": 0, "formats": 0}
    stop = threading.Event()
    exc = an_exception()

    def parser() -> None:
        while not stop.is_set():
            try:
                ast.parse(SOURCE)
                errors["parses"] += 1
            except SystemError:
                errors["parser"] += 1

    def formatter() -> None:
        while not stop.is_set():
            try:
                format_error(exc)
                errors["formats"] += 1
            except SystemError:
                errors["formatter"] += 1
            if finalizers:
                for _ in range(50):
                    Cycle()

    threads = [threading.Thread(target=parser), threading.Thread(target=formatter)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)  # the measurement's duration, not a synchronisation
    stop.set()
    for thread in threads:
        thread.join()
    gc.collect()
    return errors


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 10.0
    sys.setswitchinterval(1e-5)  # more GIL hand-offs: the race shows in seconds, not hours
    print(f"Python {sys.version.split()[0]}, {seconds:.0f} s per case")
    cases = [
        ("carets + finalizers", with_carets, True),
        ("carets, no finalizers", with_carets, False),
        ("describe_error + finalizers", lambda exc: describe_error(exc)["stack"], True),
    ]
    for label, format_error, finalizers in cases:
        errors = run_case(seconds, format_error, finalizers)
        print(
            f"{label:30} parser: {errors['parser']} SystemError in {errors['parses'] + errors['parser']} parses; "
            f"formatter: {errors['formatter']} in {errors['formats'] + errors['formatter']} formats"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
