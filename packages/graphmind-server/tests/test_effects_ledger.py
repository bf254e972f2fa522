"""The effects ledger (docs/effects.md): a run's write and unknown tool calls, in order, with what
became of each and by whose answer; through the API, `graphmind effects`, exports and `graphmind
diff`. A fake app speaks the wire shape of docs/protocol.md, "Effects and safe mode"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.cli import main
from graphmind_server.store.effects import fold
from graphmind_server.testing import FakeApp, in_thread

WRITE = {"class": "write", "source": "name rule", "rule": "*refund*"}
READ = {"class": "read", "source": "name rule", "rule": "lookup*"}
REFUND_IN = {"order_id": "A1", "amount": 20}


def _simulated_run(app: FakeApp, run_id: str, amount: int = 20) -> None:
    """A read, then a write simulated by safe mode (no hold), as core sends them."""
    app.run_started(run_id, "refund")
    app.node_started(run_id, "tool:lookup_order", "c1", {"order_id": "A1"}, effect=READ)
    app.node_finished(run_id, "tool:lookup_order", "c1", {"status": "delivered"})
    app.node_started(run_id, "tool:issue_refund", "c2", {"order_id": "A1", "amount": amount}, effect=WRITE)
    app.node_finished(
        run_id,
        "tool:issue_refund",
        "c2",
        {"ok": True},
        simulated=True,
        simulatedFrom="schema",
        effect={"class": "write", "source": "name rule", "outcome": "simulated", "by": "safe mode"},
    )
    app.run_finished(run_id)


def _ledger(thub: Any, run_id: str) -> dict[str, Any]:
    status, body = thub.api("GET", f"/api/runs/{run_id}/effects")
    assert status == 200, body
    return dict(body)


def _effects_cli(db: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["effects", *args, "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_simulated_write_is_listed_with_its_input_and_no_write_ran(
    thub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app = thub.app()
    _simulated_run(app, "r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished")
    ledger = _ledger(thub, "r1")
    [entry] = ledger["effects"]  # the read is not in the ledger
    assert (entry["name"], entry["class"], entry["source"], entry["outcome"], entry["by"]) == (
        "issue_refund",
        "write",
        "name rule",
        "simulated",
        "safe mode",
    )
    assert entry["input"] == REFUND_IN
    assert (entry["runs"], entry["simulatedFrom"], entry["output"]) == (0, "schema", {"ok": True})
    assert ledger["summary"]["writesRan"] == 0
    code, out, err = _effects_cli(thub.db, "r1", capsys=capsys)
    assert code == 0, err
    assert "0 writes ran" in out.splitlines()[0]
    row = out.splitlines()[2]
    assert "issue_refund" in row and "simulated" in row and '"amount": 20' in row
    code, out, _ = _effects_cli(thub.db, "r1", "--json", capsys=capsys)
    assert (code, json.loads(out)) == (0, ledger)


def test_a_held_write_answered_run_for_real_in_the_viewer_says_held_then_ran_by_the_viewer(
    thub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app = thub.app()
    app.run_started("r2", "refund")
    app.node_started("r2", "tool:issue_refund", "c2", REFUND_IN, effect=WRITE)
    paused = app.hold(
        "r2",
        "tool:issue_refund",
        "c2",
        reason="effect",
        actions=["continue", "inject", "simulate", "abort"],
        effect=WRITE,
        simulateWith="schema",
        input=REFUND_IN,
    )
    [gate] = thub.wait_for(lambda: thub.gates(), what="the effect hold")
    # The class and its source are on the gate the viewer's card is drawn from.
    assert (gate["reason"], gate["effect"], gate["simulateWith"]) == ("effect", WRITE, "schema")
    assert "simulate" in gate["actions"]
    code, _, err = _effects_cli(thub.db, "r2", capsys=capsys)
    assert code == 0, err  # held: nothing ran yet
    answering, answered = in_thread(
        lambda: thub.api(
            "POST",
            f"/api/gates/{gate['gateId']}",
            {"action": "continue"},
            headers={"X-GraphMind-Via": "viewer"},
        )
    )
    resolve = app.expect("gate.resolve")
    assert resolve["answeredBy"] == "viewer"
    app.event(
        "exec.resumed",
        "r2",
        nodeId="tool:issue_refund",
        instanceId="c2",
        gateId=paused["gateId"],
        gate="before",
        action="continue",
        heldMs=5.0,
        by="hub",
        answeredBy=resolve["answeredBy"],
    )
    answering.join(5)
    assert answered["value"][0] == 200
    app.node_finished(
        "r2",
        "tool:issue_refund",
        "c2",
        {"refunded": 20},
        effect={"class": "write", "source": "name rule", "outcome": "held then ran", "by": "viewer"},
    )
    app.run_finished("r2")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r2")[1].get("status") == "finished")
    [entry] = _ledger(thub, "r2")["effects"]
    assert (entry["outcome"], entry["by"], entry["heldReason"], entry["runs"]) == (
        "held then ran",
        "viewer",
        "effect",
        1,
    )
    assert entry["answer"] == {"action": "continue", "by": "viewer", "heldMs": 5.0}
    code, out, _ = _effects_cli(thub.db, "r2", capsys=capsys)
    assert code == 1
    assert "1 write ran" in out and "held then ran" in out and "the viewer" in out


def test_the_ledger_follows_the_events_when_the_app_gives_no_verdict() -> None:
    """An ending without `effect` (an app mid-upgrade, a run cut short): the events alone decide."""
    started = {"type": "node.started", "nodeId": "tool:send_mail", "instanceId": "i", "kind": "tool"}
    unknown = {**started, "effect": {"class": "unknown", "source": "default"}}
    write = {**started, "effect": WRITE}
    paused = {
        "type": "exec.paused",
        "nodeId": "tool:send_mail",
        "instanceId": "i",
        "gate": "before",
        "reason": "effect",
    }
    resumed = {
        "type": "exec.resumed",
        "nodeId": "tool:send_mail",
        "instanceId": "i",
        "gate": "before",
        "by": "hub",
    }
    finished = {"type": "node.finished", "nodeId": "tool:send_mail", "instanceId": "i"}
    aborted = {
        "type": "node.error",
        "nodeId": "tool:send_mail",
        "instanceId": "i",
        "error": {"name": "RunAborted"},
    }

    def outcome(*events: dict[str, Any]) -> tuple[str, int]:
        [entry] = fold(events)
        return entry["outcome"], entry["runs"]

    assert outcome(write, finished) == ("ran", 1)
    assert outcome(unknown, finished) == ("ran", 1)
    assert outcome(write) == ("running", 1)  # may be running now: counted as ran
    assert outcome(write, paused) == ("held", 0)
    assert outcome(write, paused, {**resumed, "action": "continue"}, finished) == ("held then ran", 1)
    assert outcome(write, paused, {**resumed, "action": "inject"}, {**finished, "injected": True}) == (
        "injected",
        0,
    )
    assert outcome(write, paused, {**resumed, "action": "abort"}, aborted) == ("skipped", 0)
    assert outcome(write, {**finished, "replayed": True}) == ("replayed", 0)
    assert outcome(write, {**finished, "simulated": True}) == ("simulated", 0)
    # Injected at the after gate: the body ran, whatever the value handed back.
    after = {**paused, "gate": "after", "reason": "breakpoint"}
    inject_after = {**resumed, "gate": "after", "action": "inject"}
    verdict = {"class": "write", "source": "name rule", "outcome": "injected", "by": "api"}
    assert outcome(write, after, inject_after, {**finished, "injected": True, "effect": verdict}) == (
        "injected",
        1,
    )
    retried = {"type": "node.attempt", "nodeId": "tool:send_mail", "instanceId": "i"}
    assert outcome(write, retried, finished) == ("ran", 2)
    # Edited at its before gate: the ledger names the input the write ran with, and the first one.
    edited = {**finished, "edited": True, "input": {"to": "b"}, "originalInput": {"to": "a"}}
    [entry] = fold([{**write, "input": {"to": "a"}}, paused, {**resumed, "action": "continue"}, edited])
    assert (entry["input"], entry["originalInput"], entry["outcome"]) == (
        {"to": "b"},
        {"to": "a"},
        "held then ran",
    )
    assert "originalInput" not in fold([{**write, "input": {"to": "a"}}, finished])[0]
    # A read, a model step and a node without a class are never listed.
    assert fold([{**started, "effect": READ}, finished]) == []
    assert fold([{**started, "kind": "llm", "effect": WRITE}]) == []
    assert fold([started, finished]) == []


def test_an_unknown_run_is_a_404_and_a_one_line_cli_error(
    thub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app = thub.app()
    _simulated_run(app, "r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished")
    status, body = thub.api("GET", "/api/runs/nope/effects")
    assert status == 404 and "no run 'nope'" in body["error"]
    code, out, err = _effects_cli(thub.db, "nope", capsys=capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("graphmind effects: no run 'nope'")


def test_the_export_carries_the_ledger_and_import_reads_it_back(
    thub: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = thub.app()
    _simulated_run(app, "r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished")
    ledger = _ledger(thub, "r1")
    out = tmp_path / "r1.jsonl"
    assert main(["record", "r1", "--db", str(thub.db), "--out", str(out)]) == 0
    run_line = json.loads(out.read_text().splitlines()[1])
    assert run_line["run"]["effects"] == ledger["effects"]
    other = tmp_path / "other.db"
    assert main(["import", str(out), "--db", str(other)]) == 0
    capsys.readouterr()
    code, text, _ = _effects_cli(other, "r1", "--json", capsys=capsys)
    assert (code, json.loads(text)) == (0, ledger)
    # A file whose ledger says otherwise than its events is named (the events win).
    lines = out.read_text().splitlines()
    run_line["run"]["effects"][0]["outcome"] = "ran"
    lines[1] = json.dumps(run_line)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    assert main(["import", str(edited), "--db", str(tmp_path / "third.db")]) == 0
    assert "the file's effects ledger differs" in capsys.readouterr().err


def test_diff_compares_two_runs_ledgers(thub: Any, capsys: pytest.CaptureFixture[str]) -> None:
    app = thub.app()
    _simulated_run(app, "r1", amount=20)
    app.run_started("r3", "refund")
    app.node_started("r3", "tool:lookup_order", "d1", {"order_id": "A1"}, effect=READ)
    app.node_finished("r3", "tool:lookup_order", "d1", {"status": "delivered"})
    app.node_started("r3", "tool:issue_refund", "d2", {"order_id": "A1", "amount": 25}, effect=WRITE)
    app.node_finished(
        "r3",
        "tool:issue_refund",
        "d2",
        {"ok": True},
        effect={"class": "write", "source": "name rule", "outcome": "ran"},
    )
    app.run_finished("r3")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r3")[1].get("status") == "finished")
    body = thub.api("GET", "/api/compare?a=r1&b=r3")[1]
    effects = body["effects"]
    assert (effects["same"], effects["a"]["writesRan"], effects["b"]["writesRan"]) == (False, 0, 1)
    [row] = effects["calls"]
    assert (row["status"], row["changed"]) == ("changed", ["input", "outcome"])
    assert body["same"] is False
    assert main(["diff", "r1", "r3", "--db", str(thub.db)]) == 1
    text = capsys.readouterr().out
    assert "effects: A 0 writes ran, B 1 write ran" in text
    assert "~ issue_refund  outcome simulated -> ran  input differ" in text


def test_simulate_answers_are_checked_before_they_are_sent(thub: Any) -> None:
    app = thub.app(auto_resume=True)
    app.run_started("r4")
    app.node_started("r4", "tool:issue_refund", "c", REFUND_IN, effect=WRITE)
    app.hold(
        "r4", "tool:issue_refund", "c", reason="effect", actions=["continue", "inject", "simulate", "abort"]
    )
    [gate] = thub.wait_for(lambda: thub.gates(), what="the effect hold")
    url = f"/api/gates/{gate['gateId']}"
    status, body = thub.api("POST", url, {"action": "simulate", "remember": True})
    assert status == 400 and 'needs the "value"' in body["error"]
    status, body = thub.api("POST", url, {"action": "continue", "remember": True})
    assert status == 422 and "goes with simulate" in body["error"]
    status, body = thub.api("POST", url, {"action": "simulate", "value": {"k": "__REDACTED__"}})
    assert status == 422
    assert thub.api("POST", url, {"action": "simulate", "value": {"ok": True}, "remember": True})[0] == 200
    resolve = app.expect("gate.resolve")
    assert (resolve["action"], resolve["value"], resolve["remember"], resolve["answeredBy"]) == (
        "simulate",
        {"ok": True},
        True,
        "api",
    )
    # A gate that does not offer simulate (a breakpoint on a read) refuses it.
    app.node_started("r4", "tool:lookup_order", "d", {}, effect=READ)
    app.hold("r4", "tool:lookup_order", "d")
    other = thub.wait_for(
        lambda: [g for g in thub.gates() if g["nodeId"] == "tool:lookup_order"], what="hold"
    )[0]
    assert thub.api("POST", f"/api/gates/{other['gateId']}", {"action": "simulate"})[0] == 422


def test_safe_mode_reaches_every_attached_app_and_survives_a_restart(thub: Any) -> None:
    a, b = thub.app(), thub.app()
    status, body = thub.api("PUT", "/api/debug", {"safe": "hold"})
    assert status == 200 and (body["safe"], body["safeUnknown"]) == ("hold", False)
    for app in (a, b):
        assert app.expect("debug.state", where=lambda f: f.get("safe") == "hold")["safeUnknown"] is False
    status, body = thub.api("PUT", "/api/debug", {"safe": "sometimes"})
    assert status == 400 and body["error"] == "safe must be one of off, hold, simulate (got 'sometimes')"
    assert thub.api("PUT", "/api/debug", {"safeUnknown": "yes"})[0] == 400
    assert thub.api("GET", "/api/debug")[1]["safe"] == "hold"
    thub.restart()
    assert thub.api("GET", "/api/debug")[1]["safe"] == "hold"
    late = thub.app()
    assert late.welcome["debug"]["safe"] == "hold"


def test_simulate_without_a_value_sends_what_an_earlier_run_recorded_for_the_same_input(thub: Any) -> None:
    app = thub.app(auto_resume=True)
    app.run_started("r0", "refund")
    app.node_started("r0", "tool:issue_refund", "c0", {"amount": 20, "order_id": "A1"}, effect=WRITE)
    app.node_finished("r0", "tool:issue_refund", "c0", {"refunded": 20, "id": "R-1"})
    app.run_finished("r0")
    app.run_started("r5", "refund")
    for instance, order in (("same", "A1"), ("other", "B2")):
        app.node_started("r5", "tool:issue_refund", instance, {"order_id": order, "amount": 20}, effect=WRITE)
        app.hold(
            "r5",
            "tool:issue_refund",
            instance,
            reason="effect",
            actions=["continue", "inject", "simulate", "abort"],
            simulateWith="schema",
            input={"order_id": order, "amount": 20},
        )
        [gate] = thub.wait_for(lambda: thub.gates(), what="the effect hold")
        assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "simulate"})[0] == 200
        resolve = app.expect("gate.resolve")
        if order == "A1":  # the same input (keys in another order): r0's real output
            assert resolve["value"] == {"refunded": 20, "id": "R-1"}
        else:  # nothing recorded for B2: the app builds its own value
            assert "value" not in resolve
        thub.wait_for(lambda: not thub.gates(), what="the answer")
