"""The playground (docs/api.md `/api/playground`): a stored model call read as an editable request,
sent by the hub through the provider it came from, against the fake providers on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphmind_anthropic.testing import FakeAnthropic
from graphmind_google_genai.testing import FakeGemini
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.playground import providers
from graphmind_server.playground.send import send

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*KEYS, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_the_provider_is_read_from_what_each_adapter_records() -> None:
    assert providers.provider_of({"model": "x", "api": "chat.completions", "hook": "_post"}, "x") == "openai"
    assert providers.provider_of({"model": "x", "api": "responses"}, "x") == "openai"
    assert providers.provider_of({"model": "x", "api": "beta.messages"}, "x") == "anthropic"
    assert providers.provider_of({"model": "gemini-2.5-flash", "system": "gemini"}, None) == "gemini"
    assert providers.provider_of({"model": "m", "provider": "openai", "hook": "completion"}, "m") == "litellm"
    assert providers.provider_of({"model": "m", "system": "anthropic"}, "m") == "anthropic"  # Pydantic AI
    assert providers.provider_of({"model": "ChatModel"}, "claude-3-5-haiku") == "anthropic"
    assert providers.provider_of({}, "my-local-model") is None


def test_anthropic_body_takes_the_system_apart_and_reads_cache_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    req = providers.request_of(
        {
            "model": "claude-sonnet-4",
            "system": "Be brief.",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 64,
        },
        {"api": "messages"},
    )
    assert req == {
        "model": "claude-sonnet-4",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "params": {"max_tokens": 64},
    }
    req["params"]["temperature"] = 0.2
    url, headers, body = providers.build(
        "anthropic", req, {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://h/"}
    )
    assert url == "http://h/v1/messages" and headers["x-api-key"] == "k" and headers["anthropic-version"]
    assert body == {
        "model": "claude-sonnet-4",
        "max_tokens": 64,
        "temperature": 0.2,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}],
    }
    reply = {
        "content": [{"type": "text", "text": "Hi."}],
        "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 4},
    }
    assert providers.parse("anthropic", reply)["usage"] == {
        "inputTokens": 14,
        "outputTokens": 3,
        "cachedTokens": 4,
    }
    with FakeAnthropic() as fake:
        fake.script(["Hello from the fake."])
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url}
        [out] = asyncio.run(send("anthropic", req, 1, env))
        assert out["text"] == "Hello from the fake." and out["usage"]["outputTokens"] > 0
        assert out["costUsd"] is not None
        sent = fake.requests[0]
        assert sent.body["system"] == "Be brief." and sent.body["temperature"] == 0.2
        assert sent.headers.get("x-api-key") == "test-key"


def test_gemini_body_maps_roles_and_generation_config() -> None:
    req = providers.request_of(
        {"model": "gemini-2.5-flash", "messages": [{"role": "system", "content": "Short."}, {"role": "user", "content": "hi"},
         {"role": "assistant", "content": "yes?"}], "config": {"temperature": 0.5, "max_output_tokens": 20}},
        {"system": "gemini"},
    )  # fmt: skip
    url, headers, body = providers.build("gemini", req, {"GEMINI_API_KEY": "g"})
    assert url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    assert headers == {"x-goog-api-key": "g"}
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "yes?"}]},
        ],
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 20},
        "systemInstruction": {"parts": [{"text": "Short."}]},
    }
    with FakeGemini() as fake:
        fake.script(["Gemini says hi."])
        base = fake.base_url.split("/v1beta")[0]
        [out] = asyncio.run(send("gemini", req, 1, {"GOOGLE_API_KEY": "t", "GOOGLE_GEMINI_BASE_URL": base}))
        assert out.get("error") is None, out
        assert out["text"] == "Gemini says hi." and out["usage"]["inputTokens"] > 0
        assert fake.requests[0].body["generationConfig"]["maxOutputTokens"] == 20


def _stored_openai_call(thub: Any) -> None:
    app = thub.app(app="planner")
    app.run_started("r1", name="plan")
    app.node_started(
        "r1", "llm:step", "r1-s1",
        input={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Plan a day in Cairo"}], "temperature": 0.7},
        attrs={"model": "gpt-4o-mini", "api": "chat.completions", "hook": "_post", "stream": False},
    )  # fmt: skip
    app.node_finished("r1", "llm:step", "r1-s1", output={"role": "assistant", "content": "Visit the pyramids."},
                      usage={"inputTokens": 12, "outputTokens": 5, "totalTokens": 17})  # fmt: skip
    app.node_started("r1", "tool:search", "r1-t1", input={"q": 1})
    app.node_finished("r1", "tool:search", "r1-t1", output=1)
    app.run_finished("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", what="the run")


def test_an_edited_openai_call_reaches_the_provider_n_times(
    thub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stored_openai_call(thub)
    status, body = thub.api("GET", "/api/playground?run=r1&instance=r1-s1")
    assert status == 200, body
    assert body["provider"] == "openai"
    assert (
        body["missing"]
        == "OPENAI_API_KEY is not set in the hub's environment: start the hub with it to send OpenAI-compatible calls"
    )
    assert body["request"] == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Plan a day in Cairo"}],
        "params": {"temperature": 0.7},
    }
    assert body["recorded"]["output"]["content"] == "Visit the pyramids." and body["recorded"]["costUsd"] > 0
    edited = {
        "model": "gpt-4.1-mini",
        "messages": [{"role": "user", "content": "Plan a day in Giza"}],
        "params": {"temperature": 0.1},
    }
    status, refused = thub.api(
        "POST", "/api/playground", {"runId": "r1", "instanceId": "r1-s1", "request": edited}
    )
    assert status == 412 and refused["error"].startswith("OPENAI_API_KEY is not set")
    with FakeOpenAI() as fake:
        fake.script(["Giza at dawn.", "Giza at noon."])
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        status, body = thub.api(
            "POST", "/api/playground", {"runId": "r1", "instanceId": "r1-s1", "request": edited, "n": 2}
        )
        assert status == 200, body
        assert sorted(r["text"] for r in body["replies"]) == [
            "Giza at dawn.",
            "Giza at noon.",
        ]  # sent at once
        assert all(r["usage"]["inputTokens"] > 0 and r["costUsd"] is not None for r in body["replies"])
        assert [r.body for r in fake.requests] == [
            {"model": "gpt-4.1-mini", "messages": edited["messages"], "temperature": 0.1}
        ] * 2
        assert fake.requests[0].headers.get("authorization") == "Bearer sk-test-not-real"
        assert "sk-test-not-real" not in str(body) and "sk-test-not-real" not in str(
            thub.api("GET", "/api/playground?run=r1&instance=r1-s1")[1]
        )
    for payload, words in [
        ({"runId": "r1", "instanceId": "r1-t1", "request": edited}, "model calls only"),
        ({"runId": "r1", "instanceId": "nope", "request": edited}, "no execution 'nope'"),
        (
            {"runId": "r1", "instanceId": "r1-s1", "request": edited, "n": 11},
            "n must be a whole number from 1 to 10",
        ),
        (
            {"runId": "r1", "instanceId": "r1-s1", "request": {"model": "m", "messages": []}},
            "request.messages must be",
        ),
    ]:
        status, body = thub.api("POST", "/api/playground", payload)
        assert status in (400, 404, 422) and words in body["error"], (payload, body)
