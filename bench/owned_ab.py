"""Same-run A/B of owned payloads (docs/adapters.md, "Owned payloads"): one of the
`bench/*_overhead.py` benches with its `detached` variant twice more, interleaved round by round
with it on the same clients:

  detached-copy   the pipeline ignores every owned claim (each payload gets its snapshot copy)
  detached-plain  it ignores `trusted` too (every event takes the general `_plain` pass)

    uv run python bench/owned_ab.py openai_overhead --cpu [--rounds 11] [--calls 100]

The variants swap the pipeline's own functions for copies compiled from their source with the claim
branch turned off, only during their own turn; `attached` and the peer are left out.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

import _harness

from graphmind._events import pipeline

EP: Any = pipeline.EventPipeline
ORIGINAL = {"_plain_trusted": EP._plain_trusted, "process_sized": EP.process_sized}


def _compiled(fn: Callable[..., Any], edits: list[tuple[str, str]]) -> Callable[..., Any]:
    src = textwrap.dedent(inspect.getsource(fn))
    for old, new in edits:
        if old not in src:
            raise SystemExit(f"the pipeline changed: {old!r} is not in {fn.__name__}")
        src = src.replace(old, new)
    namespace: dict[str, Any] = {}
    exec(compile(src, f"<owned_ab {fn.__name__}>", "exec"), vars(pipeline), namespace)
    return namespace[fn.__name__]  # type: ignore[no-any-return]


COPYING = _compiled(
    EP._plain_trusted, [("if owned and (t is dict or t is list) and k in _OWNED_FIELDS:", "if False:")]
)
UNTRUSTED = _compiled(
    EP.process_sized,
    [
        ("elif self._trusted_ok and trusted and", "elif False and"),
        ("out, size = self._process(event, trusted)", "out, size = self._process(event, False)"),
        ("return self._process(event, trusted)", "return self._process(event, False)"),
    ],
)


def _restore() -> None:
    for name, fn in ORIGINAL.items():
        setattr(EP, name, fn)


def _copy_on() -> None:
    EP._plain_trusted = COPYING


def _plain_on() -> None:
    EP._plain_trusted = COPYING
    EP.process_sized = UNTRUSTED


_interleaved = _harness.interleaved_rounds


def _rounds(variants: Mapping[str, _harness.Variant], *args: Any, **kwargs: Any) -> _harness.Samples:
    on, off, shapes = variants["detached"]

    def turn(patch: Callable[[], None]) -> _harness.Variant:
        return (lambda: (on(), patch()), lambda: (_restore(), off()), shapes)

    kept = {"bare": variants["bare"], "detached": variants["detached"]}
    kept["detached-copy"] = turn(_copy_on)
    kept["detached-plain"] = turn(_plain_on)
    return _interleaved(kept, *args, **kwargs)


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    bench = sys.argv[1]
    sys.argv = [bench, *sys.argv[2:]]
    _harness.interleaved_rounds = _rounds  # before the bench imports it by name
    importlib.import_module(bench).main()


if __name__ == "__main__":
    main()
