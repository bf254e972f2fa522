"""graphmind.testing.replay_app, what every `graphmind test new` file calls: the answer of a
replay that matches, and the divergence of one that does not (docs/testing.md)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import graphmind
from graphmind.testing import FakeHub, replay_app, write_cassette

APP = """
import os
import graphmind as gm

gm.configure(app="replay-app")


@gm.tool
def lookup(city: str) -> str:
    raise SystemExit("the tool body ran under a replay")


with gm.run("weather"):
    print(lookup(city=os.environ.get("CITY", "lisbon")))
"""


def _recorded(tmp_path: Path) -> Path:
    with FakeHub() as hub:
        client = graphmind.Client(app="replay-app", url=hub.url, retry_interval=0.2)
        assert client.ready(5)

        def weather(city: str) -> str:
            return f"sunny in {city}"

        lookup = client.wrap(weather, "lookup")
        with client.run("weather"):
            assert lookup(city="lisbon") == "sunny in lisbon"
        sent = client.stats()["events"]
        hub.wait_for(lambda: len(hub.events) >= sent, what="every event at the hub")
        client.dispose()
        write_cassette(tmp_path / "weather.jsonl", client.client_id, list(hub.events))
    return tmp_path / "weather.jsonl"


def test_a_matching_replay_answers_and_a_changed_input_names_the_divergence(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    (tmp_path / "app.py").write_text(textwrap.dedent(APP))
    same = replay_app(cassette, ["app.py"], cwd=tmp_path, node="tool:lookup#1")
    assert same.returncode == 0 and same.answer == "sunny in lisbon", same.explain()
    changed = replay_app(cassette, ["app.py"], cwd=tmp_path, node="tool:lookup#1", env={"CITY": "porto"})
    assert changed.returncode != 0 and changed.answer is None
    # the divergence the app reported, not only the tail of its traceback
    assert "replay diverged at tool:lookup#1" in changed.divergence, changed.stderr
    assert changed.explain().startswith("the replay diverged: replay diverged at tool:lookup#1")
