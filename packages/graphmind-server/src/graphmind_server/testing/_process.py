"""HubProcess: the real hub as a subprocess on an ephemeral loopback port."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

LISTENING = re.compile(r"^GraphMind hub listening on http://(?P<host>[^\s]+):(?P<port>\d+)\s*$")


class HubStartError(RuntimeError):
    """The hub process did not print its listening line; the message includes its stderr."""


class HubProcess:
    """`python -m graphmind_server serve --port 0 --db <db> *args`, started on construction.

    >>> with HubProcess(tmp_path / "hub.db") as hub:
    ...     status, body = hub.api("GET", "/api/health")
    """

    def __init__(
        self,
        db: str | os.PathLike[str],
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        port: int = 0,
        start_timeout: float = 15.0,
        python: str = sys.executable,
        stderr_path: str | os.PathLike[str] | None = None,
    ) -> None:
        """`stderr_path`: the hub's stderr goes to this file (appended), as with `2>> FILE`, instead
        of a pipe this object reads; `stderr` reads the file."""
        self.db = Path(db)
        self.stderr_path = None if stderr_path is None else Path(stderr_path)
        self.args = list(args)
        self.env = dict(env or {})
        self.start_timeout = start_timeout
        self.python = python
        self.port = port
        self.proc: subprocess.Popen[str] | None = None
        self._stderr: list[str] = []
        self.stdout_lines: list[str] = []
        self._pumps: list[threading.Thread] = []
        self.start()

    # -- life -----------------------------------------------------------------------------------

    def start(self, port: int | None = None) -> None:
        port = self.port if port is None else port
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        cmd = [
            self.python,
            "-m",
            "graphmind_server",
            "serve",
            "--port",
            str(port),
            "--db",
            str(self.db),
            *self.args,
        ]
        self._stderr = []
        self.stdout_lines = []
        if self.stderr_path is not None:
            with open(self.stderr_path, "ab") as log:  # the child keeps its own descriptor
                self.proc = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True, env=env
                )
        else:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        lines: queue.Queue[str | None] = queue.Queue()
        self._pumps = [
            threading.Thread(
                target=self._pump, args=(self.proc.stdout, lines, self.stdout_lines), daemon=True
            ),
        ]
        if self.proc.stderr is not None:
            self._pumps.append(
                threading.Thread(target=self._pump, args=(self.proc.stderr, None, self._stderr), daemon=True)
            )
        for pump in self._pumps:
            pump.start()
        try:
            line = lines.get(timeout=self.start_timeout)
        except queue.Empty:
            line = None
        match = LISTENING.match(line or "")
        if match is None:
            self.kill()
            raise HubStartError(f"the hub did not start (first stdout line {line!r}); stderr:\n{self.stderr}")
        self.port = int(match.group("port"))

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue[str | None] | None, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)
            if lines is not None:
                lines.put(line)
        if lines is not None:
            lines.put(None)

    @property
    def stderr(self) -> str:
        if self.stderr_path is not None:
            try:
                return self.stderr_path.read_text(errors="replace")
            except OSError:
                return ""
        return "".join(self._stderr)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no flush, no goodbye (what a crash looks like)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(10)
            self._reap()

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGINT (a clean Ctrl-C), wait, then SIGKILL if it is still there; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._reap()
        return self.proc.returncode

    def _reap(self) -> None:
        """Once the process is gone: let the pumps read its stdout and stderr to the end, then close
        this side of both pipes (Popen leaves that to its caller; an open one is a ResourceWarning
        "unclosed file" when it is collected, an error under `-W error`). A pipe whose pump is still
        reading after 5 s (a grandchild holding it open) stays open: closing a buffered file that
        another thread is reading waits for that read."""
        assert self.proc is not None
        streams = [self.proc.stdout] + ([self.proc.stderr] if self.proc.stderr is not None else [])
        for pump, stream in zip(self._pumps, streams, strict=True):
            pump.join(5)
            if stream is not None and not pump.is_alive():
                stream.close()

    def restart(self) -> None:
        """Stop (if running) and start again on the same db, on the same port when it is free."""
        self.stop()
        try:
            self.start(self.port)
        except HubStartError:
            self.start(0)

    def __enter__(self) -> HubProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- talking to it -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ingest_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ingest"

    @property
    def live_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/api/live"

    def api(
        self,
        method: str,
        path: str,
        json: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> tuple[int, Any]:
        """(status, parsed JSON body or text) of one request; never raises for 4xx/5xx."""
        return api_call(self.url, method, path, json, headers=headers, timeout=timeout)

    def held_gates(self, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        """`GET /api/gates` once at least `count` gates are held (AssertionError at the deadline)."""

        def enough() -> list[dict[str, Any]] | None:
            gates = self.api("GET", "/api/gates")[1]["gates"]
            return gates if len(gates) >= count else None

        return list(wait_for(enough, timeout, f"{count} held gate(s)"))


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Runs `fn` on a daemon thread (a call that will hold at a gate); `out` gets "value" or "error"."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def api_call(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    text = raw.decode("utf-8", "replace")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def wait_for(check: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy (returned) or raise AssertionError at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)
