"""The kit's foreign-trace case (docs/adapters.md, "The foreign-trace case"): the kit's scenario
(a subject's one call, `graphmind.testing.gate_matrix.GateSubject`) recorded by another
instrumentor (OpenInference, or the GenAI semantic conventions) into the real hub's `/v1/traces`,
then replayed through the adapter from `otlp-<traceId>`, with 0 provider requests.

    from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

    @pytest.mark.parametrize("case", FOREIGN_CASES)
    async def test_foreign_trace(case, subject, hub_process, tmp_path):
        from openinference.instrumentation.openai import OpenAIInstrumentor
        await run_foreign_case(case, subject, OpenAIInstrumentor(), hub_process, tmp_path)

Needs opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http (the instrumentor's own
world), imported when a case runs. The call is made inside an agent span of the kit's own, as an
app that traces a run does, so the trace is one run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import graphmind

from ..replay.command import _export_run
from ._process import HubProcess, wait_for

FOREIGN_CASES = ("foreign-replay-sync", "foreign-replay-async")


async def _call(subject: Any, thing: Any, is_async: bool) -> Any:
    if is_async:
        return await subject.acall(thing)
    return await asyncio.to_thread(subject.call, thing)


async def record_foreign(subject: Any, instrumentor: Any, hub: HubProcess, is_async: bool = False) -> str:
    """One real call of `subject` under `instrumentor`, exported to the hub; the run's id."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=hub.url + "/v1/traces")))
    before = subject.real_calls
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("graphmind-kit")
        with tracer.start_as_current_span("kit", attributes={"openinference.span.kind": "AGENT"}) as span:
            trace_id = format(span.get_span_context().trace_id, "032x")
            await _call(subject, subject.make(), is_async)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    assert subject.real_calls == before + 1, "the recorded call reaches the provider once"
    run_id = f"otlp-{trace_id}"

    def finished() -> bool:
        status, run = hub.api("GET", f"/api/runs/{run_id}")
        return status == 200 and run.get("status") == "finished"

    await asyncio.to_thread(wait_for, finished, 15, f"the run {run_id}")
    return run_id


async def run_foreign_case(case: str, subject: Any, instrumentor: Any, hub: HubProcess, tmp: Path) -> None:
    if case not in FOREIGN_CASES:
        raise ValueError(f"unknown foreign-trace case {case!r}; the cases are {FOREIGN_CASES}")
    is_async = case.endswith("async")
    run_id = await record_foreign(subject, instrumentor, hub, is_async)
    cassette = await asyncio.to_thread(_export_run, run_id, str(hub.db), tmp / f"{run_id}.jsonl")
    before = subject.real_calls
    client = graphmind.Client(
        app="gate-matrix-foreign", url=hub.ingest_url, replay={"source": cassette, "on_divergence": "fail"}
    )
    thing = subject.instrument(subject.make(), client)
    try:
        result = await _call(subject, thing, is_async)
    finally:
        subject.undo(thing)
        await asyncio.to_thread(client.dispose)
    subject.check_real(result)
    assert subject.real_calls == before, f"{run_id} replayed: no request reaches the provider"
