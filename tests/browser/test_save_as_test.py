""" "Save as test" against the real hub and real Chromium (docs/viewer.md): on a stored refund run's
node, the viewer writes the same cassette and test file `graphmind test new` writes; a path outside
the run's directory is refused with one line; a `graphmind replay --each` batch page lists its pairs
with links to their compare view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from openai import OpenAI
from playwright.sync_api import expect

import graphmind
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.cli import main
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "refund")
    try:
        yield c
    finally:
        c.dispose()


def refund_run(hub: Any, gm: graphmind.Client, app_dir: Path) -> str:
    """A refund run whose recorded command is `python agent.py` in `app_dir` (meta wins over argv)."""
    lookup = gm.wrap(lambda order_id: {"order_id": order_id, "paid": 40}, name="lookup_order")
    with FakeOpenAI(default_reply="Refunded 40 for A1.") as fake:
        client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test", max_retries=0), session=gm)
        with gm.run("refund", meta={"argv": ["agent.py"], "cwd": str(app_dir)}) as run:
            lookup(order_id="A1")
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "A1"}])
    wait_for(lambda: hub.api("GET", f"/api/runs/{run.run_id}")[1].get("status") == "finished", 10, "run end")
    return run.run_id


def test_save_as_test_writes_what_graphmind_test_new_writes(
    hub: Any, gm: graphmind.Client, make_page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    run_id = refund_run(hub, gm, app_dir)
    monkeypatch.setenv("GRAPHMIND_TELEMETRY", "0")
    assert main(["test", "new", run_id, "--db", str(hub.db), "--dir", str(app_dir / "cli")]) == 0

    page = make_page(hub.url, allow_console_errors=True)  # the refused folder below is a 400
    page.goto(f"{hub.url}/#/run/{run_id}/node/llm:step")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.get_by_role("button", name="Save as test").click()
    box = page.locator(".savetest-box")
    box.locator(".savetest-dir").fill("viewer")
    box.get_by_role("button", name="Write the test").click()
    expect(box.locator(".savetest-msg")).to_contain_text("Wrote ")
    expect(box.locator(".savetest-msg")).to_contain_text("it asserts llm:step#1")
    cli, viewer = sorted((app_dir / "cli").glob("test_*.py")), sorted((app_dir / "viewer").glob("test_*.py"))
    assert len(cli) == len(viewer) == 1 and cli[0].name == viewer[0].name
    assert cli[0].read_text() == viewer[0].read_text()
    assert "EXPECTED = 'Refunded 40 for A1.'" in viewer[0].read_text()
    (cassette,) = (app_dir / "viewer" / "cassettes").glob("*.jsonl")
    assert cassette.read_bytes() == (app_dir / "cli" / "cassettes" / cassette.name).read_bytes()

    # a folder outside the run's directory: one line, nothing written
    box.locator(".savetest-dir").fill("../elsewhere")
    box.get_by_role("button", name="Write the test").click()
    expect(box.locator(".savetest-msg")).to_contain_text("is outside the run's directory")
    assert not (tmp_path / "elsewhere").exists()


def test_a_replay_batch_lists_its_pairs_with_compare_links(
    hub: Any, gm: graphmind.Client, make_page: Any, tmp_path: Path
) -> None:
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    recorded = refund_run(hub, gm, app_dir)
    # a replay of it in batch "b1", as `graphmind replay --each` makes one (run.started's fields)
    replayer = graphmind.Client(
        app="refund",
        url=hub.ingest_url,
        replay={"source": _cassette(hub, recorded, tmp_path), "batch": "b1", "on_divergence": "fail"},
    )
    try:
        refund_run(hub, replayer, app_dir)
    finally:
        replayer.dispose()
    status, batch = hub.api("GET", "/api/replays/batches/b1")
    assert status == 200 and [(p["run"], p["label"]) for p in batch["pairs"]] == [(recorded, "same answer")]
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/batch/b1")
    page.wait_for_selector("body[data-batch-loaded=true]")
    pair = page.locator(".batch-pair")
    expect(pair).to_have_count(1)
    expect(pair.locator(".batch-result")).to_have_text("same answer")
    pair.get_by_role("link", name="Compare").click()
    page.wait_for_selector("body[data-compare-loaded=true]")
    expect(page.locator(".cmp-head h1")).to_have_text("The runs match")


def _cassette(hub: Any, run_id: str, tmp_path: Path) -> str:
    status, _ = hub.api("GET", f"/api/runs/{run_id}")
    assert status == 200
    out = tmp_path / "recorded.jsonl"
    assert main(["record", run_id, "--db", str(hub.db), "--out", str(out)]) == 0
    assert json.loads(out.read_text().splitlines()[1])["run"]["id"] == run_id
    return str(out)


def test_this_is_wrong_at_a_held_gate_writes_the_failing_test_and_the_gate_stays_held(
    hub: Any, gm: graphmind.Client, make_page: Any, tmp_path: Path
) -> None:
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    lookup = gm.wrap(
        lambda order_id: {"order_id": order_id, "paid": 40}, name="lookup_order", breakpoint=True
    )

    def body() -> Any:
        with gm.run("refund", meta={"argv": ["agent.py"], "cwd": str(app_dir)}):
            return lookup(order_id="A1")

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card).to_have_count(1)
    card.get_by_text("This is wrong: expected…").click()
    card.get_by_label("The answer you expected").fill("Refunded 40 for A1, and sorry.")
    card.get_by_role("button", name="Save failing test").click()
    expect(card.locator(".expected-msg")).to_contain_text("the gate is still held")
    (test,) = (app_dir / "tests").glob("test_*.py")
    assert "EXPECTED = 'Refunded 40 for A1, and sorry.'" in test.read_text()
    expect(card).to_have_count(1)  # still held: the person answers it as they choose
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page, 10), "the agent did not finish"
    assert agent.join().result == {"order_id": "A1", "paid": 40}
