"""instrument / uninstrument (twice is once, undo is exact, a disabled session is the identity), the
shared tool patch, AFC of an uninstrumented client left alone, async tools, chats, an AsyncClient
alone, and edited tool arguments."""

from __future__ import annotations

from typing import Any

import pytest
from google import genai
from google.genai import _extra_utils, types
from google.genai.client import AsyncClient

import graphmind
from graphmind.testing import FakeHub
from graphmind_google_genai import instrument_google_genai, uninstrument_google_genai
from graphmind_google_genai.testing import FakeGemini

MODEL = "gemini-2.5-flash"
ORIGINAL_INVOKE = _extra_utils.invoke_function_from_dict_args
ORIGINAL_AINVOKE = _extra_utils.invoke_function_from_dict_args_async
INSTRUMENTED: list[Any] = []


@pytest.fixture(autouse=True)
def undo_every_client() -> Any:
    """Each test starts and ends with the SDK's module bare (the tool patch is process-wide)."""
    assert _extra_utils.invoke_function_from_dict_args is ORIGINAL_INVOKE
    yield
    while INSTRUMENTED:
        uninstrument_google_genai(INSTRUMENTED.pop())


def instrument(client: Any, gm: graphmind.Client) -> Any:
    INSTRUMENTED.append(client)
    return instrument_google_genai(client, session=gm)


def _client(fake: FakeGemini) -> genai.Client:
    return genai.Client(api_key="k", http_options=fake.http_options())


def _hooked(client: genai.Client) -> dict[str, Any]:
    return {
        "models": dict(vars(client.models)),
        "aio.models": dict(vars(client.aio.models)),
        "invoke": _extra_utils.invoke_function_from_dict_args,
        "ainvoke": _extra_utils.invoke_function_from_dict_args_async,
    }


def _settle(gm: graphmind.Client, hub: FakeHub) -> None:
    """Every event emitted so far has reached the hub (a marker span, then wait for it)."""
    with gm.span("marker", kind="custom"):
        pass
    hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "custom:marker")


def _started(hub: FakeHub) -> list[str]:
    return [e["nodeId"] for e in hub.events if e["type"] == "node.started" and e["nodeId"] != "custom:marker"]


def test_instrumenting_twice_is_once_and_undo_restores_the_very_objects(
    fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = _client(fake)
    bare = _hooked(client)
    assert instrument_google_genai(client, session=gm) is client
    hooked = _hooked(client)
    assert (
        hooked != bare
        and "_generate_content" in hooked["models"]
        and "_generate_content" in hooked["aio.models"]
    )
    assert instrument_google_genai(client, session=gm) is client
    assert _hooked(client) == hooked
    client.models.generate_content(model=MODEL, contents="hi")
    _settle(gm, fakehub)
    assert _started(fakehub) == ["llm:step"]
    assert uninstrument_google_genai(client) is client
    assert _hooked(client) == bare and _extra_utils.invoke_function_from_dict_args is ORIGINAL_INVOKE
    client.models.generate_content(model=MODEL, contents="hi")
    _settle(gm, fakehub)
    assert _started(fakehub) == ["llm:step"]  # no node for the bare call
    client.close()


def test_the_tool_patch_is_shared_and_leaves_with_the_last_client(
    fake: FakeGemini, gm: graphmind.Client
) -> None:
    one, two = instrument(_client(fake), gm), instrument(_client(fake), gm)
    patched = (_extra_utils.invoke_function_from_dict_args, _extra_utils.invoke_function_from_dict_args_async)
    assert patched[0] is not ORIGINAL_INVOKE and patched[1] is not ORIGINAL_AINVOKE  # each patched
    uninstrument_google_genai(one)
    assert (
        _extra_utils.invoke_function_from_dict_args,
        _extra_utils.invoke_function_from_dict_args_async,
    ) == patched
    uninstrument_google_genai(two)
    assert _extra_utils.invoke_function_from_dict_args is ORIGINAL_INVOKE
    assert _extra_utils.invoke_function_from_dict_args_async is ORIGINAL_AINVOKE


def test_a_disabled_session_is_the_identity(fake: FakeGemini) -> None:
    session = graphmind.Client(app="off", environ={"GRAPHMIND_DISABLED": "1"})
    client = _client(fake)
    bare = _hooked(client)
    assert instrument_google_genai(client, session=session) is client
    assert _hooked(client) == bare and "_graphmind_google_genai" not in vars(client)
    assert client.models.generate_content(model=MODEL, contents="hi").text == "ok"


def test_afc_of_an_uninstrumented_client_is_left_alone(
    fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    calls: list[str] = []

    def lookup(q: str) -> str:
        """Looks up q."""
        calls.append(q)
        return q.upper()

    instrument(_client(fake), gm)  # the tool patch is in place
    bare = _client(fake)
    fake.script([FakeGemini.function_call("lookup", {"q": "x"}), "done"])
    result = bare.models.generate_content(
        model=MODEL, contents="go", config=types.GenerateContentConfig(tools=[lookup])
    )
    assert result.text == "done" and calls == ["x"]
    _settle(gm, fakehub)
    assert _started(fakehub) == []


@pytest.mark.parametrize("tool_kind", ["async", "sync"])
async def test_async_afc_gates_async_and_threaded_sync_tools(
    fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub, tool_kind: str
) -> None:
    calls: list[str] = []

    async def aweather(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return f"sunny in {city}"

    def weather(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return f"sunny in {city}"

    tool = aweather if tool_kind == "async" else weather
    client = instrument(_client(fake), gm)
    fakehub.set_debug(breakpoints=[(f"tool:{tool.__name__}", "before")])
    fakehub.auto_answer("inject", "injected weather")
    fake.script([FakeGemini.function_call(tool.__name__, {"city": "Cairo"}), "It is nice."])
    result = await client.aio.models.generate_content(
        model=MODEL, contents="weather?", config=types.GenerateContentConfig(tools=[tool])
    )
    assert result.text == "It is nice." and calls == []  # the body never ran
    sent = fake.requests[-1].body["contents"][-1]["parts"][0]["functionResponse"]
    assert sent["response"] == {"result": "injected weather"}
    _settle(gm, fakehub)
    assert _started(fakehub) == ["llm:step", f"tool:{tool.__name__}", "llm:step"]


def test_a_chat_and_an_async_client_alone(fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub) -> None:
    client = instrument(_client(fake), gm)
    chat = client.chats.create(model=MODEL)
    fake.script(["Hello.", "Again."])
    assert chat.send_message("hi").text == "Hello."
    assert chat.send_message("more").text == "Again."
    _settle(gm, fakehub)
    steps = [e for e in fakehub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step"]
    assert [len(s["input"]["messages"]) for s in steps] == [1, 3]

    aio = genai.Client(api_key="k", http_options=fake.http_options()).aio
    assert isinstance(aio, AsyncClient)
    assert instrument_google_genai(aio, session=gm) is aio and "_generate_content" in vars(aio.models)
    uninstrument_google_genai(aio)
    assert "_generate_content" not in vars(aio.models)
    models = genai.Client(api_key="k", http_options=fake.http_options()).models  # one Models alone
    assert instrument_google_genai(models, session=gm) is models and "_generate_content" in vars(models)
    uninstrument_google_genai(models)
    assert "_generate_content" not in vars(models)


def test_edited_tool_arguments_reach_the_function(
    fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    seen: list[Any] = []

    def book(nights: int, city: str) -> str:
        """Books nights in a city."""
        seen.append((nights, city))
        return "booked"

    client = instrument(_client(fake), gm)
    fakehub.set_debug(breakpoints=[("tool:book", "before")])
    fakehub.auto_answer(lambda _paused: ("continue", None, {"input": {"nights": 3.0, "city": "Luxor"}}))
    fake.script([FakeGemini.function_call("book", {"nights": 1, "city": "Cairo"}), "ok"])
    client.models.generate_content(
        model=MODEL, contents="book", config=types.GenerateContentConfig(tools=[book])
    )
    assert seen == [(3, "Luxor")]  # converted as the SDK converts the model's (3.0 -> 3)


def test_a_stream_method_that_returns_a_list_streams(
    fake: FakeGemini, gm: graphmind.Client, fakehub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK only iterates what `_generate_content_stream` returns; its own tests mock it with a list."""
    from google.genai.models import Models

    chunks = [
        types.GenerateContentResponse.model_validate({"candidates": [{"content": {"parts": [{"text": t}]}}]})
        for t in ("a", "b")
    ]
    monkeypatch.setattr(Models, "_generate_content_stream", lambda self, **kw: list(chunks))
    client = instrument(_client(fake), gm)
    assert [c.text for c in client.models.generate_content_stream(model=MODEL, contents="hi")] == ["a", "b"]
    _settle(gm, fakehub)
    assert _started(fakehub) == ["llm:step"]
