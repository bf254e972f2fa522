"""Telemetry (environment page): the precedence of its five variables, the record, the background send."""

from __future__ import annotations

import http.server
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from graphmind_server.cli import main
from graphmind_server.telemetry import reporter as telemetry

# Each variable's values: None is "not set". Spellings the seeds name, plus the ones they say are ignored.
TELEMETRY = (None, "0", "false", " FALSE ", "log", "LOG", "1", "true", "yes", "")
DNT = (None, "1", "true", " TRUE ", "True", "yes", "0", "false", "")
CI = (None, "", "true", "0")
URL = (None, "http://127.0.0.1:9/t")
HOME = (None, "/tmp/graphmind-home")


def _expected(gt: str | None, dnt: str | None, ci: str | None, url: str | None) -> tuple[str, bool]:
    """The environment page's rows, written out independently of the code under test."""
    if dnt is not None and dnt.strip().lower() in {"1", "true"}:
        return "off", False  # "beats every GRAPHMIND_TELEMETRY value, including 1 and log"
    if gt is not None and gt.strip().lower() in {"0", "false"}:
        return "off", False
    if gt is not None and gt.strip().lower() == "log":
        return "log", False  # "sends nothing, even when CI is set"
    if ci is not None:
        return "off", False  # "Set to anything, telemetry is off"
    return "on", url is not None  # this project has no endpoint: no URL, nothing leaves


CASES = list(itertools.product(TELEMETRY, DNT, CI, URL, HOME))


def test_the_table_covers_every_combination_of_the_five_variables() -> None:
    assert len(CASES) == len(TELEMETRY) * len(DNT) * len(CI) * len(URL) * len(HOME) == 1440


@pytest.mark.parametrize(("gt", "dnt", "ci", "url", "home"), CASES)
def test_precedence(
    gt: str | None, dnt: str | None, ci: str | None, url: str | None, home: str | None
) -> None:
    env = {
        name: value
        for name, value in zip(telemetry.VARIABLES, (gt, dnt, ci, url, home), strict=True)
        if value is not None
    }
    decision = telemetry.decide(env)
    assert (decision.mode, decision.sends) == _expected(gt, dnt, ci, url), env
    assert decision.reason  # `graphmind telemetry` always says why
    if home is not None:
        assert telemetry.home_dir(env) == Path(home)


class _Collector(http.server.BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []
    release = threading.Event()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        type(self).bodies.append(self.rfile.read(length))
        type(self).release.wait(10)  # a slow endpoint: the command must not wait for it
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector():
    _Collector.bodies = []
    _Collector.release = threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/t"
    finally:
        _Collector.release.set()
        server.shutdown()
        server.server_close()


def test_the_record_is_posted_in_the_background_and_never_waits_for_the_endpoint(collector, tmp_path) -> None:
    env = {"GRAPHMIND_TELEMETRY_URL": collector, "GRAPHMIND_HOME": str(tmp_path)}
    thread = telemetry.report("record", env)
    assert thread is not None and thread.daemon
    # report() has returned while the endpoint still holds the request open.
    assert thread.is_alive() or _Collector.bodies
    _Collector.release.set()
    thread.join(10)
    record = json.loads(_Collector.bodies[0])
    assert set(record) == {"installId", "version", "command", "python", "os"}
    assert record["command"] == "record"
    assert record["installId"] == (tmp_path / "telemetry-id").read_text().strip()
    # The id is stable across commands.
    assert telemetry.build_record("serve", env)["installId"] == record["installId"]


def test_an_unreachable_endpoint_fails_nothing(tmp_path) -> None:
    env = {"GRAPHMIND_TELEMETRY_URL": "http://127.0.0.1:9/nothing-listens", "GRAPHMIND_HOME": str(tmp_path)}
    thread = telemetry.report("record", env)
    assert thread is not None
    thread.join(10)
    assert not thread.is_alive()


def test_log_prints_the_exact_record_and_sends_nothing_even_under_ci(collector, tmp_path, capsys) -> None:
    env = {
        "GRAPHMIND_TELEMETRY": "log",
        "CI": "true",
        "GRAPHMIND_TELEMETRY_URL": collector,
        "GRAPHMIND_HOME": str(tmp_path),
    }
    assert telemetry.report("mcp", env) is None
    err = capsys.readouterr().err
    assert err.startswith("[graphmind telemetry] ") and err.endswith("\n")
    record = json.loads(err[len(telemetry.PREFIX) :])
    assert record == telemetry.build_record("mcp", env)
    assert _Collector.bodies == []


def test_off_creates_no_install_id(tmp_path) -> None:
    assert telemetry.report("serve", {"DO_NOT_TRACK": "1", "GRAPHMIND_HOME": str(tmp_path)}) is None
    assert telemetry.report("serve", {"GRAPHMIND_HOME": str(tmp_path)}) is None  # no URL: nothing leaves
    assert not (tmp_path / "telemetry-id").exists()


def test_an_unwritable_home_still_gives_an_id(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env = {"GRAPHMIND_HOME": str(blocker / "sub")}
    assert len(telemetry.install_id(env)) == 32


def test_graphmind_telemetry_prints_the_state_and_why(monkeypatch, capsys) -> None:
    for name in telemetry.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DO_NOT_TRACK", " True ")
    monkeypatch.setenv("GRAPHMIND_TELEMETRY", "log")
    assert main(["telemetry"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("telemetry: off (DO_NOT_TRACK=True (it beats every GRAPHMIND_TELEMETRY value))")
    assert "GRAPHMIND_TELEMETRY='log'" in out and "CI not set" in out
    assert err == ""


def test_graphmind_telemetry_never_says_on_while_it_sends_nothing(monkeypatch, capsys) -> None:
    for name in telemetry.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert main(["telemetry"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first == (
        "telemetry: nothing is sent (the default; no GRAPHMIND_TELEMETRY_URL, so nothing leaves this machine)"
    )
    assert "telemetry: on" not in out
    monkeypatch.setenv("GRAPHMIND_TELEMETRY", "log")
    assert main(["telemetry"]) == 0
    assert capsys.readouterr().out.startswith("telemetry: log only, nothing is sent (")
    monkeypatch.delenv("GRAPHMIND_TELEMETRY")
    monkeypatch.setenv("GRAPHMIND_TELEMETRY_URL", "http://127.0.0.1:9/collect")
    assert main(["telemetry"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "telemetry: on, sending (the default; the record is posted to GRAPHMIND_TELEMETRY_URL)"
    )
    assert "endpoint: http://127.0.0.1:9/collect" in out


def test_a_command_logs_its_record_through_the_cli(tmp_path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GRAPHMIND_") and k not in ("CI", "DO_NOT_TRACK")
    }
    env.update({"GRAPHMIND_TELEMETRY": "log", "GRAPHMIND_HOME": str(tmp_path)})
    result = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", "--db", str(tmp_path / "none.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    first = result.stderr.splitlines()[0]
    assert first.startswith(telemetry.PREFIX)
    assert json.loads(first[len(telemetry.PREFIX) :])["command"] == "record"
