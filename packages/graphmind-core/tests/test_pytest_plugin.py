"""The pytest plugin (graphmind.pytest_plugin, docs/testing.md): record once against a fake
provider, replay offline, fail on a changed prompt with the divergence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphmind.testing import FakeHub

pytest_plugins = ["pytester"]

TEST_FILE = """
import os

import pytest
from openai import OpenAI

from graphmind_openai import instrument_openai

PROMPT = os.environ.get("PROMPT", "Plan a day in Cairo")


@pytest.mark.graphmind(cassette="cassettes/trip.jsonl", ignore_keys=["user"])
def test_trip():
    client = instrument_openai(OpenAI(base_url=os.environ["FAKE_OPENAI_URL"], api_key="k", max_retries=0))
    reply = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": PROMPT}], user=os.environ.get("RUN_ID", "1")
    )
    assert reply.choices[0].message.content == "Visit the pyramids."


def test_unmarked_tests_are_left_alone(request):
    assert "graphmind_cassette" not in request.fixturenames
"""


@pytest.fixture
def env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.Pytester:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GRAPHMIND_URL", "ws://127.0.0.1:9/ingest")  # no hub: CI
    monkeypatch.delenv("GRAPHMIND_REPLAY", raising=False)
    pytester.makepyfile(test_trip=TEST_FILE)
    return pytester


def test_record_once_then_replay_offline_then_a_changed_prompt_fails(
    env: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmind_openai.testing import FakeOpenAI

    cassette = env.path / "cassettes" / "trip.jsonl"
    with FakeOpenAI(default_reply="Visit the pyramids.") as fake:
        monkeypatch.setenv("FAKE_OPENAI_URL", fake.base_url)
        missing = env.runpytest("-p", "no:randomly", "--graphmind-record-mode=none")
        missing.assert_outcomes(passed=1, errors=1)
        assert (
            "no cassette" in missing.stdout.str() and "--graphmind-record-mode=once" in missing.stdout.str()
        )
        assert fake.request_count == 0
        recorded = env.runpytest("-p", "no:randomly", "--graphmind-record-mode=once")
        recorded.assert_outcomes(passed=2)
        assert fake.request_count == 1 and cassette.is_file()
        assert (cassette.stat().st_mode & 0o777) == 0o600
        assert '"api_key"' not in cassette.read_text() or "__REDACTED__" in cassette.read_text()
    # the provider is gone: only the cassette can answer
    monkeypatch.setenv("RUN_ID", "2")  # an ignored key
    offline = env.runpytest("-p", "no:randomly")
    offline.assert_outcomes(passed=2)
    monkeypatch.setenv("PROMPT", "Plan a day in Paris")
    changed = env.runpytest("-p", "no:randomly", "--graphmind-record-mode=none")
    changed.assert_outcomes(passed=1, failed=1)
    out = changed.stdout.str()
    assert "ReplayDivergence" in out and "replay diverged at llm:step#1" in out
    assert "Paris" in out and "Cairo" in out


def test_all_records_again_and_new_episodes_records_the_rest(
    env: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmind_openai.testing import FakeOpenAI

    cassette = env.path / "cassettes" / "trip.jsonl"
    with FakeOpenAI(default_reply="Visit the pyramids.") as fake:
        monkeypatch.setenv("FAKE_OPENAI_URL", fake.base_url)
        cassette.parent.mkdir()
        cassette.write_text("stale")
        env.runpytest("-p", "no:randomly", "--graphmind-record-mode=all").assert_outcomes(passed=2)
        assert fake.request_count == 1 and cassette.read_text().startswith('{"type":"graphmind.export"')
        monkeypatch.setenv("PROMPT", "Plan a day in Paris")
        episodes = env.runpytest("-p", "no:randomly", "--graphmind-record-mode=new_episodes")
        episodes.assert_outcomes(passed=2)
        assert fake.request_count == 2 and "Paris" in cassette.read_text()
    env.runpytest("-p", "no:randomly").assert_outcomes(passed=2)  # the new recording replays offline


# ---- the code under test configures GraphMind itself ---------------------------------------------
REFUND_AGENT = """
import json
import os

import pytest
from openai import OpenAI

import graphmind as gm
from graphmind_openai import instrument_openai

# The usual layout: the model client and the tools at import, configure() in the code that runs.
llm = instrument_openai(
    OpenAI(base_url=os.environ.get("FAKE_OPENAI_URL", "http://127.0.0.1:9/v1"), api_key="k", max_retries=0)
)
TOOLS = [{"type": "function", "function": {"name": "refund", "parameters": {"type": "object"}}}]


@gm.tool(hold_if=lambda amount, **_: amount > 100 and f"refund of {amount} is over 100")
def refund(order: str, amount: float) -> str:
    return f"refunded {amount} on {order}"


def refund_agent(ask: str) -> str:
    messages = [{"role": "user", "content": ask}]
    with gm.run("refund-agent"):
        while True:
            reply = llm.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                result = refund(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@pytest.mark.graphmind(cassette="cassettes/refund.jsonl")
def test_refund_agent():
    gm.configure(app="refunds", url=os.environ["HUB_URL"])
    assert refund_agent("Refund order A42, 30 EUR") == "Refunded 30 on A42."
    assert not os.environ.get("FAIL_ON_PURPOSE"), "failed on purpose"


@pytest.mark.graphmind(cassette="cassettes/own_client.jsonl")
def test_a_client_of_its_own_records_nothing():
    client = gm.Client(app="own", url=os.environ["HUB_URL"])
    lookup = client.wrap(lambda order: order, name="lookup")
    assert lookup("A42") == "A42"
    client.dispose()
"""


@pytest.fixture
def refunds(env: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("HUB_URL", "ws://127.0.0.1:9/ingest")  # no hub: CI
    env.makepyfile(test_refunds=REFUND_AGENT)
    return env


def _refund_script(fake: Any) -> None:
    from graphmind_openai.testing import FakeOpenAI

    fake.script(
        [FakeOpenAI.tool_call("refund", {"order": "A42", "amount": 30}, "call_1"), "Refunded 30 on A42."]
    )


def test_a_test_that_calls_configure_records_once_and_replays_with_the_provider_stopped(
    refunds: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmind_openai.testing import FakeOpenAI

    cassette = refunds.path / "cassettes" / "refund.jsonl"
    with FakeOpenAI() as fake:
        _refund_script(fake)
        monkeypatch.setenv("FAKE_OPENAI_URL", fake.base_url)
        recorded = refunds.runpytest(
            "-p", "no:randomly", "--graphmind-record-mode=once", "-k", "refund_agent"
        )
        recorded.assert_outcomes(passed=1)
        assert fake.request_count == 2 and cassette.is_file()
    events = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    started = [
        e["event"]["nodeId"] for e in events if e["type"] == "event" and e["event"]["type"] == "node.started"
    ]
    assert started == ["llm:step", "tool:refund", "llm:step"]
    assert {e["run"]["app"] for e in events if e["type"] == "run"} == {"refunds"}  # configure's options apply
    # the provider is stopped: only the cassette can answer
    refunds.runpytest("-p", "no:randomly", "-k", "refund_agent").assert_outcomes(passed=1)


def test_a_marked_test_that_recorded_no_call_fails_saying_why(refunds: pytest.Pytester) -> None:
    result = refunds.runpytest("-p", "no:randomly", "--graphmind-record-mode=once", "-k", "client_of_its_own")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert (
        "graphmind: this test is marked for a cassette but recorded no call, so no cassette was written"
        in out
    )
    assert "graphmind.Client(...)" in out and "graphmind.configure(...)" in out
    assert not (refunds.path / "cassettes" / "own_client.jsonl").exists()
    # a cassette that exists and is replayed by nothing fails too
    (refunds.path / "cassettes").mkdir(exist_ok=True)
    (refunds.path / "cassettes" / "own_client.jsonl").write_text('{"type":"graphmind.export","version":1}\n')
    replayed = refunds.runpytest("-p", "no:randomly", "-k", "client_of_its_own")
    replayed.assert_outcomes(failed=1)
    assert "replayed no call of" in replayed.stdout.str()


def test_a_failing_test_with_a_run_of_its_own_links_the_run_in_the_viewer(
    refunds: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmind_openai.testing import FakeOpenAI

    with FakeOpenAI() as fake:
        _refund_script(fake)
        monkeypatch.setenv("FAKE_OPENAI_URL", fake.base_url)
        refunds.runpytest("-p", "no:randomly", "--graphmind-record-mode=once", "-k", "refund_agent")
    with FakeHub() as hub:
        monkeypatch.setenv("HUB_URL", hub.url)
        monkeypatch.setenv("FAIL_ON_PURPOSE", "1")
        failed = refunds.runpytest("-p", "no:randomly", "-k", "refund_agent")
        failed.assert_outcomes(failed=1)
        run_id = hub.of_type("run.started")[0]["runId"]
    base = hub.url.replace("ws", "http", 1).rsplit("/ingest", 1)[0]
    assert f"the run in the viewer: {base}/#/run/{run_id}" in failed.stdout.str()


# ---- a write the recording did not have (docs/effects.md) -------------------------------------------
REFUND_TESTS = """
import os

import pytest

import graphmind as gm

REFUND = os.environ.get("REFUND") == "1"


@gm.tool
def lookup_order(order_id):
    return {"status": "delivered"}


@gm.tool
def issue_refund(order_id, amount):
    with open(os.environ["TOOL_LOG"], "a") as log:
        log.write("issue_refund\\n")
    return {"refunded": amount}


def agent():
    with gm.run("refund"):
        lookup_order("A1")
        if REFUND:
            try:
                issue_refund("A1", 5)
            except Exception:  # the code under test swallows it: the test must fail anyway
                pass


@pytest.mark.graphmind(cassette="cassettes/guarded.jsonl")
def test_guarded():
    agent()


@pytest.mark.graphmind(cassette="cassettes/live.jsonl", live=True)
def test_live():
    agent()
"""


def test_a_write_the_recording_did_not_have_fails_the_test_unless_marked_live(
    env: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "tools.log"
    monkeypatch.setenv("TOOL_LOG", str(log))
    env.makepyfile(test_refunds=REFUND_TESTS)
    env.runpytest("-p", "no:randomly", "--graphmind-record-mode=once", "test_refunds.py").assert_outcomes(
        passed=2
    )
    monkeypatch.setenv("REFUND", "1")
    for mode in ("none", "new_episodes"):
        result = env.runpytest("-p", "no:randomly", f"--graphmind-record-mode={mode}", "test_refunds.py")
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*test_guarded*", "*tool:issue_refund*"])
    assert log.read_text().split() == ["issue_refund", "issue_refund"], "only the test marked live refunded"
