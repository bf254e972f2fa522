"""The hub's one JSON spelling for what it writes itself (answers, live frames): never a NaN/Infinity.

Frames with non-finite numbers are refused at /ingest (docs/protocol.md), but a database written by
an older hub can hold them; a read must still answer valid JSON, so such a value becomes null.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse


def finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (a copy where something changed)."""
    if isinstance(value, float):
        return value if value - value == 0 else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Compact, as Starlette's JSONResponse writes it."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(finite(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def loads_finite(text: str) -> Any:
    """Parse stored JSON, reading NaN, Infinity and out-of-range numbers as null."""
    return json.loads(text, parse_constant=lambda _: None, parse_float=lambda s: finite(float(s)))


class JSON(JSONResponse):
    """Starlette's JSONResponse, but a stored Infinity can never turn an answer into a 500."""

    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")
