"""Telemetry (environment page): who decides, what the record holds, how it leaves (or does not).

This project runs no endpoint of its own: unless GRAPHMIND_TELEMETRY_URL names one, nothing leaves
the machine, whatever the other variables say. The order, first match wins:

1. DO_NOT_TRACK=1 or true (any case, spaces ignored): off. It beats every GRAPHMIND_TELEMETRY value.
2. GRAPHMIND_TELEMETRY=0 or false: off.
3. GRAPHMIND_TELEMETRY=log: print the exact record to stderr, send nothing (even when CI is set).
4. CI set (to anything): off.
5. Otherwise on: the record is posted to GRAPHMIND_TELEMETRY_URL in the background; with no URL,
   nothing is sent.

The record never holds app data: an install id (random, kept in $GRAPHMIND_HOME/telemetry-id),
the graphmind version, the command's name, the Python version and the OS. Sending runs on a daemon
thread with a short timeout, so it never delays or fails a command; any failure is dropped silently.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..base.files import write_private

PREFIX = "[graphmind telemetry] "
SEND_TIMEOUT_S = 2.0
ID_FILE = "telemetry-id"
VARIABLES = ("GRAPHMIND_TELEMETRY", "DO_NOT_TRACK", "CI", "GRAPHMIND_TELEMETRY_URL", "GRAPHMIND_HOME")


@dataclass(frozen=True)
class Decision:
    """What telemetry does for this process, and the one-line reason."""

    mode: str  # "off", "log" or "on"
    reason: str
    url: str | None = None

    @property
    def sends(self) -> bool:
        return self.mode == "on" and self.url is not None


def decide(environ: Mapping[str, str] | None = None) -> Decision:
    env = os.environ if environ is None else environ
    dnt = env.get("DO_NOT_TRACK")
    if dnt is not None and dnt.strip().lower() in ("1", "true"):
        return Decision("off", f"DO_NOT_TRACK={dnt.strip()} (it beats every GRAPHMIND_TELEMETRY value)")
    raw = env.get("GRAPHMIND_TELEMETRY")
    value = raw.strip().lower() if raw is not None else None
    if value in ("0", "false"):
        return Decision("off", f"GRAPHMIND_TELEMETRY={raw}")
    if value == "log":
        return Decision("log", "GRAPHMIND_TELEMETRY=log: the record is printed to stderr and nothing is sent")
    if "CI" in env:
        return Decision("off", "CI is set (GRAPHMIND_TELEMETRY=log would still print the record)")
    url = (env.get("GRAPHMIND_TELEMETRY_URL") or "").strip() or None
    why = f"GRAPHMIND_TELEMETRY={raw}" if raw is not None else "the default"
    if url is None:
        return Decision("on", f"{why}; no GRAPHMIND_TELEMETRY_URL, so nothing leaves this machine")
    return Decision("on", f"{why}; the record is posted to GRAPHMIND_TELEMETRY_URL", url)


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    raw = (env.get("GRAPHMIND_HOME") or "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".graphmind"


def install_id(environ: Mapping[str, str] | None = None) -> str:
    """The random id kept in $GRAPHMIND_HOME/telemetry-id; created on first use. Never raises."""
    path = home_dir(environ) / ID_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    except OSError:
        pass
    new_id = uuid.uuid4().hex
    try:
        write_private(path, new_id + "\n")  # 0600 in a 0700 directory (base/files.py)
    except OSError:
        pass  # a read-only home: the id lives for this process only
    return new_id


def build_record(command: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "installId": install_id(environ),
        "version": __version__,
        "command": command,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}".strip(),
    }


def _post(url: str, body: bytes) -> None:
    try:
        request = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_S) as response:  # the user's URL
            response.read(1024)
    except Exception:  # telemetry never fails a command
        pass


def report(command: str, environ: Mapping[str, str] | None = None) -> threading.Thread | None:
    """Called once per command. Returns the sending thread (tests join it), else None. Never raises."""
    try:
        decision = decide(environ)
        if decision.mode == "off" or (decision.mode == "on" and not decision.sends):
            return None
        record = build_record(command, environ)
        text = json.dumps(record, separators=(",", ":"))
        if decision.mode == "log":
            print(PREFIX + text, file=sys.stderr, flush=True)
            return None
        assert decision.url is not None
        thread = threading.Thread(
            target=_post, args=(decision.url, text.encode()), name="graphmind-telemetry", daemon=True
        )
        thread.start()
        return thread
    except Exception:
        return None


def headline(decision: Decision) -> str:
    """The state in words of what happens: "on" only when a record is really sent somewhere."""
    if decision.sends:
        return "on, sending"
    if decision.mode == "on":
        return "nothing is sent"  # on by the rules, but no endpoint: this project runs none
    return "log only, nothing is sent" if decision.mode == "log" else "off"


def describe(environ: Mapping[str, str] | None = None) -> str:
    """What `graphmind telemetry` prints: the state, why, and the variables in play."""
    env = os.environ if environ is None else environ
    decision = decide(env)
    lines = [f"telemetry: {headline(decision)} ({decision.reason})"]
    if decision.sends:
        lines.append(f"endpoint: {decision.url}")
    lines.append(f"install id file: {home_dir(env) / ID_FILE}")
    lines.append("record fields: installId, version, command, python, os (never app data)")
    for name in VARIABLES:
        lines.append(f"  {name}={env[name]!r}" if name in env else f"  {name} not set")
    return "\n".join(lines)


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "telemetry",
        help="print whether telemetry is on and why",
        description="Print the telemetry state and the variables that decide it (docs/telemetry.md). "
        "Nothing is sent without GRAPHMIND_TELEMETRY_URL.",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    print(describe())
    return 0
