"""An OpenAI SDK loop traced by `opentelemetry-instrumentation-openai-v2` (the GenAI semantic
conventions, content capture on), written to an OTLP trace file as a Collector's file exporter
writes one, loaded with `graphmind import FILE` and replayed with graphmind-openai (docs/replay.md,
"Foreign traces"). The provider is graphmind_openai.testing's loopback fake, counting requests; the
loop's tool is plain Python (the instrumentor records model calls only, so it runs live)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.cli import main
from graphmind_server.replay.command import _export_run
from graphmind_server.testing.otlp_file import OtlpFileExporter

MODEL = "gpt-4o-mini"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
        },
    }
]
ANSWER = "Refunded 20 EUR."


def _model(body: dict[str, Any]) -> Any:
    if not [m for m in body["messages"] if m.get("role") == "tool"]:
        return FakeOpenAI.tool_call("lookup", {"order": "A1"}, call_id="call_1")
    return ANSWER


def refund_loop(client: OpenAI, price: str = "20 EUR") -> str:
    """The app: a plain OpenAI SDK tool loop in an agent span of its own."""
    messages: list[Any] = [
        {"role": "system", "content": "You handle refunds."},
        {"role": "user", "content": "Refund order A1"},
    ]
    for _ in range(4):
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = reply.choices[0].message
        if not message.tool_calls:
            return str(message.content)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"order A1: {price}"})
    return "no answer"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default_reply=_model) as provider:
        yield provider


def _traced(fake: FakeOpenAI, out: Path, file_format: str, capture: str, latest: bool) -> str:
    """Runs the loop under openai-v2, its spans written to `out`; returns the answer."""
    from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability as Semconv
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    mp = pytest.MonkeyPatch()
    mp.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
    if latest:  # the message attributes on the span (else they go to log events)
        mp.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    else:
        mp.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    # OpenTelemetry reads the conventions' opt-in once a process: read again for this trace
    mp.setattr(Semconv, "_initialized", False)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(out, file_format)))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("refund-app")
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refund"}
        with tracer.start_as_current_span("invoke_agent refund", attributes=attrs):
            answer = refund_loop(OpenAI(base_url=fake.base_url, api_key="test", max_retries=0))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        mp.undo()
    return answer


def _import(path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["import", str(path), "--db", str(db)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 OTLP trace(s) (otlp-" in err, err
    return err.split("trace(s) (", 1)[1].split(")", 1)[0]


@contextmanager
def _replaying(cassette: Path, **options: Any) -> Iterator[OpenAI]:
    with FakeHub() as hub:
        gm = graphmind.Client(app="refund", url=hub.url, replay={"source": cassette, **options})
        try:
            yield instrument_openai(OpenAI(base_url=FAKE_URL[0], api_key="test", max_retries=0), session=gm)
        finally:
            gm.dispose()


FAKE_URL: list[str] = [""]


@pytest.fixture(scope="module")
def imported(fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """(the OTLP JSON file, the database, the run id, the answer), traced and imported once."""
    FAKE_URL[0] = fake.base_url
    tmp = tmp_path_factory.mktemp("otlp-import")
    trace = tmp / "traces.jsonl"
    answer = _traced(fake, trace, "json", "span_only", latest=True)
    db = tmp / "hub.db"
    assert main(["import", str(trace), "--db", str(db)]) == 0
    run_id = sqlite3.connect(db).execute("SELECT id FROM runs").fetchone()[0]
    return trace, db, run_id, answer


def test_an_imported_genai_trace_replays_with_graphmind_openai_and_no_request(
    imported: tuple[Path, Path, str, str],
    fake: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace, db, run_id, answer = imported
    assert answer == ANSWER and run_id.startswith("otlp-")
    assert trace.read_text().count("\n") >= 3, "one request a line, as the file exporter writes"
    cassette = _export_run(run_id, str(db), tmp_path / "run.jsonl")
    requests = fake.request_count
    with _replaying(cassette, on_divergence="fail") as client:
        assert refund_loop(client) == ANSWER
    assert fake.request_count == requests, "a replay must not reach the provider"
    # A second import stores nothing new: the trace is the same run.
    assert main(["import", str(trace), "--db", str(db)]) == 0
    assert "0 new event(s)" in capsys.readouterr().err


def test_a_changed_tool_result_replays_up_to_the_divergence_then_runs_live(
    imported: tuple[Path, Path, str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    _, db, run_id, _ = imported
    cassette = _export_run(run_id, str(db), tmp_path / "run.jsonl")
    requests = fake.request_count
    with (
        _replaying(cassette, on_divergence="fail") as client,
        pytest.raises(graphmind.ReplayDivergence) as caught,
    ):
        refund_loop(client, price="25 EUR")
    assert (caught.value.node_id, caught.value.occurrence) == ("llm:step", 2)
    assert '-      "text": "order A1: 20 EUR"' in caught.value.diff
    assert '+      "text": "order A1: 25 EUR"' in caught.value.diff
    assert fake.request_count == requests, "0 requests: the first step replayed, the second diverged"
    with _replaying(cassette, on_divergence="live") as client:
        assert refund_loop(client, price="25 EUR") == ANSWER
    assert fake.request_count == requests + 1, "only the step after the divergence reached the provider"


def test_a_protobuf_trace_file_imports_as_the_same_run(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    FAKE_URL[0] = fake.base_url
    trace = tmp_path / "traces.pb"
    _traced(fake, trace, "proto", "span_only", latest=True)
    run_id = _import(trace, tmp_path / "hub.db", capsys)
    cassette = _export_run(run_id, str(tmp_path / "hub.db"), tmp_path / "run.jsonl")
    requests = fake.request_count
    with _replaying(cassette, on_divergence="fail") as client:
        assert refund_loop(client) == ANSWER
    assert fake.request_count == requests


def test_a_trace_without_message_content_diverges_at_the_first_step_saying_why(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` on the instrumentor's default
    conventions sends the messages as log events: the spans hold none."""
    FAKE_URL[0] = fake.base_url
    trace = tmp_path / "traces.jsonl"
    _traced(fake, trace, "json", "true", latest=False)
    run_id = _import(trace, tmp_path / "hub.db", capsys)
    cassette = _export_run(run_id, str(tmp_path / "hub.db"), tmp_path / "run.jsonl")
    requests = fake.request_count
    with (
        _replaying(cassette, on_divergence="fail") as client,
        pytest.raises(graphmind.ReplayDivergence) as caught,
    ):
        refund_loop(client)
    assert (caught.value.node_id, caught.value.occurrence) == ("llm:step", 1)
    assert "the trace recorded no input messages" in caught.value.why
    assert fake.request_count == requests


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "nor an OTLP trace file"),
        (b'{"resourceSpans": 3}\n', "not an OTLP trace request (resourceSpans must be a list"),
        (b"hello\n", "is not JSON"),
    ],
)
def test_anything_else_is_one_line(
    content: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(content)
    assert main(["import", str(bad), "--db", str(tmp_path / "hub.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
