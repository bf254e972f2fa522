"""Test helpers for the SDK and for adapters.

- `FakeHub`: an in-process hub speaking protocol v1 (see its module, `graphmind/testing/_fakehub.py`).
- `graphmind.testing.gate_matrix`: the gate matrix every adapter's tests run with its own call
  (docs/adapters.md, "Tests every adapter passes").
- `one_kb_tool_args`, `ThrowingGetterDict`, `ProxyLike`: sample values for size and fail-open tests.
"""

from ._fakehub import Answer, FakeHub, ProxyLike, ThrowingGetterDict, one_kb_tool_args

__all__ = ["Answer", "FakeHub", "ProxyLike", "ThrowingGetterDict", "one_kb_tool_args"]
