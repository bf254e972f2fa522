"""A run that came in over OTLP, in the viewer: an app instrumented by OpenInference's OpenAI
instrumentor exports to the real hub; the page shows the llm:step with its model, messages, reply
and tokens, marks the run observe-only, and says in place of the breakpoints why no gate can hold
it and which adapter would add them. The picture is written to the test's tmp dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from playwright.sync_api import expect

from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS, FakeOpenAI
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


def test_an_otlp_run_is_shown_observe_only_with_its_llm_step(
    hub: Any, make_page: Any, tmp_path: Path
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=hub.url + "/v1/traces")))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    try:
        with FakeOpenAI() as fake:
            fake.script([FakeOpenAI.tool_call("search_flights", {"to": "CAI"})])
            client = OpenAI(base_url=fake.base_url, api_key="test")
            client.chat.completions.create(model="gpt-4o-mini", messages=TRIP_MESSAGES, tools=TRIP_TOOLS)
    finally:
        OpenAIInstrumentor().uninstrument()
        provider.shutdown()
    run = wait_for(lambda: (hub.api("GET", "/api/runs")[1]["runs"] or [None])[0], 10, "the OTLP run")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/{run['id']}")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".observe-badge")).to_have_text("observe-only · OTLP")
    expect(page.get_by_role("button", name="Stop run")).to_have_count(0)
    page.locator(".gnode[data-node-id='llm:step']").click()
    detail = page.locator("#detail")
    expect(detail).to_contain_text("gpt-4o-mini")
    expect(detail.locator(".d-usage")).to_contain_text(" in · ")
    # Open every branch of the input and output (built as they open) until the prompt's text and the
    # reply's tool call show.
    page.wait_for_function(
        """() => { document.querySelectorAll('#detail details:not([open])').forEach((d) => { d.open = true; });
                   const text = document.querySelector('#detail').textContent;
                   return text.includes('Plan a day in Cairo') && text.includes('"search_flights"'); }"""
    )
    note = detail.locator(".observe-note")
    expect(note).to_contain_text("no gate can hold it")
    expect(note).to_contain_text("Instrument the app with graphmind-openai")
    expect(detail.get_by_role("checkbox")).to_have_count(0)
    # Nothing can replay an OTLP run's calls (they ran in another process before the spans came).
    expect(detail.locator(".d-exec .facts")).to_be_visible()
    expect(detail.get_by_role("button", name="Fork from here")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "otlp-run.png"))
