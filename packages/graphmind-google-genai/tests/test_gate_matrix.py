"""The shared gate matrix (graphmind.testing.gate_matrix) on `generate_content` and
`generate_content_stream`, sync (`client.models`) and async (`client.aio.models`), against the
loopback Gemini API (graphmind_google_genai.testing.FakeGemini): every case on core's FakeHub and
on the real hub process (the `kit_hub` fixture), the edit and replay cases included. The default run
takes each case on one of the two hubs (`kit_default`); the nox matrix cell (`GRAPHMIND_KIT_FULL=1`)
takes every case on both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import _extra_utils, errors, types

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_google_genai import instrument_google_genai, uninstrument_google_genai
from graphmind_google_genai.testing import FakeGemini
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case
from graphmind_server.testing.pytest_plugin import kit_default

MODEL = "gemini-2.5-flash"
PROMPT = "Plan a day in Cairo"
REPLY = "Visit the pyramids at dawn."


class GenerateSubject(GateSubject):
    node_id = "llm:step"
    error_type = errors.ClientError
    streams = True

    def __init__(self, fake: FakeGemini) -> None:
        self.fake = fake
        # The one model-reply shape (docs/protocol.md): a function call with object arguments, no id.
        self.injected = {
            "content": None,
            "tool_calls": [{"name": "search_flights", "arguments": {"to": "CAI"}}],
        }
        self.made: list[genai.Client] = []

    @property
    def real_calls(self) -> int:
        return self.fake.request_count

    def make(self) -> genai.Client:
        client = genai.Client(api_key="k", http_options=self.fake.http_options())
        self.made.append(client)
        return client

    def instrument(self, thing: genai.Client, session: graphmind.Client) -> genai.Client:
        return instrument_google_genai(thing, session=session)

    def undo(self, thing: genai.Client) -> genai.Client:
        return uninstrument_google_genai(thing)

    def call(self, thing: genai.Client) -> Any:
        return thing.models.generate_content(model=MODEL, contents=PROMPT)

    async def acall(self, thing: genai.Client) -> Any:
        return await thing.aio.models.generate_content(model=MODEL, contents=PROMPT)

    def stream(self, thing: genai.Client) -> Any:
        return thing.models.generate_content_stream(model=MODEL, contents=PROMPT)

    async def astream(self, thing: genai.Client) -> Any:
        return await thing.aio.models.generate_content_stream(model=MODEL, contents=PROMPT)

    def fail_next(self) -> None:
        self.fake.script([FakeGemini.error(400, "bad request (fake)")])

    def check_real(self, result: Any) -> None:
        assert isinstance(result, types.GenerateContentResponse)
        assert result.text == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, types.GenerateContentResponse)
        calls = result.function_calls
        assert calls and calls[0].name == "search_flights" and calls[0].args == {"to": "CAI"}
        assert calls[0].id is None  # no id given, none made up (Gemini sends none either)

    def check_stream(self, items: list[Any]) -> None:
        assert len(items) > 1 and all(isinstance(i, types.GenerateContentResponse) for i in items)
        assert "".join(i.text or "" for i in items) == REPLY

    def edit(self, original: Any) -> Any:
        assert original["model"] == MODEL and original["messages"] == [{"role": "user", "content": PROMPT}]
        return {
            "model": "gemini-2.5-pro",
            "messages": [{"role": "user", "content": "Plan a day in Luxor"}],
            "config": {"temperature": 0.25},
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)  # the SDK's own type, the provider's reply
        last = self.fake.requests[-1]
        assert last.path.endswith("/models/gemini-2.5-pro:generateContent"), last.path
        assert last.body["contents"] == [{"role": "user", "parts": [{"text": "Plan a day in Luxor"}]}]
        assert last.body["generationConfig"] == {"temperature": 0.25}

    async def close(self) -> None:
        for client in self.made:
            uninstrument_google_genai(client)  # the tool patch is process-wide: leave the SDK bare
            client.close()
            await client.aio.aclose()


@pytest.fixture
async def subject() -> AsyncIterator[GenerateSubject]:
    bare = _extra_utils.invoke_function_from_dict_args
    with FakeGemini(chunks=4, default_reply=REPLY) as fake:
        s = GenerateSubject(fake)
        yield s
        await s.close()
    assert _extra_utils.invoke_function_from_dict_args is bare  # every client undone


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix(case: str, subject: GenerateSubject, kit_hub: Callable[[], KitHub] | None) -> None:
    kit_default(case, kit_hub)  # each case on one hub by default; GRAPHMIND_KIT_FULL=1: both
    await run_case(case, subject, hub=kit_hub)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, subject: GenerateSubject, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's Google GenAI instrumentor."""
    from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

    await run_foreign_case(case, subject, GoogleGenAIInstrumentor(), hub_process, tmp_path)
