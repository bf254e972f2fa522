"""The pause card's answers that change a call, and the node detail that records them (issues 30
and 31), against the real hub: a FakeApp sends the events an app would (docs/protocol.md), the
page shows them, and what the page sends is checked at the hub's API (the request body) and at
the app (the gate.resolve it receives)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def app(hub: Any) -> Iterator[FakeApp]:
    a = FakeApp(hub.ingest_url, app="cards-app", auto_resume=True)
    try:
        yield a
    finally:
        a.close()


def start_run(app: FakeApp, run_id: str, name: str, **fields: Any) -> None:
    app.event(
        "run.started",
        run_id,
        name=name,
        app=app.app,
        nodeId=f"agent:{name}",
        instanceId=run_id,
        kind="agent",
        implicit=False,
        **{"meta": {}, **fields},
    )


def held_call(app: FakeApp, run_id: str, call_id: str, input: Any, **paused: Any) -> dict[str, Any]:
    app.node_started(run_id, "tool:search", call_id, input=input)
    return app.hold(run_id, "tool:search", call_id, input=input, **paused)


def posted(page: Any, action: Any) -> dict[str, Any]:
    """The JSON body of the gate answer `action()` makes the page send."""
    with page.expect_request(lambda r: r.method == "POST" and "/api/gates/" in r.url) as req:
        action()
    return json.loads(req.value.post_data)  # type: ignore[no-any-return]


def test_edit_input_at_a_before_gate_validates_inline_and_sends_the_edited_input(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    start_run(app, "r-edit", "edit-run")
    why = (
        "search is defined inside a function (a closure): only what a module defines at its top level reloads"
    )
    held_call(
        app,
        "r-edit",
        "c1",
        {"q": "lisbon", "limit": 3},
        editable=True,
        reloadable=False,
        notReloadable=why,
        attempt=1,
    )
    page = make_page(hub.url)
    answers: list[Any] = []
    page.on("request", lambda r: answers.append(r) if r.method == "POST" and "/api/gates/" in r.url else None)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
    expect(card.locator(".gate-attempt")).to_have_count(0)  # a first attempt says nothing
    expect(card.locator(".gate-not-reloadable")).to_have_text(f"Reload not offered: {why}")
    expect(card.get_by_role("button", name="Retry with…")).to_have_count(
        0
    )  # a before gate edits, not retries
    card.get_by_role("button", name="Edit input").click()
    expect(card).to_have_attribute("data-edit-ready", "true")
    box = page.get_by_label("Edited input (JSON)")
    assert json.loads(box.input_value()) == {"q": "lisbon", "limit": 3}  # starts with the input
    send = card.locator(".box-edit").get_by_role("button", name="Send")

    box.fill('{"q": "porto", ')
    expect(card.locator(".box-edit .answer-check")).to_contain_text("Cannot send: not valid JSON")
    expect(box).to_have_attribute("aria-invalid", "true")
    send.click()
    expect(card.locator(".gate-msg")).to_contain_text("Not sent: not valid JSON")
    box.fill('{"q": "__REDACTED__", "limit": 3}')
    expect(card.locator(".box-edit .answer-check")).to_contain_text('still contains "__REDACTED__"')
    box.press("Control+Enter")  # the shortcut sends nothing either
    expect(card.locator(".gate-msg")).to_contain_text('Not sent: still contains "__REDACTED__"')
    box.fill('{"q": "porto", "limit": 3}')
    expect(card.locator(".box-edit .answer-check")).to_have_text("Valid JSON · 2 lines differ from the input")
    body = posted(page, send.click)
    assert body == {"action": "continue", "input": {"q": "porto", "limit": 3}}
    expect(card).to_have_count(0)  # the app confirmed
    assert len(answers) == 1  # nothing went out before the value was valid


def test_a_gate_that_cannot_take_an_edit_says_why_and_so_does_an_older_apps(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    start_run(app, "r-hidden", "hidden-run")
    held_call(
        app,
        "r-hidden",
        "c1",
        "__REDACTED__",
        editable=False,
        notEditable="input hidden by GRAPHMIND_HIDE_INPUTS",
    )
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    edit = card.get_by_role("button", name="Edit input")
    expect(edit).to_be_disabled()
    expect(card.locator(".gate-not-editable")).to_have_text(
        "Input not editable: input hidden by GRAPHMIND_HIDE_INPUTS"
    )
    page.keyboard.press("e")  # the shortcut opens nothing on it
    expect(card.locator(".box-edit")).to_be_hidden()
    card.get_by_role("button", name="Continue").click()
    expect(card).to_have_count(0)
    # An app that does not say `editable` (before issue 30) is never sent an edit: the hub says why.
    held_call(app, "r-hidden", "c2", {"q": "x"})
    expect(card.get_by_role("button", name="Edit input")).to_be_disabled()
    expect(card.locator(".gate-not-editable")).to_have_text(
        "Input not editable: this app's GraphMind is too old to take an edited input"
    )


def test_retry_with_an_edited_input_and_reload_at_an_error_gate_by_keyboard(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    start_run(app, "r-err", "error-run")
    err = {"name": "ValueError", "message": "search backend is down"}
    held_call(
        app,
        "r-err",
        "c1",
        {"q": "lisbon"},
        gate="error",
        reason="error",
        error=err,
        editable=True,
        reloadable=True,
        reloadOptIn=True,  # this hub has no token: reload only for an app that opted in
        attempt=2,
    )
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-attempt")).to_have_text("attempt 2")
    expect(card.locator(".gate-not-reloadable")).to_have_count(0)  # offered: no reason shown
    expect(card.get_by_role("button", name="Edit input")).to_have_count(0)
    page.keyboard.press("e")
    expect(card).to_have_attribute("data-edit-ready", "true")
    box = page.get_by_label("Input for the retry (JSON)")
    assert json.loads(box.input_value()) == {"q": "lisbon"}
    box.fill('{"q": "lisbon, portugal"}')
    card.locator(".answer-reload").check()  # "reload the code first" goes with it
    body = posted(page, lambda: box.press("Control+Enter"))
    assert body == {"action": "retry", "input": {"q": "lisbon, portugal"}, "reload": True}
    expect(card).to_have_count(0)

    held_call(
        app,
        "r-err",
        "c2",
        {"q": "porto"},
        gate="error",
        reason="error",
        error=err,
        editable=True,
        reloadable=True,
        reloadOptIn=True,  # this hub has no token: reload only for an app that opted in
    )
    expect(card.get_by_role("button", name="Reload code and retry")).to_be_visible()
    page.locator("body").click(position={"x": 5, "y": 5})  # focus away from any field
    body = posted(page, lambda: page.keyboard.press("Shift+R"))
    assert body == {"action": "retry", "reload": True}
    expect(card).to_have_count(0)


def test_a_refused_answer_is_on_the_card_and_the_inject_box_starts_from_the_skeleton(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    start_run(app, "r-ref", "refused-run")
    refused = "the value does not match the tool's outputSchema: 'temperature' is a required property"
    held_call(
        app,
        "r-ref",
        "c1",
        {"city": "Lisbon"},
        editable=True,
        attempt=1,
        refused=refused,
        injectSkeleton={"temperature": 0, "unit": ""},
    )
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-refused")).to_have_text(f"Your last answer was refused: {refused}")
    status, body = hub.api("GET", "/api/gates")
    assert status == 200 and body["gates"][0]["refused"] == refused  # the API item carries it too
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    assert json.loads(page.get_by_label("Inject value (JSON)").input_value()) == {
        "temperature": 0,
        "unit": "",
    }


def test_the_divergence_card_shows_recorded_against_actual_and_takes_use_recorded(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    start_run(app, "r-div", "divergence-run", replayOf="r-recorded")
    held_call(
        app,
        "r-div",
        "c2",
        {"q": "porto", "limit": 3},
        reason="divergence",
        expected={"limit": 3, "q": "lisbon"},
        replay={"source": "r-recorded", "occurrence": 2, "why": "the input differs from the recording"},
        actions=["continue", "recorded", "inject", "abort"],
        editable=True,
    )
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text(
        "Divergence from the recording: the input differs from the recording"
    )
    expect(card.locator(".divergence-where")).to_have_text(
        "Expected from the recording r-recorded, occurrence #2 of tool:search"
    )
    diff = card.locator(".jdiff")
    expect(diff).to_have_attribute("data-removed", "1")  # key order is not a difference
    expect(diff).to_have_attribute("data-added", "1")
    expect(diff.locator(".jd-del")).to_contain_text(['"q": "lisbon"'])
    expect(diff.locator(".jd-lines .jd-add")).to_have_text(['+   "q": "porto"'])
    for name in ("Continue live", "Use recorded", "Inject", "Edit input", "Abort"):
        expect(card.get_by_role("button", name=name, exact=True)).to_be_visible()

    # The hub before issue 31's API takes no "recorded": answer the POST here, check what was sent.
    page.route("**/api/gates/*", lambda route: route.fulfill(status=200, json={"ok": True}))
    page.locator("body").click(position={"x": 5, "y": 5})
    body = posted(page, lambda: page.keyboard.press("u"))
    assert body == {"action": "recorded"}


def test_the_node_detail_keeps_every_attempt_and_shows_the_edited_input_as_a_diff(
    hub: Any, app: FakeApp, make_page: Any, tmp_path: Any
) -> None:
    start_run(app, "r-att", "attempts-run")
    node = {"nodeId": "tool:search", "instanceId": "c1", "kind": "tool", "name": "search"}
    app.event("node.started", "r-att", **node, parentInstanceId="r-att", input={"q": "lisbon"})
    app.event(
        "node.attempt",
        "r-att",
        **node,
        attempt=1,
        input={"q": "lisbon"},
        error={"name": "ValueError", "message": "search backend is down"},
        durationMs=12.0,
    )
    app.event(
        "node.attempt",
        "r-att",
        **node,
        attempt=2,
        input={"q": "lisbon, pt"},
        error={"name": "TimeoutError", "message": "took too long"},
        durationMs=31.0,
    )
    app.event(
        "node.finished",
        "r-att",
        **node,
        input={"q": "lisbon, portugal"},
        edited=True,
        originalInput={"q": "lisbon"},
        output={"hits": 2},
        durationMs=60.0,
        heldMs=10.0,
    )
    app.run_finished("r-att")
    wait_for(lambda: hub.api("GET", "/api/runs/r-att")[1].get("status") == "finished", 5, "the run to finish")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/r-att/node/tool:search")
    page.wait_for_selector("body[data-run-loaded=true]")
    detail = page.locator("#detail")
    expect(detail.locator("h3", has_text="Input (edited)")).to_be_visible()
    diff = detail.locator(".d-edited .jdiff")
    expect(diff.locator(".jd-lines .jd-del")).to_have_text(['-   "q": "lisbon"'])
    expect(diff.locator(".jd-lines .jd-add")).to_have_text(['+   "q": "lisbon, portugal"'])
    attempts = detail.locator(".d-attempt")
    expect(attempts).to_have_count(3)
    expect(attempts.nth(0)).to_contain_text("Attempt 1 · 12 ms")
    expect(attempts.nth(0)).to_contain_text("ValueError: search backend is down")
    expect(attempts.nth(1)).to_contain_text("TimeoutError: took too long")
    attempts.nth(1).locator("summary", has_text="Input").click()
    expect(attempts.nth(1)).to_contain_text('"lisbon, pt"')
    expect(attempts.nth(2)).to_contain_text("Attempt 3 · ok")
    expect(detail.locator(".d-exec-item")).to_contain_text("edited · 3 attempts")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.screenshot(path=str(tmp_path / "detail-attempts-1280x720.png"))


def test_fork_from_here_builds_the_replay_command_with_the_apps_own_command_line(
    hub: Any, app: FakeApp, make_page: Any, tmp_path: Any
) -> None:
    start_run(
        app, "r-rec", "recorded-run", meta={"argv": ["agent.py", "--city", "Lisbon"], "cwd": "/srv/my app"}
    )
    for i in (1, 2):
        app.node_started("r-rec", "tool:search", f"c{i}", input={"q": f"q{i}"})
        app.node_finished("r-rec", "tool:search", f"c{i}", output={"hits": [i]})
    app.run_finished("r-rec")
    wait_for(lambda: hub.api("GET", "/api/runs/r-rec")[1].get("status") == "finished", 5, "the run to finish")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/r-rec/node/tool:search")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.keyboard.press("f")  # the latest execution: the second call of the node
    fork = page.locator("#detail .fork")
    expect(fork.locator("h3")).to_have_text("Fork from tool:search#2")
    box = fork.locator("textarea")
    assert json.loads(box.input_value()) == {"hits": [2]}
    cmd = fork.locator(".fork-cmd")
    expect(cmd).to_have_text(
        "cd '/srv/my app' && graphmind replay r-rec --fork 'tool:search#2' --output '{\"hits\":[2]}' "
        "-- python agent.py --city Lisbon"
    )
    box.fill('{"hits": ["it\'s forked"]}')
    expect(cmd).to_contain_text("--output '{\"hits\":[\"it'\\''s forked\"]}'")
    box.fill("{nope")
    expect(fork.locator(".answer-check")).to_contain_text("Cannot fork: not valid JSON")
    expect(cmd).to_have_text("")
    fork.get_by_label("Change its input").check()
    assert json.loads(box.input_value()) == {"q": "q2"}
    expect(cmd).to_contain_text("--fork 'tool:search#2' --input '{\"q\":\"q2\"}'")
    page.set_viewport_size({"width": 1280, "height": 720})
    fork.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "detail-fork-1280x720.png"))
    # The first call of the node is `#1`.
    page.locator("#detail .d-exec-item", has_text="#1").click()
    page.locator("#detail").get_by_role("button", name="Fork from here").click()
    expect(page.locator("#detail .fork h3")).to_have_text("Fork from tool:search#1")


def test_a_replayed_run_links_to_its_recording_and_back_and_marks_what_it_saved(
    hub: Any, app: FakeApp, make_page: Any
) -> None:
    llm = {"nodeId": "llm:step", "instanceId": "s1", "kind": "llm", "name": "step"}
    usage = {"inputTokens": 400, "outputTokens": 12, "totalTokens": 412, "costUsd": 0.0206}  # reported
    start_run(app, "r-orig", "original")
    app.event("node.started", "r-orig", **llm, parentInstanceId="r-orig", input={"messages": []})
    app.event(
        "node.finished", "r-orig", **llm, output={"text": "hi"}, usage=usage, durationMs=900.0, heldMs=0
    )
    app.run_finished("r-orig")
    # The replay hands back the recorded output without calling the model: its ending has no usage;
    # what it saved is what the recorded call used.
    start_run(app, "r-replay", "replayed", replayOf="r-orig")
    llm = {**llm, "instanceId": "s2"}
    app.event("node.started", "r-replay", **llm, parentInstanceId="r-replay", input={"messages": []})
    app.event(
        "node.finished",
        "r-replay",
        **llm,
        output={"text": "hi"},
        replayed=True,
        injected=True,
        durationMs=0.2,
        heldMs=0,
    )
    app.node_started("r-replay", "tool:search", "c1", input={"q": "x"})
    app.node_finished("r-replay", "tool:search", "c1", output={"hits": 1})
    app.run_finished("r-replay")
    wait_for(
        lambda: hub.api("GET", "/api/runs/r-replay")[1].get("status") == "finished", 5, "the run to finish"
    )
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/r-replay/node/llm:step")
    page.wait_for_selector("body[data-run-loaded=true]")
    line = page.locator(".run-head .replay-line")
    expect(line).to_contain_text("replay of original (r-orig)")
    expect(line).to_contain_text("1 of 2 calls replayed, saved 412 model tokens (≈ $0.02)")
    expect(page.locator("#detail .d-replayed")).to_contain_text(
        "from the recording saved a model call: 412 tokens, $0.02"  # the recorded call's own cost
    )
    expect(page.locator("#detail .d-exec-item")).to_contain_text("replayed")
    line.get_by_role("link", name="original (r-orig)").click()
    page.wait_for_selector("body[data-run-loaded=true]")
    back = page.locator(".run-head .replay-line")
    expect(back).to_contain_text("replayed by replayed (r-replay)")


def test_the_help_lists_the_new_shortcuts(hub: Any, make_page: Any) -> None:
    page = make_page(hub.url)
    page.goto(hub.url)
    page.keyboard.press("?")
    help_card = page.locator("#help")
    for key in ("e", "R", "u", "f"):
        expect(help_card.locator("kbd", has_text=key).first).to_be_visible()
    expect(help_card).to_contain_text("Edit input (before gates) or Retry with…")
    expect(help_card).to_contain_text("Reload code and retry")


@pytest.mark.parametrize("which", ["edit", "divergence"])
def test_the_card_with_its_box_open_fits_a_1280x720_window(
    hub: Any, app: FakeApp, make_page: Any, tmp_path: Any, which: str
) -> None:
    start_run(app, "r-fit", "fit-run")
    big = {
        "messages": [{"role": "user", "content": f"question {i} " * 8} for i in range(12)],
        "model": "gpt-4o",
    }
    if which == "edit":
        held_call(
            app,
            "r-fit",
            "c1",
            big,
            gate="error",
            reason="error",
            error={"name": "ValueError", "message": "the backend is down " * 6},
            editable=True,
            reloadable=True,
            reloadOptIn=True,  # this hub has no token: reload only for an app that opted in
            attempt=3,
            refused="the edited input could not be turned back into a call: unknown parameter 'qq'",
        )
    else:
        changed = {**big, "model": "gpt-4o-mini"}
        held_call(
            app,
            "r-fit",
            "c1",
            changed,
            reason="divergence",
            expected=big,
            replay={"source": "r-rec", "occurrence": 1, "why": "the input differs from the recording"},
            actions=["continue", "recorded", "inject", "abort"],
            editable=True,
        )
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card).to_be_visible()
    page.keyboard.press("e")
    expect(card).to_have_attribute("data-edit-ready", "true")
    page.screenshot(path=str(tmp_path / f"card-{which}-1280x720.png"))
    panel = page.locator("#gates").bounding_box()
    assert panel is not None
    assert panel["y"] >= 0 and panel["y"] + panel["height"] <= 720, panel
    assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 1280, panel
    # Every answer is reachable: the buttons and the box's Send are in view (the panel scrolls).
    send = card.locator(".box-edit").get_by_role("button", name="Send")
    send.scroll_into_view_if_needed()
    box = send.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720, box
    for button in card.locator(".gate-actions").first.get_by_role("button").all():
        button.scroll_into_view_if_needed()
        b = button.bounding_box()
        assert b is not None and b["x"] + b["width"] <= panel["x"] + panel["width"], b
