"""A run becomes a test, many runs replay under one change, and a replay answers only model calls
(docs/testing.md, docs/replay.md), against the real hub, a fake provider that counts requests and
tools that count their bodies: the refund ticket agent (fixtures/ticket_agent.py) records 5 runs in
one process, then

- `graphmind test new` writes a test that passes with the provider stopped, and one with another
  `--expect` that fails naming expected and actual;
- `graphmind replay --each app=refund ...` after a prompt change that touches the 2 "broken"
  tickets names those 2 and where they diverged, exits 1, and the hub lists the batch as pairs;
- `graphmind replay RUN --only llm` runs the changed tool body live and replays the model calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.cli import main
from graphmind_server.replay.each import print_table
from graphmind_server.testing import HubProcess, wait_for

AGENT = Path(__file__).parent / "fixtures" / "ticket_agent.py"
TICKETS = [
    {"order_id": "A1", "text": "the mug arrived broken"},
    {"order_id": "A2", "text": "it came two weeks late"},
    {"order_id": "A3", "text": "wrong size"},
    {"order_id": "B1", "text": "the lamp is broken"},
    {"order_id": "B2", "text": "I changed my mind"},
]


def _model(body: dict[str, Any]) -> Any:
    """Look the order up, then answer with what the lookup said."""
    done = [m for m in body["messages"] if m.get("role") == "tool"]
    if not done:
        order = body["messages"][1]["content"].split(":")[0]
        return FakeOpenAI.tool_call("lookup_order", {"order_id": order}, call_id=f"call_{order}")
    found = json.loads(done[0]["content"])
    return f"Refunded {found['paid']} for {found['order_id']}."


class App:
    """The agent copied into its own directory (the run's recorded cwd), and the shared hub."""

    def __init__(self, hub: HubProcess, fake: FakeOpenAI, tmp: Path) -> None:
        self.hub, self.fake, self.dir = hub, fake, tmp / "app"
        self.dir.mkdir()
        shutil.copy(AGENT, self.dir / "agent.py")
        self.log = tmp / "tools.log"
        self.env = {
            **os.environ,
            "GRAPHMIND_URL": hub.ingest_url,
            "GRAPHMIND_DB": str(hub.db),
            "GRAPHMIND_HOME": str(tmp / "home"),
            "FAKE_OPENAI_URL": fake.base_url,
            "TOOL_LOG": str(self.log),
            "GRAPHMIND_TELEMETRY": "0",
        }
        for name in ("GRAPHMIND_SAFE", "GRAPHMIND_REPLAY_SAFE", "PYTEST_ADDOPTS", "TICKETS"):
            self.env.pop(name, None)
        self.runs: list[dict[str, Any]] = []

    def ran(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def run(self, *command: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command),
            cwd=self.dir,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def graphmind(
        self, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *words: str, **env: str
    ) -> tuple[int, str, str]:
        """`graphmind WORDS` in this process (its own children are the processes that cost), in the
        app's directory with the app's environment."""
        with mp.context() as m:
            m.chdir(self.dir)
            for key, value in {**self.env, **env}.items():
                m.setenv(key, value)
            for key in ("TICKETS", "GRAPHMIND_SAFE", "GRAPHMIND_REPLAY_SAFE"):
                if key not in env:
                    m.delenv(key, raising=False)
            capsys.readouterr()
            code = main(list(words))
            out = capsys.readouterr()
        return code, out.out, out.err

    def stored(self) -> list[dict[str, Any]]:
        status, body = self.hub.api("GET", "/api/runs?app=refund&limit=100")
        assert status == 200
        return [r for r in body["runs"] if r["status"] != "running"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    tmp = tmp_path_factory.mktemp("run-to-test")
    with HubProcess(tmp / "hub.db") as hub, FakeOpenAI(default_reply=_model) as fake:
        a = App(hub, fake, tmp)
        done = a.run(sys.executable, "agent.py", TICKETS=json.dumps(TICKETS))
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0] == "Refunded 40 for A1. -- Support"
        wait_for(lambda: len(a.stored()) == 5, 15, "the 5 recorded runs")
        a.runs = sorted(a.stored(), key=lambda r: r["startedAt"])
        yield a
    assert "Traceback" not in hub.stderr, hub.stderr


Run = tuple[int, str, str]


def test_a_stored_run_becomes_a_test_that_passes_offline_and_fails_on_another_answer(
    app: App, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = app.runs[0]["id"]
    code, out, err = app.graphmind(monkeypatch, capsys, "test", "new", first, "--name", "refund_a1")
    assert code == 0, err
    assert "tests/test_refund_a1.py" in out and '"Refunded 40 for A1."' in out
    code, out, err = app.graphmind(
        monkeypatch, capsys, "test", "new", first, "--name", "refund_a1_wrong", "--expect", '"Refunded 0."'
    )
    assert code == 0, err
    assert (app.dir / "tests" / "cassettes" / "refund_a1.jsonl").stat().st_mode & 0o077 == 0
    requests, ran = app.fake.request_count, app.ran()
    # Offline: the provider's URL points at a port nothing listens on.
    done = app.run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests",
        FAKE_OPENAI_URL="http://127.0.0.1:9/v1",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # the generated test needs no plugin: a faster start
    )
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "FAILED tests/test_refund_a1_wrong.py" in done.stdout
    assert "expected 'Refunded 0.', actual 'Refunded 40 for A1.'" in done.stdout
    assert app.fake.request_count == requests, "the test must replay every model call"
    assert app.ran() == ran, "the test must replay every tool call"


def test_test_new_refuses_with_one_line(
    app: App, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = app.runs[0]["id"]
    code, _, err = app.graphmind(
        monkeypatch, capsys, "test", "new", first, "--node", "tool:nope#1", "--name", "x"
    )
    assert code == 2 and err.count("\n") == 1 and "no recorded node 'tool:nope#1'" in err, err
    code, _, err = app.graphmind(monkeypatch, capsys, "test", "new", "no-such-run")
    assert code == 2 and "no run 'no-such-run'" in err, err
    code, _, err = app.graphmind(monkeypatch, capsys, "test", "new", first, "--expect", "not json")
    assert code == 2 and "--expect takes JSON" in err, err


def test_each_names_the_runs_a_prompt_change_touches_and_exits_1(
    app: App, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = app.fake.request_count
    code, out, err = app.graphmind(
        monkeypatch,
        capsys,
        "replay",
        "--each",
        "app=refund name=refund status=ok limit=5",
        "--json",
        "--",
        sys.executable,
        "agent.py",
        DAMAGED_PROMPT="Broken items: offer a replacement first.",
    )
    assert code == 1, err
    report = json.loads(out)
    by_run = {p["run"]: p for p in report["pairs"]}
    assert set(by_run) == {r["id"] for r in app.runs}
    broken = {app.runs[0]["id"], app.runs[3]["id"]}
    assert {p["run"] for p in report["pairs"] if p["result"] == "diverged"} == broken
    assert all(by_run[r]["label"] == "diverged at llm:step#1" for r in broken)
    assert report["totals"] == {"same answer": 3, "different answer": 0, "diverged": 2, "failed": 0}
    assert report["savedUsd"] > 0
    assert app.fake.request_count == requests, "a diverged replay fails; nothing reaches the provider"
    status, batch = app.hub.api("GET", f"/api/replays/batches/{report['batch']}")
    assert status == 200
    assert {(p["run"], p["replay"], p["label"]) for p in batch["pairs"]} == {
        (p["run"], p["replay"], p["label"]) for p in report["pairs"]
    }
    print_table(report)  # the table, as a person reads it
    table = capsys.readouterr().out
    for run in broken:
        assert f"{run[:12]}   diverged at llm:step#1" in table, table
    assert "5 run(s): 3 same answer, 0 different answer, 2 diverged, 0 failed" in table


def test_only_llm_runs_the_changed_tool_live_and_replays_the_model(
    app: App, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    requests, ran = app.fake.request_count, app.ran()
    code, out, err = app.graphmind(  # capfd: the agent is the command's child, writing to fd 1
        monkeypatch,
        capfd,
        "replay",
        app.runs[1]["id"],
        "--only",
        "llm",
        "--",
        sys.executable,
        "agent.py",
        TICKETS=json.dumps(TICKETS[1:2]),
        SIGNATURE="-- The refund team",
    )
    assert code == 0, err
    assert out.strip() == "Refunded 40 for A2. -- The refund team"
    assert app.fake.request_count == requests, "the model calls replay"
    assert app.ran()[len(ran) :] == ["next_ticket", "lookup_order", "sign_reply"], "the tools run live"
