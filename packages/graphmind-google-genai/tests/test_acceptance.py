"""Against the real hub (one `graphmind serve` process for the module), steered through its control
API as the viewer steers it, with the loopback Gemini API counting requests and tools counting
calls: inject at the before gate, an injected function call that AFC runs, a teed stream and its
replay, two AFC tools gated (inject skips a body, retry at a tool's error gate), a recorded run
replayed with no request."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

import graphmind
from graphmind_google_genai import instrument_google_genai, uninstrument_google_genai
from graphmind_google_genai.testing import FakeGemini
from graphmind_server.testing import HubProcess, in_thread, wait_for

MODEL = "gemini-2.5-flash"


@pytest.fixture
def hub(hub_process: HubProcess) -> HubProcess:
    _debug(hub_process)  # each test starts with no breakpoints, pause-on-error on
    return hub_process


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="google-genai-acceptance", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


@pytest.fixture
def client(fake: FakeGemini, gm: graphmind.Client) -> Iterator[genai.Client]:
    c = instrument_google_genai(genai.Client(api_key="k", http_options=fake.http_options()), session=gm)
    yield c
    uninstrument_google_genai(c)
    c.close()


class Tools:
    """Two AFC tools that count their calls; `search_flights` fails once when told to."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail_once = False

    def search_flights(self, to: str) -> str:
        """Flights to an airport code."""
        self.calls.append(f"search_flights:{to}")
        if self.fail_once:
            self.fail_once = False
            raise RuntimeError("the flight search is down")
        return f"{to}: 09:40"

    def book_hotel(self, city: str) -> str:
        """Books a hotel in a city."""
        self.calls.append(f"book_hotel:{city}")
        return f"Nile Hotel, {city}"

    def config(self) -> types.GenerateContentConfig:
        return types.GenerateContentConfig(tools=[self.search_flights, self.book_hotel])


def _debug(hub: HubProcess, *breakpoints: tuple[str, str]) -> None:
    body = {
        "breakpoints": [{"nodeId": node, "gate": gate} for node, gate in breakpoints],
        "mode": "run",
        "pauseOnError": "on",
    }
    assert hub.api("PUT", "/api/debug", body)[0] == 200


def _answer(hub: HubProcess, node: str, gate: str, action: str, value: Any = None) -> None:
    held = hub.held_gates()[0]
    assert (held["nodeId"], held["gate"]) == (node, gate), held
    body = {"action": action} if value is None else {"action": action, "value": value}
    status, reply = hub.api("POST", f"/api/gates/{held['gateId']}", body)
    assert status == 200, reply


def _run_events(hub: HubProcess, gm: graphmind.Client, run: list[str]) -> list[dict[str, Any]]:
    wait_for(
        lambda: hub.api("GET", f"/api/runs/{run[0]}")[1].get("status") == "finished", 10, "the run's end"
    )
    return hub.api("GET", f"/api/runs/{run[0]}/events")[1]["events"]  # type: ignore[no-any-return]


def _in_run(gm: graphmind.Client, run: list[str], call: Any) -> Any:
    def body() -> Any:
        with gm.run("trip") as r:
            run.append(r.run_id)
            return call()

    return body


def test_before_inject_sends_no_request_and_the_app_reads_the_injected_text(
    hub: HubProcess, gm: graphmind.Client, client: genai.Client, fake: FakeGemini
) -> None:
    _debug(hub, ("llm:step", "before"))
    t, out = in_thread(lambda: client.models.generate_content(model=MODEL, contents="Plan a day in Cairo"))
    _answer(hub, "llm:step", "before", "inject", "Injected: see the pyramids.")
    t.join(10)
    result = out["value"]
    assert type(result) is types.GenerateContentResponse
    assert result.text == "Injected: see the pyramids."
    assert fake.request_count == 0


def test_an_injected_function_call_makes_afc_call_that_function_next(
    hub: HubProcess, gm: graphmind.Client, client: genai.Client, fake: FakeGemini
) -> None:
    tools = Tools()
    fake.script(["Booked the Nile Hotel."])  # the model's answer once the tool's result is back
    _debug(hub, ("llm:step", "before"))
    run: list[str] = []
    call = _in_run(
        gm,
        run,
        lambda: client.models.generate_content(
            model=MODEL, contents="Book me a hotel", config=tools.config()
        ),
    )
    t, out = in_thread(call)
    injected = {
        "content": None,
        "tool_calls": [{"id": "call_hotel1", "name": "book_hotel", "arguments": {"city": "Cairo"}}],
    }
    _answer(hub, "llm:step", "before", "inject", injected)
    _answer(hub, "llm:step", "before", "continue")  # the second round: the tool's result goes to the model
    t.join(10)
    assert out["value"].text == "Booked the Nile Hotel."
    assert tools.calls == ["book_hotel:Cairo"]
    assert fake.request_count == 1
    sent = fake.requests[0].body["contents"]
    assert sent[1]["parts"][0]["functionCall"] == {
        "id": "call_hotel1",
        "name": "book_hotel",
        "args": {"city": "Cairo"},
    }
    assert sent[2]["parts"][0]["functionResponse"]["response"] == {"result": "Nile Hotel, Cairo"}
    events = _run_events(hub, gm, run)
    tool = next(e for e in events if e["type"] == "node.started" and e["nodeId"] == "tool:book_hotel")
    assert tool["instanceId"] == "call_hotel1"  # the tool node answers the injected call


def test_a_stream_is_teed_live_and_its_recording_replays_chunk_by_chunk_with_no_request(
    hub: HubProcess, gm: graphmind.Client, client: genai.Client, fake: FakeGemini, tmp_path: Path
) -> None:
    reply = "Start at the pyramids, then the Egyptian Museum."
    fake.script([reply])
    fake.chunk_delay = 0.08  # chunks far enough apart to reach the hub in frames of their own
    run: list[str] = []
    chunks = _in_run(
        gm, run, lambda: list(client.models.generate_content_stream(model=MODEL, contents="Plan"))
    )()
    assert len(chunks) == fake.chunks and all(type(c) is types.GenerateContentResponse for c in chunks)
    assert "".join(c.text or "" for c in chunks) == reply
    events = _run_events(hub, gm, run)
    finished = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["output"]["content"] == reply and finished["usage"]["totalTokens"] > 0
    frames = [e for e in events if e["type"] == "node.token"]
    assert "".join(d["v"] for e in frames for d in e["deltas"]) == reply
    assert len(frames) > 1 and events.index(frames[0]) < events.index(finished)  # live, as the chunks came

    cassette = _record(hub, run[0], tmp_path)
    sent = fake.request_count
    replaying = graphmind.Client(
        app="google-genai-replay", url=hub.ingest_url, replay={"source": cassette, "on_divergence": "fail"}
    )
    try:
        assert replaying.ready(5)
        again = instrument_google_genai(
            genai.Client(api_key="k", http_options=fake.http_options()), session=replaying
        )
        replayed = list(again.models.generate_content_stream(model=MODEL, contents="Plan"))
        uninstrument_google_genai(again)
    finally:
        replaying.dispose()
    assert fake.request_count == sent  # 0 requests
    assert len(replayed) > 1 and all(type(c) is types.GenerateContentResponse for c in replayed)
    assert "".join(c.text or "" for c in replayed) == reply


def test_afc_with_two_tools_gates_each_inject_skips_a_body_and_retry_reruns_a_failed_one(
    hub: HubProcess, gm: graphmind.Client, client: genai.Client, fake: FakeGemini
) -> None:
    tools = Tools()
    tools.fail_once = True
    fake.script(
        [
            FakeGemini.function_call("search_flights", {"to": "CAI"}),
            FakeGemini.function_call("book_hotel", {"city": "Cairo"}),
            "Flight at 09:40, hotel booked.",
        ]
    )
    _debug(hub, ("tool:book_hotel", "before"))  # pause-on-error holds search_flights' failure
    run: list[str] = []
    call = _in_run(
        gm, run, lambda: client.models.generate_content(model=MODEL, contents="Trip", config=tools.config())
    )
    t, out = in_thread(call)
    _answer(hub, "tool:search_flights", "error", "retry")  # the body runs again and succeeds
    _answer(hub, "tool:book_hotel", "before", "inject", "Injected: Hotel Luxor")  # its body never runs
    t.join(10)
    assert out["value"].text == "Flight at 09:40, hotel booked."
    assert tools.calls == ["search_flights:CAI", "search_flights:CAI"]
    assert fake.request_count == 3
    last = fake.requests[-1].body["contents"]
    assert last[-1]["parts"][0]["functionResponse"]["response"] == {"result": "Injected: Hotel Luxor"}
    events = _run_events(hub, gm, run)
    ends = {
        e["nodeId"]: e for e in events if e["type"] == "node.finished" and e["nodeId"].startswith("tool:")
    }
    assert ends["tool:book_hotel"].get("injected") is True
    assert ends["tool:search_flights"]["output"] == "CAI: 09:40"
    assert [e["nodeId"] for e in events if e["type"] == "node.started"] == [
        "llm:step",
        "tool:search_flights",
        "llm:step",
        "tool:book_hotel",
        "llm:step",
    ]


def test_a_recorded_afc_run_replays_with_no_request_and_no_tool_body(
    hub: HubProcess, gm: graphmind.Client, client: genai.Client, fake: FakeGemini, tmp_path: Path
) -> None:
    tools = Tools()
    fake.script([FakeGemini.function_call("search_flights", {"to": "CAI"}), "The 09:40 flight."])
    run: list[str] = []
    first = _in_run(
        gm, run, lambda: client.models.generate_content(model=MODEL, contents="Fly", config=tools.config())
    )()
    assert first.text == "The 09:40 flight." and len(tools.calls) == 1
    _run_events(hub, gm, run)
    cassette = _record(hub, run[0], tmp_path)
    sent = fake.request_count
    replaying = graphmind.Client(
        app="google-genai-replay", url=hub.ingest_url, replay={"source": cassette, "on_divergence": "fail"}
    )
    try:
        assert replaying.ready(5)
        again = instrument_google_genai(
            genai.Client(api_key="k", http_options=fake.http_options()), session=replaying
        )
        replayed = again.models.generate_content(model=MODEL, contents="Fly", config=tools.config())
        uninstrument_google_genai(again)
    finally:
        replaying.dispose()
    assert replayed.text == "The 09:40 flight."
    assert fake.request_count == sent and len(tools.calls) == 1  # no request, no tool body


def _record(hub: HubProcess, run_id: str, tmp_path: Path) -> Path:
    out = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", run_id, "--db", str(hub.db), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out
