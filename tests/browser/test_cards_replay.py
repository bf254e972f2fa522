"""Issue 31's viewer against the real hub and a real replay: a recorded run, replayed with one tool
argument changed, holds at the divergence; the card shows recorded against actual input and
answers "Use recorded"; the replayed run links to its recording and back, its nodes are marked
replayed; "Fork from here" on the recording gives the command for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind
from graphmind._replay import cassette
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


class Trip:
    """Three gated tools that count their calls."""

    def __init__(self, client: graphmind.Client) -> None:
        self.calls: list[str] = []

        def search(to: str) -> list[str]:
            self.calls.append("search")
            return [f"flight to {to}"]

        def book(flight: str) -> dict[str, Any]:
            self.calls.append("book")
            return {"booking": flight.upper(), "price": 100.0}

        def pay(amount: float) -> str:
            self.calls.append("pay")
            return f"paid {amount}"

        self.search = client.wrap(search, name="search")
        self.book = client.wrap(book, name="book")
        self.pay = client.wrap(pay, name="pay")

    def agent(self, client: graphmind.Client, to: str) -> str:
        with client.run("trip"):
            booking = self.book(self.search(to)[0])
            return self.pay(booking["price"])  # type: ignore[no-any-return]


def record(hub: Any, tmp_path: Path) -> tuple[str, Path]:
    """One real run against the hub, written as a cassette from what the hub stored."""
    client = attached_client(hub, "trip-app")
    try:
        assert Trip(client).agent(client, "LIS") == "paid 100.0"
    finally:
        client.dispose()
    runs = wait_for(
        lambda: [r for r in hub.api("GET", "/api/runs?app=trip-app")[1]["runs"] if r["status"] == "finished"],
        10,
        "the recorded run",
    )
    run_id = runs[0]["id"]
    events = hub.api("GET", f"/api/runs/{run_id}/events?limit=5000")[1]["events"]
    path = tmp_path / "trip.jsonl"
    cassette.write_cassette(path, runs[0]["clientId"], events)
    return run_id, path


def test_a_divergence_holds_on_the_card_with_the_diff_and_use_recorded_replays_the_rest(
    hub: Any, make_page: Any, tmp_path: Path
) -> None:
    recorded_id, path = record(hub, tmp_path)
    client = attached_client(hub, "trip-app", replay=str(path))
    trip = Trip(client)
    agent = AgentThread(lambda: trip.agent(client, "OPO"))  # the second run asks for another city
    try:
        page = make_page(hub.url)
        page.goto(hub.url)
        card = page.locator(".gate-card")
        expect(card.locator(".gate-reason")).to_have_text(
            "Divergence from the recording: its input differs from the recording"
        )
        expect(card.locator(".divergence-where")).to_contain_text("occurrence #1 of tool:search")
        diff = card.locator(".jd-lines")
        expect(diff.locator(".jd-del")).to_contain_text(['"LIS"'])
        expect(diff.locator(".jd-add")).to_contain_text(['"OPO"'])
        card.get_by_role("button", name="Use recorded").click()
        assert agent.wait_pumping(page, 15), hub.api("GET", "/api/gates")
        agent.join()
    finally:
        client.dispose()
    assert agent.error is None, agent.error
    assert agent.result == "paid 100.0"
    assert trip.calls == []  # search answered from the recording, book and pay replayed

    replayed = wait_for(
        lambda: [r for r in hub.api("GET", "/api/runs?app=trip-app")[1]["runs"] if r["id"] != recorded_id],
        10,
        "the replayed run",
    )[0]
    page.goto(f"{hub.url}/#/run/{replayed['id']}/node/tool:book")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".gnode[data-node-id='tool:pay']")).to_contain_text("ok · replayed")
    line = page.locator(".run-head .replay-line")
    expect(line).to_contain_text(f"replay of trip ({recorded_id})")
    expect(line).to_contain_text("calls replayed")
    expect(page.locator("#detail .d-replayed")).to_contain_text("from the recording saved a tool run")
    line.get_by_role("link", name=f"trip ({recorded_id})").click()
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".run-head .replay-line")).to_contain_text(f"replayed by trip ({replayed['id']})")


def test_edit_input_at_a_divergence_runs_that_call_live_with_the_edit(
    hub: Any, make_page: Any, tmp_path: Path
) -> None:
    _recorded_id, path = record(hub, tmp_path)
    client = attached_client(hub, "trip-app", replay=str(path))
    trip = Trip(client)
    agent = AgentThread(lambda: trip.agent(client, "OPO"))
    try:
        page = make_page(hub.url)
        page.goto(hub.url)
        card = page.locator(".gate-card")
        expect(card.locator(".gate-reason")).to_contain_text("Divergence from the recording")
        card.get_by_role("button", name="Edit input").click()
        expect(card).to_have_attribute("data-edit-ready", "true")
        box = page.get_by_label("Edited input (JSON)")
        assert json.loads(box.input_value()) == {"to": "OPO"}
        box.fill('{"to": "MAD"}')
        box.press("Control+Enter")
        # Live from here, a replay holds each write (book, pay by the name rule) until a person
        # says to run it for real (docs/effects.md, the replay's default `--safe hold`).
        for name in ("book", "pay"):
            held = page.locator(".gate-card.reason-effect", has_text=name)
            held.get_by_role("button", name="Run it for real").click()
            expect(held).to_have_count(0)
        assert agent.wait_pumping(page, 15), hub.api("GET", "/api/gates")
        agent.join()
    finally:
        client.dispose()
    assert agent.error is None, agent.error
    assert trip.calls == ["search", "book", "pay"]  # live from the divergence on
    page.locator(".run-item", has_text="trip").first.click()
    page.wait_for_selector("body[data-run-loaded=true]")
    page.locator(".gnode[data-node-id='tool:search']").click()
    diff = page.locator("#detail .d-edited .jd-lines")
    expect(diff.locator(".jd-del")).to_have_text(['-   "to": "OPO"'])
    expect(diff.locator(".jd-add")).to_have_text(['+   "to": "MAD"'])


AGENT = """
import json
import sys

import graphmind

gm = graphmind.configure(app="fork-app")


@gm.tool("search")
def search(to: str) -> list[str]:
    return [f"flight to {to}"]


@gm.tool("book")
def book(flight: str) -> str:
    return f"booked {flight}"


with gm.run("trip"):
    print(json.dumps(book(search(sys.argv[1])[0])))
"""


def test_fork_from_here_gives_a_command_that_runs_the_app_forked_at_that_node(
    hub: Any, make_page: Any, tmp_path: Path
) -> None:
    app_dir = tmp_path / "my app"
    app_dir.mkdir()
    (app_dir / "agent.py").write_text(AGENT)
    env = {
        **os.environ,
        "GRAPHMIND_URL": hub.ingest_url,
        "GRAPHMIND_DB": str(hub.db),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    first = subprocess.run(
        [sys.executable, "agent.py", "LIS"], cwd=app_dir, env=env, capture_output=True, text=True, timeout=60
    )
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == "booked flight to LIS"
    recorded = wait_for(
        lambda: [r for r in hub.api("GET", "/api/runs?app=fork-app")[1]["runs"] if r["status"] == "finished"],
        10,
        "the recorded run",
    )[0]
    assert recorded["meta"]["argv"] == ["agent.py", "LIS"] and recorded["meta"]["cwd"] == str(app_dir)
    assert recorded["meta"]["executable"] == sys.executable

    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/{recorded['id']}/node/tool:search")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.locator("#detail").get_by_role("button", name="Fork from here").click()
    fork = page.locator("#detail .fork")
    fork.locator("textarea").fill('["flight to NOWHERE"]')
    cmd = fork.locator(".fork-cmd")
    # The run's own interpreter (this venv's), not whichever `python` is first on the PATH.
    expect(cmd).to_contain_text(f"-- {sys.executable} agent.py LIS")
    command = cmd.inner_text()
    assert command.startswith(
        f"cd '{app_dir}' && graphmind replay {recorded['id']} --fork 'tool:search#1' --output "
    )

    # The command as a person would paste it: search is forked, book runs live with the forked value.
    # A fork's live tail holds a write (book, by the name rule) until it is answered: on the card.
    forked = subprocess.Popen(
        ["bash", "-c", command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        held = page.locator(".gate-card.reason-effect", has_text="book")
        held.get_by_role("button", name="Run it for real").click()
        expect(held).to_have_count(0)
        while forked.poll() is None:  # the page keeps serving its requests meanwhile (_apps.py)
            page.wait_for_timeout(20)
        out, err = forked.communicate(timeout=60)
    finally:
        if forked.poll() is None:
            forked.kill()
            forked.communicate()
    assert forked.returncode == 0, err
    assert json.loads(out) == "booked flight to NOWHERE"
    # The recording's header links to the new run as it arrives.
    back = page.locator(".run-head .replay-line")
    expect(back).to_contain_text("replayed by trip (")
    back.locator(".replay-link").click()
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".run-head .replay-line")).to_contain_text(
        f"replay of trip ({recorded['id']}), forked at tool:search#1"
    )
    # The forked call says where its value came from: the fork, not the debugger.
    expect(page.locator(".gnode[data-node-id='tool:search'] .g-state")).to_contain_text("forked")
    page.locator(".gnode[data-node-id='tool:search']").click()
    expect(page.locator("#detail .d-status-text")).to_have_text(
        "injected (forked: its output came from the fork command)"
    )
