"""The OTLP → events mapping as pure functions: the encodings and spellings real exporters use
that the hub tests do not all send (proto3 JSON, remote parents, OpenLLMetry's flattened prompts,
non-finite doubles, oversized values, which adapter would gate a scope)."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graphmind_server.otlp import decode, route, spans

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _request(**span_fields: Any) -> ExportTraceServiceRequest:
    doc = {
        "resource_spans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"string_value": "svc"}}]},
                "scope_spans": [
                    {
                        "scope": {"name": "opentelemetry.instrumentation.anthropic"},
                        "spans": [
                            {
                                "trace_id": base64.b64encode(bytes.fromhex(TRACE)).decode(),
                                "span_id": base64.b64encode(bytes.fromhex("b7ad6b7169203331")).decode(),
                                "name": "anthropic.chat",
                                "start_time_unix_nano": "1767225600000000000",
                                "end_time_unix_nano": "1767225600250000000",
                                **span_fields,
                            }
                        ],
                    }
                ],
            }
        ]
    }
    return json_format.ParseDict(doc, ExportTraceServiceRequest())


def _attrs(**attrs: Any) -> list[dict[str, Any]]:
    out = []
    for key, value in attrs.items():
        key = key.replace("__", ".")
        if isinstance(value, int):
            out.append({"key": key, "value": {"int_value": str(value)}})
        elif isinstance(value, float):
            out.append({"key": key, "value": {"double_value": value}})
        else:
            out.append({"key": key, "value": {"string_value": value}})
    return out


OPENLLMETRY = _attrs(
    gen_ai__system="anthropic",
    gen_ai__request__model="claude-test",
    gen_ai__usage__prompt_tokens=9,
    gen_ai__usage__completion_tokens=2,
    **{
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "hello",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "hi!",
        "llm.request.type": "chat",
    },
)


@pytest.mark.parametrize("form", ["protobuf", "proto3-json", "otlp-json"])
def test_every_encoding_of_one_request_decodes_to_the_same_span(form: str) -> None:
    request = _request(attributes=[*OPENLLMETRY, {"key": "x", "value": {"double_value": "NaN"}}])
    if form == "protobuf":
        got = decode.decode(
            gzip.decompress(gzip.compress(request.SerializeToString())), "application/x-protobuf"
        )
    elif form == "proto3-json":  # base64 ids, snake_case keys, as json_format writes with field names
        text = json.dumps(json_format.MessageToDict(request, preserving_proto_field_name=True))
        got = decode.decode(text.encode(), "application/json")
    else:
        doc = json_format.MessageToDict(request)
        s = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        s["traceId"], s["spanId"] = TRACE, "b7ad6b7169203331"  # OTLP/JSON: hex
        s["attributes"][-1]["value"] = {"doubleValue": 1.5}
        got = decode.decode(json.dumps(doc).encode(), "application/json")
    [span] = got.spans
    assert (span.trace_id, span.span_id, span.parent_id, span.service) == (
        TRACE,
        "b7ad6b7169203331",
        None,
        "svc",
    )
    assert span.attrs["gen_ai.prompt.0.content"] == "hello"
    assert span.attrs["x"] == ("NaN" if form != "otlp-json" else 1.5)  # never a NaN in an event


def test_openllmetry_flattened_prompts_make_the_transcript_and_name_the_adapter() -> None:
    [span] = decode.decode(
        _request(attributes=OPENLLMETRY).SerializeToString(), "application/x-protobuf"
    ).spans
    run_started, started, finished, run_finished = (e for _, _, e in spans.events(span))
    assert run_started["type"] == "run.started" and run_started["instanceId"] == f"otlp-{TRACE}"
    assert started["nodeId"] == "llm:step" and started["parentInstanceId"] == f"otlp-{TRACE}"
    assert started["input"] == {"model": "claude-test", "messages": [{"role": "user", "content": "hello"}]}
    assert finished["output"] == {"role": "assistant", "content": "hi!", "model": "claude-test"}
    assert finished["usage"] == {"inputTokens": 9, "outputTokens": 2, "totalTokens": 11}
    assert finished["durationMs"] == 250.0 and run_finished["status"] == "finished"
    assert started["attrs"]["otel"]["gatedBy"] == "graphmind-anthropic"
    assert started["attrs"]["otel"]["attributes"]["llm.request.type"] == "chat"
    assert "gen_ai.prompt.0.content" not in started["attrs"]["otel"]["attributes"]  # in the input already


def test_a_span_with_a_remote_parent_is_the_local_root() -> None:
    remote = base64.b64encode(bytes.fromhex("00f067aa0ba902b7")).decode()
    agent = _attrs(openinference__span__kind="AGENT", input__value="plan a trip")
    for flags, root in ((0x300, True), (0x100, False), (0, False)):
        [span] = decode.decode(
            _request(parent_span_id=remote, flags=flags, attributes=agent).SerializeToString(),
            "application/x-protobuf",
        ).spans
        first = spans.events(span)[0][2]
        assert (first["type"] == "run.started") is root
        if root:
            assert first["instanceId"] == "b7ad6b7169203331" and first["input"] == "plan a trip"


def test_values_heuristics_and_adapters() -> None:
    assert spans.gated_by("openinference.instrumentation.llama_index", {}) == "graphmind-llamaindex"
    assert spans.gated_by("my.app", {"gen_ai.provider.name": "openai"}) == "graphmind-openai"
    assert spans.gated_by("openinference.instrumentation.crewai", {}) is None
    assert spans._value({"input.value": '{"a": 1}'}, "input.value", "input.mime_type") == {"a": 1}
    plain = {"input.value": '{"a": 1}', "input.mime_type": "text/plain"}
    assert spans._value(plain, "input.value", "input.mime_type") == '{"a": 1}'  # a string stays a string
    assert spans._value({"input.value": "[not json"}, "input.value", "input.mime_type") == "[not json"


def test_an_oversized_value_becomes_the_protocols_truncated_marker() -> None:
    big = _attrs(openinference__span__kind="TOOL", tool__name="dump", output__value="x" * 600_000)
    body = _request(attributes=big, parent_span_id=base64.b64encode(b"\1" * 8).decode()).SerializeToString()
    # the parser thread's two steps (otlp/route.py): decode the body, map a chunk of its spans
    decoded = route.decode_body(body, "", "application/x-protobuf")
    items = route.map_spans(decoded.spans, decoded)
    finished = next(e for _, e, _ in items if e["type"] == "node.finished")
    assert finished["output"]["$graphmind"] == "truncated" and finished["output"]["bytes"] == 600_002
    assert len(decoded.spans) == 1


def test_bad_gzip_and_encodings_are_one_line_reasons() -> None:
    with pytest.raises(decode.BadPayload, match="not valid gzip"):
        decode.inflate(b"nope", "gzip")
    with pytest.raises(decode.BadPayload, match="deflate"):
        decode.inflate(b"", "deflate")
    with pytest.raises(decode.TooLarge):
        decode.inflate(gzip.compress(b"\0" * (decode.MAX_INFLATED + 1)), "gzip")
    assert decode.inflate(b"raw", "identity") == b"raw"


KNOWN_KEYS = [
    "openinference.span.kind",
    "gen_ai.operation.name",
    "llm.input_messages.0.message.content",
    "llm.input_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.output_messages.0.message.role",
    "llm.tools.0.tool.json_schema",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt.0.content",
    "gen_ai.tool.call.arguments",
    "input.value",
    "input.mime_type",
    "output.value",
    "llm.token_count.prompt",
    "gen_ai.usage.input_tokens",
    "llm.cost.total",
    "graphmind.kind",
    "graphmind.attrs",
    "graphmind.held_ms",
    "metadata",
    "tool.name",
    "traceloop.span.kind",
    "error.type",
]


def test_any_attribute_values_map_to_events_that_encode() -> None:
    """Whatever types an exporter puts under the keys the mapping reads, every span maps to
    events the hub can store (JSON, finite), or is rejected with a reason: never an exception."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from graphmind_server.base.jsontext import dumps

    scalar = st.one_of(
        st.text(max_size=20),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(allow_nan=False),
        st.booleans(),
        st.sampled_from(
            ["LLM", "TOOL", "AGENT", "chat", "execute_tool", "application/json", "[1]", '{"a": [1]}']
        ),
    )
    value = st.recursive(
        scalar,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    )

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.sampled_from(KNOWN_KEYS), value, max_size=8), st.booleans(), st.integers(0, 2))
    def check(attrs: dict[str, Any], root: bool, status: int) -> None:
        span = decode.Span(
            TRACE,
            "b7ad6b7169203331",
            None if root else "00f067aa0ba902b7",
            False,
            "s",
            1,
            2,
            attrs,
            status_code=status,
        )
        for _, _, event in spans.events(span):
            json.loads(dumps(event))

    check()
