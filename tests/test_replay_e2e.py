"""Issue 31 acceptance: `graphmind record` a 3-tool OpenAI agent against the real hub and a fake
provider that counts requests, then `graphmind replay <file> -- python agent.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind._replay.cassette import Cassette
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for

AGENT = Path(__file__).parent / "fixtures" / "replay_agent.py"
ANSWER = "Your trip is booked."


def _model(body: dict[str, Any]) -> Any:
    """The scripted model: one tool per step (search, book, pay), then the answer."""
    done = [m for m in body["messages"] if m.get("role") == "tool"]
    if len(done) == 0:
        return FakeOpenAI.tool_call("search", {"to": "CAI"}, call_id="call_search")
    if len(done) == 1:
        return FakeOpenAI.tool_call(
            "book", {"flight": json.loads(done[0]["content"])[0]}, call_id="call_book"
        )
    if len(done) == 2:
        return FakeOpenAI.tool_call("pay", {"amount": 100}, call_id="call_pay")
    return ANSWER + f" ({json.loads(done[1]['content'])})"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default_reply=_model) as provider:
        yield provider


@pytest.fixture(scope="module")
def module_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One hub and one recording for the module: each test replays it (process starts are the cost)."""
    with HubProcess(tmp_path_factory.mktemp("replay-hub") / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


class Setup:
    def __init__(self, hub: HubProcess, fake: FakeOpenAI, tmp: Path) -> None:
        self.hub, self.fake, self.tmp = hub, fake, tmp
        self.base = 0
        self.cassette = Path()
        self.answer = ""
        self.recorded_id = ""
        self.log = tmp / "tools.log"
        self.env = {
            **os.environ,
            "GRAPHMIND_URL": hub.ingest_url,
            "GRAPHMIND_HOME": str(tmp / "home"),
            "FAKE_OPENAI_URL": fake.base_url,
            "TOOL_LOG": str(self.log),
        }

    def tools_run(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def agent(self, *replay: str, **env: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(AGENT)]
        if replay:
            command = [sys.executable, "-m", "graphmind_server", "replay", *replay, "--", *command]
        return subprocess.run(
            command, env={**self.env, **env}, capture_output=True, text=True, timeout=60, check=False
        )

    def runs(self) -> list[dict[str, Any]]:
        status, body = self.hub.api("GET", "/api/runs")
        assert status == 200
        return body["runs"] if isinstance(body, dict) else body

    def newest_run(self, count: int = 0) -> dict[str, Any]:
        """The newest finished trip run once there are `count` more than when the module started."""
        found: list[dict[str, Any]] = []

        def finished() -> bool:
            runs = [r for r in self.runs() if r.get("name") == "trip" and r.get("status") != "running"]
            found[:] = runs
            return len(runs) >= count + self.base

        wait_for(finished, 15, f"{count} finished trip run(s)")
        return max(found, key=lambda r: r["startedAt"])

    def events(self, run_id: str) -> list[dict[str, Any]]:
        return self.hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]  # type: ignore[no-any-return]

    def record(self) -> tuple[Path, str]:
        done = self.agent()
        assert done.returncode == 0, done.stderr
        run = self.newest_run(1)
        out = self.tmp / "trip.jsonl"
        recorded = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphmind_server",
                "record",
                run["id"],
                "--db",
                str(self.hub.db),
                "--out",
                str(out),
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert recorded.returncode == 0, recorded.stderr
        return out, done.stdout


@pytest.fixture(scope="module")
def recorded(module_hub: HubProcess, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Setup:
    s = Setup(module_hub, fake, tmp_path_factory.mktemp("replay"))
    s.cassette, s.answer = s.record()
    s.recorded_id = s.newest_run(1)["id"]
    return s


@pytest.fixture
def setup(recorded: Setup) -> Setup:
    """The module's recording; `newest_run(1)` is the run the test makes."""
    recorded.base = len(
        [r for r in recorded.runs() if r.get("name") == "trip" and r.get("status") != "running"]
    )
    return recorded


def test_a_recorded_agent_replays_with_no_request_and_no_tool_body(setup: Setup) -> None:
    cassette, answer, recorded_id = setup.cassette, setup.answer, setup.recorded_id
    requests, ran = setup.fake.request_count, setup.tools_run()
    recording = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert len([e for e in recording if e.get("event", {}).get("type") == "node.started"]) == 7
    replayed = setup.agent(str(cassette))
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == answer and ANSWER in answer
    assert setup.fake.request_count == requests, "a replay must not reach the provider"
    assert setup.tools_run() == ran, "a replay must not run a tool body"
    run = setup.newest_run(1)
    assert run["id"] != recorded_id
    events = setup.events(run["id"])
    started = next(e for e in events if e["type"] == "run.started")
    assert started["replayOf"] == recorded_id and started["meta"]["argv"][0].endswith("replay_agent.py")
    endings = [e for e in events if e["type"] in ("node.finished", "node.error")]
    assert len(endings) == 7 and all(e.get("replayed") is True for e in endings), endings


def test_a_run_id_in_the_hub_database_is_a_source_too(setup: Setup) -> None:
    requests = setup.fake.request_count
    replayed = setup.agent(setup.recorded_id, "--db", str(setup.hub.db))
    assert replayed.returncode == 0, replayed.stderr
    assert setup.fake.request_count == requests


def test_fail_exits_non_zero_and_names_the_diverging_node(setup: Setup) -> None:
    cassette = setup.cassette
    requests, ran = setup.fake.request_count, setup.tools_run()
    done = setup.agent(str(cassette), "--on-divergence", "fail", AGENT_CABIN="business")
    assert done.returncode != 0
    report = [line for line in done.stderr.splitlines() if line.startswith("graphmind replay:")]
    assert report and "tool:book#1" in report[0], done.stderr
    assert '-  "cabin": "economy"' in done.stderr and '+  "cabin": "business"' in done.stderr
    assert setup.fake.request_count == requests and setup.tools_run() == ran


def test_hold_holds_the_diverging_node_with_the_diff_in_api_gates(setup: Setup) -> None:
    cassette = setup.cassette
    ran = setup.tools_run()
    command = [
        sys.executable,
        "-m",
        "graphmind_server",
        "replay",
        str(cassette),
        "--",
        sys.executable,
        str(AGENT),
    ]
    proc = subprocess.Popen(
        command,
        env={**setup.env, "AGENT_CABIN": "business"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the agent is the replay command's child: both are stopped on failure
    )
    try:
        try:
            gate = setup.hub.held_gates(1, timeout=60)[0]
        except AssertionError:
            gates = setup.hub.api("GET", "/api/gates")
            os.killpg(proc.pid, 9)
            raise AssertionError((gates, setup.hub.stderr[-2000:])) from None
        assert gate["reason"] == "divergence" and gate["nodeId"] == "tool:book"
        assert gate["expected"]["cabin"] == "economy" and gate["input"]["cabin"] == "business"
        assert gate["replay"]["occurrence"] == 1 and "recorded" in gate["actions"]
        status, _ = setup.hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "recorded"})
        assert status == 200
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.communicate()
    assert proc.returncode == 0, err
    assert "economy" in out, "`recorded` hands the app the recorded output"
    assert setup.tools_run() == ran


def test_live_runs_the_diverging_tool_and_everything_after(setup: Setup) -> None:
    cassette = setup.cassette
    requests, ran = setup.fake.request_count, setup.tools_run()
    # --safe off: book and pay are writes by the name rule (docs/effects.md); this test runs them live
    done = setup.agent(str(cassette), "--on-divergence", "live", "--safe", "off", AGENT_CABIN="business")
    assert done.returncode == 0, done.stderr
    assert "business" in done.stdout
    assert setup.tools_run() == [*ran, "book", "pay"]
    assert setup.fake.request_count == requests + 2, "the model steps after the divergence run live"


def test_a_fork_replays_up_to_the_node_and_the_next_request_carries_the_forked_value(setup: Setup) -> None:
    cassette = setup.cassette
    requests, ran = setup.fake.request_count, setup.tools_run()
    done = setup.agent(  # --safe off: pay, a write by the name rule, runs live after the fork
        str(cassette), "--fork", "tool:book#1", "--output", json.dumps("BOOKED-FORK-7"), "--safe", "off"
    )
    assert done.returncode == 0, done.stderr
    live = setup.fake.requests[requests:]
    assert len(live) == 2, "0 requests before the fork, then the model steps after it"
    tool_messages = [m for m in live[0].body["messages"] if m.get("role") == "tool"]
    assert "BOOKED-FORK-7" in tool_messages[1]["content"]
    assert setup.tools_run() == [*ran, "pay"], "search replayed, book forked, pay live"
    started = next(e for e in setup.events(setup.newest_run(1)["id"]) if e["type"] == "run.started")
    assert started["forkedAt"] == "tool:book#1"


def test_a_fork_with_an_edited_input_runs_that_tool_live_with_it(setup: Setup) -> None:
    cassette = setup.cassette
    requests, ran = setup.fake.request_count, setup.tools_run()
    recorded = Cassette.load(cassette).find("tool:book#1").input
    edited = {**recorded, "cabin": "first"}
    done = setup.agent(str(cassette), "--fork", "tool:book#1", "--input", json.dumps(edited), "--safe", "off")
    assert done.returncode == 0, done.stderr
    assert setup.tools_run() == [*ran, "book", "pay"], "search replayed, book live with the edit, pay live"
    assert setup.fake.request_count == requests + 2, "0 requests before the fork"
    ended = [
        e
        for e in setup.events(setup.newest_run(1)["id"])
        if e.get("nodeId") == "tool:book" and e["type"] == "node.finished"
    ]
    assert ended[0]["edited"] is True and ended[0]["input"] == edited
    assert ended[0]["originalInput"] == recorded


def test_a_bad_selector_is_one_line_and_the_command_never_runs(setup: Setup) -> None:
    cassette = setup.cassette
    ran = setup.tools_run()
    done = setup.agent(str(cassette), "--fork", "tool:nope#1", "--output", "1")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no recorded node 'tool:nope#1'" in done.stderr
    assert setup.tools_run() == ran
    # an output that is a bare word is told how to quote it
    done = setup.agent(str(cassette), "--fork", "tool:book#1", "--output", "sold out")
    assert done.returncode == 2 and "a string takes its quotes: '\"sold out\"'" in done.stderr, done.stderr
    assert setup.tools_run() == ran
