"""`graphmind replay --each`'s filter and outcome rule, and `graphmind test new`'s refusals, without
processes (the end-to-end runs are tests/test_run_to_test_e2e.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.http.replays import folder_of
from graphmind_server.replay.each import EachRefused, parse_query
from graphmind_server.replay.outcome import judge
from graphmind_server.replay.testfile import NotWritten, command_of

DAY_MS = 86_400_000


def test_a_query_is_the_run_lists_filter() -> None:
    query, limit = parse_query("app=refund status=ok since=7d name=refund limit=5", now_ms=10 * DAY_MS)
    assert (query["app"], query["status"], query["name"], limit) == ("refund", "finished", "refund", 5)
    assert query["filters"].since == 3 * DAY_MS


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("refund", "is no filter"),
        ("colour=red", "is no filter"),
        ("status=great", "status= takes ok"),
        ("limit=0", "limit= takes a whole number"),
        ("since=yesterday", "since= takes an age"),
    ],
)
def test_a_bad_query_is_one_line(text: str, says: str) -> None:
    with pytest.raises(EachRefused, match=says):
        parse_query(text)


def _run(answer: str, *, diverge: bool = False, status: str = "finished") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "run.started", "runId": "r", "nodeId": "agent:refund", "instanceId": "r"},
        {
            "type": "node.started",
            "nodeId": "llm:step",
            "instanceId": "s1",
            "kind": "llm",
            "input": {},
            "attrs": {"model": "gpt-4o-mini"},
        },
    ]
    if diverge:
        message = "replay diverged at llm:step#1: its input differs from the recording\n--- recorded"
        events.append(
            {
                "type": "node.error",
                "nodeId": "llm:step",
                "instanceId": "s1",
                "error": {"name": "ReplayDivergence", "message": message},
            }
        )
    else:
        events.append(
            {
                "type": "node.finished",
                "nodeId": "llm:step",
                "instanceId": "s1",
                "replayed": True,
                "output": {"role": "assistant", "content": answer},
                "usage": {"inputTokens": 1000, "outputTokens": 100},
            }
        )
    events.append({"type": "run.finished", "runId": "r", "status": status})
    return events


def test_the_outcome_of_a_replay() -> None:
    recorded = _run("Refunded 40.")
    same = judge(recorded, _run("Refunded 40."), 0)
    assert (same.label, same.differs) == ("same answer", False) and same.saved_usd > 0
    assert judge(recorded, _run("Refunded 0."), 0).label == "different answer"
    diverged = judge(recorded, _run("", diverge=True, status="error"), 1)
    assert (diverged.label, diverged.at) == ("diverged at llm:step#1", "llm:step#1")
    assert judge(recorded, _run("Refunded 40."), 3).label == "failed"
    assert judge(recorded, _run("x")[:-1], 0).why == "the replay never ended"


def test_a_run_without_a_command_is_refused_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(NotWritten, match=r"recorded no command .* pass --command"):
        command_of({"id": "r1", "meta": {}}, None)
    assert command_of({"id": "r1", "meta": {}}, "python3 agent.py --fast") == (
        ["agent.py", "--fast"],
        Path.cwd(),
    )
    with pytest.raises(NotWritten, match="is outside the run's directory"):
        folder_of({"id": "r1", "meta": {"cwd": str(tmp_path)}}, "../elsewhere")
    assert folder_of({"id": "r1", "meta": {"cwd": str(tmp_path)}}, None) == tmp_path.resolve() / "tests"


def test_a_directory_of_cassettes_is_read_in_name_order(tmp_path: Path) -> None:
    from graphmind.testing import write_cassette
    from graphmind_server.replay.each import _recordings

    for name, run in (("b.jsonl", "r2"), ("sub/a.jsonl", "r1")):
        events = [{**e, "runId": run} for e in _run("Refunded 40.")]
        events[0]["meta"] = {"argv": ["agent.py"], "cwd": "/srv/app"}
        write_cassette(tmp_path / "cassettes" / name, "c1", events)
    found = _recordings(str(tmp_path / "cassettes"), tmp_path / "no.db", tmp_path)
    assert [(r.run_id, r.run["meta"]["argv"]) for r in found] == [("r2", ["agent.py"]), ("r1", ["agent.py"])]
    (tmp_path / "empty").mkdir()
    with pytest.raises(EachRefused, match="holds no cassette"):
        _recordings(str(tmp_path / "empty"), tmp_path / "no.db", tmp_path)


RENDEZVOUS = """
import os, pathlib, sys, time
here = pathlib.Path(sys.argv[1])
(here / pathlib.Path(os.environ["GRAPHMIND_REPLAY"]).stem).touch()
deadline = time.monotonic() + 20
while len(list(here.iterdir())) < 2:  # both replays must be running at once
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.01)
"""


def test_jobs_runs_replays_at_once_and_keeps_the_table_in_recording_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--jobs 2`: two replays that each wait for the other both end (one at a time, the first
    would wait alone and fail); the rows stay in the cassettes' order."""
    import sys

    from graphmind.testing import write_cassette
    from graphmind_server.cli import main
    from graphmind_server.replay import each

    for name, run in (("a.jsonl", "r1"), ("b.jsonl", "r2")):
        write_cassette(
            tmp_path / "cassettes" / name, "c1", [{**e, "runId": run} for e in _run("Refunded 40.")]
        )
    (tmp_path / "met").mkdir()
    (tmp_path / "meet.py").write_text(RENDEZVOUS)
    # The hub is not what is tested: each replay "stored" the recorded answer.
    monkeypatch.setattr(
        each, "_stored_replay", lambda db, batch, run_id: (f"re-{run_id}", _run("Refunded 40."))
    )
    code = main(
        [
            "replay",
            "--each",
            str(tmp_path / "cassettes"),
            "--jobs",
            "2",
            "--json",
            "--db",
            str(tmp_path / "x.db"),
            "--",
            sys.executable,
            str(tmp_path / "meet.py"),
            str(tmp_path / "met"),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert [(p["run"], p["label"]) for p in report["pairs"]] == [("r1", "same answer"), ("r2", "same answer")]
    assert code == 0
    with pytest.raises(SystemExit):
        main(["replay", "--each", "x", "--jobs", "0"])
    assert "--jobs takes a whole number from 1 to 64" in capsys.readouterr().err
