"""`graphmind demo --headless`: the README's first command, end to end in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
