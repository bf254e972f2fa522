"""Loop-guard fingerprint cost for a 1 KB argument dict.

    uv run python bench/fingerprint.py [--rounds 20000]

Every watched tool call pays this once at its start, attached or not. Prints the median time per
fingerprint of graphmind's canonicaliser, next to the straightforward pure-Python way (a
normalising pass, then json.dumps(sort_keys=True) + sha256) and, when orjson is installed, an
orjson-based one. Target: a median under 20 µs (the product bound for Python is 0.5 ms).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from graphmind._events.jsonsafe import to_jsonable
from graphmind._loop.guard import fingerprint
from graphmind.testing import one_kb_tool_args


def _naive_normalise(value: Any, ignore: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _naive_normalise(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_naive_normalise(v, ignore) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def naive(args: Any) -> str:
    """The obvious pure-Python canonicaliser: snapshot, normalise every node, dump sorted, hash."""
    text = json.dumps(
        _naive_normalise(to_jsonable(args), frozenset({"_meta"})), sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


def median_us(fn: Callable[[Any], str], args: Any, rounds: int) -> float:
    for _ in range(min(rounds, 1000)):
        fn(args)
    samples = []
    batch = 100
    for _ in range(max(rounds // batch, 1)):
        start = time.perf_counter()
        for _ in range(batch):
            fn(args)
        samples.append((time.perf_counter() - start) / batch * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    rounds = parser.parse_args().rounds
    args = one_kb_tool_args()
    plain = {k: v for k, v in args.items() if k != "_meta"}
    print(f"argument: {len(json.dumps(args))} bytes of JSON (with an MCP _meta to ignore)")

    ours = median_us(fingerprint, args, rounds)
    ours_plain = median_us(fingerprint, plain, rounds)
    floats = dict(plain, max_price=250.0)
    ours_floats = median_us(fingerprint, floats, rounds)
    base = median_us(naive, args, rounds)
    print(f"graphmind fingerprint           median {ours:7.2f} µs  (target < 20 µs)")
    print(f"  without _meta in the args     median {ours_plain:7.2f} µs")
    print(f"  with an integral float        median {ours_floats:7.2f} µs  (tidy pass, encoded twice)")
    print(f"naive normalise + dumps + sha256 median {base:7.2f} µs  ({base / ours:.1f}x ours)")
    try:
        import orjson  # type: ignore[import-not-found]
    except ImportError:
        print("orjson not installed: skipped (graphmind core does not depend on it)")
    else:

        def with_orjson(value: Any) -> str:
            data = orjson.dumps(_naive_normalise(value, frozenset({"_meta"})), option=orjson.OPT_SORT_KEYS)
            return hashlib.sha256(data).hexdigest()

        peer = median_us(with_orjson, args, rounds)
        print(f"orjson normalise + dumps + sha256 median {peer:7.2f} µs  ({peer / ours:.1f}x ours)")


if __name__ == "__main__":
    main()
