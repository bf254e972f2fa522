"""`graphmind demo --headless`: the README's first command, end to end in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest


def run_demo(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["GRAPHMIND_HOME"] = str(tmp_path)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "demo",
            "--headless",
            "--port",
            "0",
            "--db",
            str(tmp_path / "demo.db"),
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )


@pytest.mark.parametrize(
    ("flags", "held"),
    [
        ((), "tool:book before gate (breakpoint)"),
        (("--error",), "tool:check_budget error gate (error)"),
        (("--loop",), "tool:search_flights before gate (loop, 3× identical arguments)"),
    ],
)
def test_headless_demo_holds_and_answers_a_gate_and_exits_0(
    tmp_path: Path, flags: tuple[str, ...], held: str
) -> None:
    result = run_demo(tmp_path, *flags)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Run travel-assistant (finished)" in out
    assert f"{held}: held" in out and "answered continue" in out
    assert "llm:step" in out
    assert "Booked TP-544" in out


def test_live_without_a_key_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "demo",
            "--live",
            "--port",
            "0",
            "--db",
            str(tmp_path / "d.db"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "graphmind: demo --live needs OPENAI_API_KEY in the environment; set it, or run without --live to use the scripted model"
    ]


def test_a_wrong_flag_is_one_line_pointing_at_the_demos_help(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "demo", "--bogus"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "graphmind: unrecognized arguments: --bogus (see graphmind demo --help)"
    ]


def test_two_scenarios_at_once_is_one_line_pointing_at_the_demos_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "demo", "--error", "--loop"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "graphmind: argument --loop: not allowed with argument --error (see graphmind demo --help)"
    ]


@pytest.mark.parametrize("mode", [("--headless",), ("--no-browser",)])
def test_without_the_demo_extra_every_mode_is_the_same_one_line(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    # Shadow the extra's packages with ones that fail to import, as on an install without [demo]
    # (PYTHONPATH comes before site-packages and the workspace's .pth entries).
    for name in ("openai", "graphmind_openai"):
        (tmp_path / "shadow" / name).mkdir(parents=True)
        (tmp_path / "shadow" / name / "__init__.py").write_text(
            f"raise ImportError('No module named {name}')\n"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["PYTHONPATH"] = str(tmp_path / "shadow")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "demo",
            *mode,
            "--port",
            "0",
            "--db",
            str(tmp_path / "d.db"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "graphmind: graphmind demo needs the OpenAI adapter: pip install 'graphmind-server[demo]'"
    ]


PERSONS_DEBUG = {
    "breakpoints": [{"nodeId": "tool:lookup", "gate": "after"}],
    "mode": "run",
    "pauseOnError": "tool",
}


def _demo_against(hub: Any, *flags: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    return subprocess.Popen(
        [sys.executable, "-m", "graphmind_server", "demo", "--port", str(hub.port), "--no-browser", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "flags", [("--headless",), (), ("--error",)], ids=["headless", "interactive", "interactive-error"]
)
def test_the_demo_leaves_the_persons_debug_state_as_it_was(tmp_path: Path, flags: tuple[str, ...]) -> None:
    from graphmind_server.testing import HubProcess

    with HubProcess(tmp_path / "hub.db") as hub:
        assert hub.api("PUT", "/api/debug", PERSONS_DEBUG)[0] == 200
        before = hub.api("GET", "/api/debug")[1]
        demo = _demo_against(hub, *flags)
        try:
            if "--headless" not in flags:  # the person answers the demo's gate in the viewer
                deadline = time.monotonic() + 60
                while not (gates := hub.api("GET", "/api/gates")[1]["gates"]):
                    assert demo.poll() is None and time.monotonic() < deadline, demo.communicate()
                    time.sleep(0.05)
                held = gates[0]
                expected = ("tool:check_budget", "error") if flags else ("tool:book", "before")
                assert (held["nodeId"], held["gate"]) == expected
                assert (
                    hub.api("GET", "/api/debug")[1] == before
                )  # held from the demo's code, not the hub's state
                assert hub.api("POST", f"/api/gates/{held['gateId']}", {"action": "continue"})[0] == 200
            out, err = demo.communicate(timeout=60)
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.communicate()
        assert demo.returncode == 0, err
        assert "Run travel-assistant (finished)" in out
        assert hub.api("GET", "/api/debug")[1] == before


def test_the_demos_own_hub_saves_no_breakpoint_for_the_next_graphmind(tmp_path: Path) -> None:
    from graphmind_server.testing import HubProcess

    assert run_demo(tmp_path).returncode == 0
    with HubProcess(tmp_path / "demo.db") as hub:
        debug = hub.api("GET", "/api/debug")[1]
    assert debug["breakpoints"] == [] and debug["pauseOnError"] == "on" and debug["mode"] == "run"


def test_abort_from_the_viewer_ends_the_demo_with_a_summary_and_exit_0(tmp_path: Path) -> None:
    import json
    import re
    import urllib.request

    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["GRAPHMIND_HOME"] = str(tmp_path)
    cmd = [sys.executable, "-m", "graphmind_server", "demo", "--headless", "--hold", "120"]
    cmd += ["--port", "0", "--db", str(tmp_path / "demo.db")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        base = None
        for line in proc.stdout:
            found = re.search(r"hub started on (http://\S+)", line)
            if found:
                base = found.group(1)
                break
        assert base is not None

        def api(method: str, path: str, body: Any = None) -> Any:
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(base + path, data=data, method=method)
            req.add_header("Content-Type", "application/json")
            with urllib.request.urlopen(req, timeout=5) as response:
                return json.loads(response.read())

        deadline = time.monotonic() + 60
        gates: list[Any] = []
        while not gates and time.monotonic() < deadline:
            gates = api("GET", "/api/gates")["gates"]
            time.sleep(0.05)
        assert gates, "the demo never held"
        api("POST", f"/api/gates/{gates[0]['gateId']}", {"action": "abort"})
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    assert "Run travel-assistant (aborted)" in out, out
    assert "aborted from the viewer" in out
