"""An injected value (JSON from the debugger, or a replay's recording) as what the framework expects.

An in-process tool's call answers the CLI with a JSON-RPC `tools/call` result: a string becomes one
text block; an object already shaped as a result (`{"content": [...]}`) is used as it is; any other
JSON value is sent as its JSON text. The model reads exactly what the tool would have returned.
"""

from __future__ import annotations

import json
from typing import Any


def tool_result(value: Any) -> dict[str, Any]:
    """A `tools/call` result for an injected value."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        result = {
            "content": value["content"],
            "isError": bool(value.get("isError", value.get("is_error", False))),
        }
        return result
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "isError": False}
