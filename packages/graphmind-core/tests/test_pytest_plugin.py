"""The pytest plugin (graphmind.pytest_plugin, docs/testing.md): record once against a fake
provider, replay offline, fail on a changed prompt with the divergence."""

from __future__ import annotations

from pathlib import Path

import pytest

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
