"""A JSON value in the shape a JSON Schema describes: the inject box's prefill when a node has no
output yet (docs/protocol.md, `exec.paused.injectSkeleton`). Never raises; unknown shapes are null."""

from __future__ import annotations

from typing import Any

_SCALARS: dict[str, Any] = {"string": "", "number": 0, "integer": 0, "boolean": False, "null": None}
_MAX_DEPTH = 8


def skeleton(schema: Any, depth: int = 0) -> Any:
    """A value of `schema`'s shape: its `default`, `const` or first `enum` value where it names one,
    an object of its properties, `[]` for an array, `""` / `0` / `false` / `null` for scalars."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, dict) and option.get("type") != "null":
                    return skeleton(option, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    properties = schema.get("properties")
    if kind == "object" or (kind is None and isinstance(properties, dict)):
        if not isinstance(properties, dict):
            return {}
        return {str(name): skeleton(sub, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        return []
    return _SCALARS.get(kind) if isinstance(kind, str) else None
