"""Injected JSON values -> the SDK's CallToolResult, and results -> the node's JSON."""

from __future__ import annotations

import pytest
from mcp.types import CallToolResult, TextContent

from graphmind_mcp._result import describe_result, to_result


def test_a_string_is_the_text_of_the_result() -> None:
    result = to_result("hello")
    assert result.content == [TextContent(text="hello")] and result.structured_content is None


def test_any_other_json_value_is_the_structured_result_mirrored_as_text() -> None:
    result = to_result({"temperature": 21})
    assert result.structured_content == {"temperature": 21}
    assert isinstance(result.content[0], TextContent) and result.content[0].text == '{"temperature": 21}'


def test_the_wire_form_round_trips_through_the_node_output() -> None:
    original = CallToolResult(content=[TextContent(text="x")], structured_content={"a": 1}, is_error=True)
    described = describe_result(original)
    assert described == {
        "content": [{"type": "text", "text": "x"}],
        "structuredContent": {"a": 1},
        "isError": True,
    }
    assert to_result(described) == original


def test_structured_content_alone_gets_its_text_mirror() -> None:
    result = to_result({"structuredContent": {"a": 1}})
    assert result.structured_content == {"a": 1} and result.content[0].text == '{"a": 1}'


def test_a_malformed_wire_form_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not a valid MCP tool result"):
        to_result({"content": [{"type": "nope"}]})
