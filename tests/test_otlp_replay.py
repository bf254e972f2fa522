"""A trace another instrumentor recorded, replayed through GraphMind's adapters (docs/replay.md,
"Foreign traces"): a LangChain tool-calling agent instrumented with OpenInference's LangChain
instrumentor sends its trace to the real hub's /v1/traces; the same agent code, run with
graphmind-langchain under `graphmind replay otlp-<traceId>`, makes 0 provider requests and runs 0
tool bodies. The provider is graphmind_openai.testing's loopback fake, which counts requests."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import graphmind
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.replay.command import _export_run
from graphmind_server.testing import HubProcess, wait_for

AGENT = Path(__file__).parent / "fixtures" / "otlp_lc_agent.py"


def _agent_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("otlp_lc_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ANSWER = "It is sunny in Cairo, 88 F."


def _model(body: dict[str, Any]) -> Any:
    """Three model steps: get_weather, convert, then the answer."""
    done = [m for m in body["messages"] if m.get("role") == "tool"]
    if not done:
        return FakeOpenAI.tool_call("get_weather", {"city": "Cairo"}, call_id="call_w")
    if len(done) == 1:
        return FakeOpenAI.tool_call("convert", {"celsius": 31}, call_id="call_c")
    return ANSWER


class Recorded:
    def __init__(self, hub: HubProcess, fake: FakeOpenAI, tmp: Path) -> None:
        self.hub, self.fake, self.tmp = hub, fake, tmp
        self.log = tmp / "tools.log"
        self.env = {
            **os.environ,
            "FAKE_OPENAI_URL": fake.base_url,
            "TOOL_LOG": str(self.log),
            "OTEL_EXPORTER_OTLP_ENDPOINT": hub.url,
            "OTEL_SERVICE_NAME": "travel",
            "GRAPHMIND_URL": hub.ingest_url,
            "GRAPHMIND_HOME": str(tmp / "home"),
        }
        self.run_id = ""
        self.answer = ""
        self.cassette = Path()
        self.module: Any = None

    def tools_run(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def agent(self, mode: str, *replay: str, **env: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(AGENT), mode]
        if replay:
            command = [sys.executable, "-m", "graphmind_server", "replay", *replay, "--", *command]
        return subprocess.run(
            command, env={**self.env, **env}, capture_output=True, text=True, timeout=90, check=False
        )

    def replay(self, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.agent("graphmind", self.run_id, "--db", str(self.hub.db), *flags, **env)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        return self.hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """One hub, one fake provider and one OpenInference-traced run for the module (traced in this
    process, exported as an app configured by environment exports: process starts are the cost)."""
    tmp = tmp_path_factory.mktemp("otlp-replay")
    with FakeOpenAI(default_reply=_model) as fake, HubProcess(tmp / "hub.db") as hub:
        r = Recorded(hub, fake, tmp)
        r.module = _agent_module()
        saved = {k: os.environ.get(k) for k in ("FAKE_OPENAI_URL", "TOOL_LOG")}
        os.environ.update(FAKE_OPENAI_URL=fake.base_url, TOOL_LOG=str(r.log))
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=hub.url + "/v1/traces")))
        try:
            r.answer = r.module.run_traced(provider) + "\n"
            provider.shutdown()

            def finished() -> dict[str, Any] | None:
                runs = [x for x in hub.api("GET", "/api/runs")[1]["runs"] if x["clientId"] == "otlp"]
                return runs[0] if runs and runs[0]["status"] == "finished" else None

            r.run_id = wait_for(finished, 15, "the OTLP run")["id"]
            r.cassette = _export_run(r.run_id, str(hub.db), tmp / "trace.jsonl")
            yield r
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    assert "Traceback" not in hub.stderr, hub.stderr


def test_the_openinference_trace_holds_three_model_steps_and_two_tool_calls(recorded: Recorded) -> None:
    started = [e for e in recorded.events(recorded.run_id) if e["type"] == "node.started"]
    assert [e["nodeId"] for e in started] == [
        "llm:step",
        "tool:get_weather",
        "llm:step",
        "tool:convert",
        "llm:step",
    ]
    assert recorded.run_id.startswith("otlp-") and recorded.answer.strip() == ANSWER
    assert recorded.fake.request_count >= 3 and recorded.tools_run() == ["get_weather", "convert"]


def test_the_same_agent_under_graphmind_langchain_replays_it_with_no_request_and_no_tool_body(
    recorded: Recorded,
) -> None:
    requests, ran = recorded.fake.request_count, recorded.tools_run()
    done = recorded.replay()
    assert done.returncode == 0, done.stderr
    assert done.stdout == recorded.answer
    assert recorded.fake.request_count == requests, "a replay must not reach the provider"
    assert recorded.tools_run() == ran, "a replay must not run a tool body"

    def replayed() -> dict[str, Any] | None:
        runs = [x for x in recorded.hub.api("GET", "/api/runs")[1]["runs"] if x["clientId"] != "otlp"]
        return next((x for x in runs if x["status"] == "finished"), None)

    run = wait_for(replayed, 15, "the replayed run")
    events = recorded.events(run["id"])
    assert next(e for e in events if e["type"] == "run.started")["replayOf"] == recorded.run_id
    endings = [e for e in events if e["type"] == "node.finished"]
    assert len(endings) == 5 and all(e.get("replayed") is True for e in endings), endings


def test_a_changed_prompt_fails_at_the_first_model_step_with_the_diff(recorded: Recorded) -> None:
    requests, ran = recorded.fake.request_count, recorded.tools_run()
    gm = graphmind.Client(
        app="travel",
        url=recorded.hub.ingest_url,
        replay={"source": recorded.cassette, "on_divergence": "fail"},
    )
    try:
        with pytest.raises(graphmind.ReplayDivergence) as caught:
            recorded.module.run_gated(gm, "Be brief.")
    finally:
        gm.dispose()
    error = caught.value
    assert (error.node_id, error.occurrence, error.why) == (
        "llm:step",
        1,
        "its input differs from the recording",
    )
    assert '-      "text": "You are a travel agent. Use the tools."' in error.diff
    assert '+      "text": "Be brief."' in error.diff
    assert recorded.fake.request_count == requests and recorded.tools_run() == ran


def test_a_changed_prompt_holds_at_the_first_model_step_with_both_inputs(recorded: Recorded) -> None:
    requests = recorded.fake.request_count
    gm = graphmind.Client(app="travel", url=recorded.hub.ingest_url, replay={"source": recorded.cassette})
    box: dict[str, BaseException] = {}

    def main() -> None:
        try:
            recorded.module.run_gated(gm, "Be brief.")
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    try:
        gate = recorded.hub.held_gates(1, timeout=30)[0]
        assert gate["reason"] == "divergence" and gate["nodeId"] == "llm:step"
        assert gate["replay"]["occurrence"] == 1
        assert gate["expected"]["messages"][0]["content"] == "You are a travel agent. Use the tools."
        assert gate["input"]["messages"][0]["content"] == "Be brief."
        status, _ = recorded.hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "abort"})
        assert status == 200
        thread.join(30)
    finally:
        gm.dispose()
    assert not thread.is_alive() and isinstance(box.get("error"), graphmind.RunAborted)
    assert recorded.fake.request_count == requests
