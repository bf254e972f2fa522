"""Test helpers for the SDK and for adapters.

- `FakeHub`: an in-process hub speaking protocol v1 (see its module, `graphmind/testing/_fakehub.py`).
- `graphmind.testing.gate_matrix`: the gate matrix every adapter's tests run with its own call
  (docs/adapters.md, "Tests every adapter passes").
- `graphmind.testing.team`: the two-agent cases an adapter whose framework has agents opts into
  (docs/adapters.md, "Agents and handoffs").
- `assert_supported`, `assert_hooks_stand`, `assert_in_source`: an adapter's hook-table test, that
  fails loudly when an upstream hook moves (docs/adapters.md, "The scaffold").
- `one_kb_tool_args`, `ThrowingGetterDict`, `ProxyLike`: sample values for size and fail-open tests.
- `graphmind.testing.threads`: `sync_call` and `in_a_thread`, a framework's sync API driven from
  the kit's async test on a thread of its own, as an app calls it.
- `write_cassette(path, client_id, events)`: one client's events (a `FakeHub`'s `events`, say) as
  a `graphmind record` file that `replay=` / `GRAPHMIND_REPLAY` and `graphmind replay` read
  (docs/replay.md); 0600, secret-looking keys' values replaced. Returns how many it replaced.
- `replay_app(cassette, argv, cwd=..., node=None)`: an app's command run with the cassette replayed
  (every call answered, the first difference fails), its answer read back: the tests
  `graphmind test new` writes (docs/testing.md).
"""

from .._replay.cassette import write_cassette
from ._fakehub import Answer, FakeHub, ProxyLike, ThrowingGetterDict, one_kb_tool_args
from ._replay_app import Replayed, replay_app
from ._upstream import assert_hooks_stand, assert_in_source, assert_supported, split_requirement

__all__ = [
    "Answer",
    "FakeHub",
    "ProxyLike",
    "Replayed",
    "ThrowingGetterDict",
    "assert_hooks_stand",
    "assert_in_source",
    "assert_supported",
    "one_kb_tool_args",
    "replay_app",
    "split_requirement",
    "write_cassette",
]
