"""`graphmind serve`: the listening line, one-line errors with exit code 2, a clean Ctrl-C."""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import subprocess
import sys
import warnings
from typing import Any

import pytest

from graphmind_server.cli import main
from graphmind_server.testing import FakeApp, HubProcess, wait_for


def _run(args, env=None, timeout=20):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "graphmind_server", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _one_clear_line(result, *names):
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("graphmind: ")
    for name in names:
        assert name in lines[0]


def test_the_hub_prints_its_listening_line_and_on_another_port_the_apps_url(tmp_path):
    with HubProcess(tmp_path / "hub.db") as hub:
        expected = [
            f"GraphMind hub listening on http://127.0.0.1:{hub.port}\n",
            f"Apps attach with: GRAPHMIND_URL=ws://127.0.0.1:{hub.port}/ingest\n",
        ]
        assert hub.api("GET", "/api/health")[0] == 200
        wait_for(lambda: len(hub.stdout_lines) == 2, 5, "two lines")
        assert hub.stdout_lines == expected
        assert hub.stop() == 0
    assert hub.stdout_lines == expected


def test_a_port_in_use_is_one_line_naming_port(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _one_clear_line(
            _run(["serve", "--port", str(port), "--db", str(tmp_path / "x.db")]), "--port", str(port)
        )


def test_an_unwritable_db_path_is_one_line_naming_db(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    _one_clear_line(_run(["--port", "0", "--db", str(tmp_path / "file" / "hub.db")]), "--db", "GRAPHMIND_DB")
    _one_clear_line(
        _run(["--port", "0"], env={"GRAPHMIND_DB": str(tmp_path / "file" / "hub.db")}), "GRAPHMIND_DB"
    )


def test_a_bad_flag_and_a_bad_variable_are_one_line_in_a_real_process(tmp_path):
    _one_clear_line(_run(["serve", "--port", "http", "--db", str(tmp_path / "x.db")]), "--port")
    _one_clear_line(
        _run(
            ["serve", "--port", "0", "--db", str(tmp_path / "x.db")],
            env={"GRAPHMIND_PAUSE_ON_ERROR": "sometimes"},
        ),
        "GRAPHMIND_PAUSE_ON_ERROR",
    )
    _one_clear_line(_run(["serve", "--colour", "red"]), "--colour")


@pytest.mark.parametrize(
    ("args", "env", "name"),
    [
        (["--port", "70000"], {}, "--port"),
        (["--port", "-1"], {}, "--port"),
        (["--keep", "0"], {}, "--keep"),
        (["--days", "soon"], {}, "--days"),
        (["--pause-on-error", "maybe"], {}, "--pause-on-error"),
        (["--host", " "], {}, "--host"),
        ([], {"GRAPHMIND_KEEP_RUNS": "lots"}, "GRAPHMIND_KEEP_RUNS"),
        ([], {"GRAPHMIND_KEEP_DAYS": "-3"}, "GRAPHMIND_KEEP_DAYS"),
        ([], {"GRAPHMIND_ABANDON_GRACE_MS": "1.5s"}, "GRAPHMIND_ABANDON_GRACE_MS"),
        ([], {"GRAPHMIND_RETENTION": "sometimes"}, "GRAPHMIND_RETENTION"),
        ([], {"GRAPHMIND_ALLOWED_ORIGINS": "ftp://files.example"}, "GRAPHMIND_ALLOWED_ORIGINS"),
        ([], {"GRAPHMIND_VIEWER_DIST": "/nonexistent/viewer"}, "GRAPHMIND_VIEWER_DIST"),
        (["--host", "256.1.1.1"], {}, "--host"),
    ],
)
def test_each_bad_value_is_one_line_naming_it(tmp_path, monkeypatch, capsys, args, env, name):
    for key in list(os.environ):
        if key.startswith("GRAPHMIND_"):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["serve", "--port", "0", "--db", str(tmp_path / "x.db"), *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err and err.startswith("graphmind: ")


def test_a_flag_beats_its_variable(tmp_path):
    env = {"GRAPHMIND_PAUSE_ON_ERROR": "off", "GRAPHMIND_DB": str(tmp_path / "from-env.db")}
    with HubProcess(tmp_path / "from-flag.db", args=["--pause-on-error", "tool"], env=env) as hub:
        assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "tool"
    assert (tmp_path / "from-flag.db").exists() and not (tmp_path / "from-env.db").exists()


def test_ctrl_c_releases_held_gates_with_continue_and_flushes_events(tmp_path):
    hub = HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_PAUSE_ON_ERROR": "off"})
    app = FakeApp(hub.ingest_url, auto_resume=True)
    try:
        assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "off"
        app.run_started("r1")
        for i in range(200):
            app.node_started("r1", "tool:a", f"i{i}")
        paused = app.hold("r1", "tool:a", "held")
        # A write held by safe mode is simulated, never run unasked (docs/effects.md).
        app.node_started("r1", "tool:send_mail", "w")
        effect = app.hold(
            "r1", "tool:send_mail", "w", reason="effect", actions=["continue", "inject", "simulate", "abort"]
        )
        wait_for(lambda: len(hub.api("GET", "/api/gates")[1]["gates"]) == 2, what="the gates")
        assert hub.stop() == 0
        resolve = app.expect("gate.resolve", where=lambda f: f["gateId"] == paused["gateId"])
        assert resolve == {"type": "gate.resolve", "gateId": paused["gateId"], "action": "continue"}
        resolve = app.expect("gate.resolve", where=lambda f: f["gateId"] == effect["gateId"])
        assert resolve == {"type": "gate.resolve", "gateId": effect["gateId"], "action": "simulate"}
        assert "Traceback" not in hub.stderr
        hub.restart()
        events = hub.api("GET", "/api/runs/r1/events?limit=5000")[1]["events"]
        assert len(events) >= 203  # the run, 200 starts, the hold, and the resume the app sent before close
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    finally:
        app.close()
        hub.stop()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], ["serve"]),
        (["--port", "0"], ["serve", "--port", "0"]),
        (["serve", "--db", "x"], ["serve", "--db", "x"]),
        (["--help"], ["--help"]),
    ],
)
def test_no_command_means_serve(argv, expected):
    from graphmind_server.cli import build_parser, with_default_command

    assert with_default_command(argv) == expected
    if argv != ["--help"]:
        assert build_parser().parse_args(with_default_command(argv)).func.__name__ == "run_command"


def test_hub_process_raises_with_the_hubs_stderr_when_it_cannot_start(tmp_path):
    from graphmind_server.testing import HubStartError

    with pytest.raises(HubStartError, match="--keep must be a whole number"):
        HubProcess(tmp_path / "hub.db", args=["--keep", "none"])


@pytest.mark.parametrize("end", ["stop", "kill", "restart", "exited"])
def test_hub_process_closes_the_pipes_of_a_process_it_ended(tmp_path, end):
    """Popen leaves its pipes to the caller: HubProcess closes both once the hub is gone (stopped,
    killed, restarted, or exited by itself and then stopped), so nothing is left for the garbage
    collector to warn about ("ResourceWarning: unclosed file", an error under -W error)."""
    hub = HubProcess(tmp_path / "hub.db")
    assert hub.proc is not None
    first = hub.proc
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            if end == "exited":
                first.send_signal(signal.SIGINT)
                first.wait(10)
                end = "stop"
            getattr(hub, end)()
            assert first.stdout is not None and first.stderr is not None
            assert first.stdout.closed and first.stderr.closed
            del first
            gc.collect()
        assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
        if end == "restart":
            assert hub.running and hub.api("GET", "/api/health")[0] == 200
    finally:
        hub.stop()


def test_a_hub_that_cannot_start_leaves_no_pipe_open(tmp_path):
    from graphmind_server.testing import HubStartError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(HubStartError):
            HubProcess(tmp_path / "hub.db", args=["--keep", "none"])
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_sigterm_is_a_clean_stop_too(tmp_path):
    hub = HubProcess(tmp_path / "hub.db")
    assert hub.proc is not None
    hub.proc.send_signal(signal.SIGTERM)
    assert hub.proc.wait(10) == 0
    assert hub.stop() == 0  # already gone: stop only reads its pipes to the end and closes them
    assert "Traceback" not in hub.stderr


def test_an_ipv6_loopback_host(tmp_path):
    import urllib.request

    with HubProcess(tmp_path / "hub.db", args=["--host", "::1"]) as hub:
        assert hub.stdout_lines[0] == f"GraphMind hub listening on http://[::1]:{hub.port}\n"
        with urllib.request.urlopen(f"http://[::1]:{hub.port}/api/health", timeout=5) as response:
            assert json.loads(response.read())["ok"] is True


class _Entry:
    """An entry point of the `graphmind.commands` group, as importlib.metadata gives it."""

    def __init__(self, name: str, module: object, dist: str = "graphmind-addon") -> None:
        self.name = name
        self.value = f"{dist}.cli"
        self.dist = type("Dist", (), {"name": dist})()
        self._module = module

    def load(self) -> object:
        if isinstance(self._module, Exception):
            raise self._module
        return self._module


def test_commands_of_other_packages_come_from_the_entry_point_group(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import types

    from graphmind_server import cli

    def add_parser(subparsers: Any) -> None:
        sub = subparsers.add_parser("hello", help="an add-on command")
        sub.set_defaults(func=lambda _args: 7)

    addon = types.SimpleNamespace(add_parser=add_parser)
    broken = _Entry("broken", ImportError("no module named graphmind_broken"), dist="graphmind-broken")
    shadow = _Entry("serve", addon)  # a built-in command keeps its name
    monkeypatch.setattr(cli, "_entry_points", lambda: [_Entry("hello", addon), broken, shadow])
    assert cli.main(["hello"]) == 7
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the `broken` command from graphmind-broken could not be loaded" in err
    assert cli.build_parser().parse_args(["serve"]).func is not None
