"""Whether the first run or gated call waits for the hub, and for how long.

A breakpoint set before a script starts must hold the script's first call, which needs the hub's
debug state, which arrives with the handshake. So the first run or gated call of a client waits
for the handshake once, bounded (`wait_for_attach`). By default it does so only where that costs
nothing: the URL is on loopback and something accepts the TCP connection. A refused port is known
at once (one connect() that fails, well under 1 ms: bench/attach.py), and the app carries on
detached. `wait_for_attach=False` or `GRAPHMIND_WAIT_FOR_ATTACH=0` turns the wait off; `True` or
seconds (option or variable) wait wherever the hub is, without the probe.

Never on a running event loop's thread (issue 39: an app's blocking-call checker, asyncio's debug
mode, and every other task of the loop would see it): async code probes and waits in a worker
thread (`in_worker_thread`); a synchronous hook called on a running loop (LangChain's and
LlamaIndex's sync callbacks inside async code) only starts the connect and carries on.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .._base import forksafe
from .._base.aio import running_loop
from .._wire.tcp import TcpConnector, host_and_port

T = TypeVar("T")

ENV = "GRAPHMIND_WAIT_FOR_ATTACH"
DEFAULT_WAIT = 2.0
PROBE_TIMEOUT_S = 0.05  # the probe's bound on loopback (see something_listens)
OFF_WORDS = ("0", "false", "off", "no")
ON_WORDS = ("1", "true", "on", "yes")


@dataclass(frozen=True)
class AttachWaitPolicy:
    """`seconds`: the bound (None: never wait); `probe`: wait only when the port accepts."""

    seconds: float | None
    probe: bool

    @classmethod
    def resolve(cls, option: Any, environ: Mapping[str, str], url: str) -> AttachWaitPolicy:
        """The option beats the variable, which beats the default (loopback only, probed)."""
        if option is False:
            return cls(None, False)
        if option is True:
            return cls(DEFAULT_WAIT, False)
        if option is not None:
            if isinstance(option, bool) or not isinstance(option, (int, float)) or option < 0:
                raise ValueError(
                    f"graphmind: option wait_for_attach must be True, False or seconds >= 0, got {option!r}"
                )
            return cls(float(option), False) if option > 0 else cls(None, False)
        raw = environ.get(ENV, "").strip().lower()
        if raw in OFF_WORDS:
            return cls(None, False)
        if raw in ON_WORDS:
            return cls(DEFAULT_WAIT, False)
        if raw:
            try:
                seconds = float(raw)
            except ValueError:
                seconds = -1.0
            if seconds >= 0:
                return cls(seconds or None, False)
            # A value we cannot read keeps the default rule; Client warns about it.
        return cls(DEFAULT_WAIT, True) if is_loopback_url(url) else cls(None, False)


def env_problem(environ: Mapping[str, str]) -> str | None:
    raw = environ.get(ENV, "").strip()
    if not raw or raw.lower() in OFF_WORDS + ON_WORDS:
        return None
    try:
        if float(raw) >= 0:
            return None
    except ValueError:
        pass
    return (
        f"[graphmind] {ENV}={raw!r} is not 0/off, 1/on or a number of seconds; using the default "
        "(wait for the hub only when it is on this machine and listening)"
    )


def is_loopback_url(url: str) -> bool:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def something_listens(url: str, timeout: float) -> bool:
    """One TCP connect to the URL's host and port: refused (nothing listening) fails at once.

    Bounded by `min(timeout, PROBE_TIMEOUT_S)`: on loopback the kernel completes or refuses a
    connect inside the call, so one still pending after that has had its SYN dropped (a listener
    whose accept queue is full, i.e. a stuck hub) and the app should not wait for it."""
    try:
        host, port = host_and_port(url)
        sock = TcpConnector().connect(host, port, min(timeout, PROBE_TIMEOUT_S))
    except Exception:  # refused, a bad URL, or a socket layer that forbids it (a test's network
        return False  # guard raises RuntimeError): nothing to wait for, and never the app's error
    sock.close()
    return True


class AttachWait:
    """The once-per-client wait. `take()` returns the seconds to wait (or None) to one caller only."""

    def __init__(self, policy: AttachWaitPolicy, url: str, connect_timeout: float) -> None:
        self.policy = policy
        self._url = url
        self._connect_timeout = connect_timeout
        self.pending = policy.seconds is not None
        self._lock = forksafe.lock()

    def after_fork(self) -> None:
        """In a forked child: a new client to the hub, so its first gated call waits once again."""
        self._lock = forksafe.lock()
        self.pending = self.policy.seconds is not None

    def take(self) -> float | None:
        seconds = self.claim()
        return seconds if seconds is not None and self.listening() else None

    def claim(self) -> float | None:
        """The wait's seconds to one caller only (None to every other, or when there is no wait),
        with no I/O: the caller then asks `listening()` where it may block."""
        if not self.pending:
            return None
        with self._lock:
            if not self.pending:
                return None
            self.pending = False
        return self.policy.seconds

    def listening(self) -> bool:
        """False when the policy probes and nothing accepts a connection (one connect: it blocks)."""
        return not self.policy.probe or something_listens(self._url, self._connect_timeout)


def loop_running_here() -> bool:
    """Whether the calling thread runs an event loop (asyncio or trio) right now."""
    if running_loop() is not None:  # asyncio's C-level check, without importing asyncio
        return True
    trio = sys.modules.get("trio")
    if trio is None:
        return False
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:  # trio imported, not running in this thread
        return False
    return True


async def in_worker_thread(fn: Callable[[], T]) -> T:
    """`fn()` in a worker thread while the event loop (asyncio or trio) keeps running."""
    loop = running_loop()
    if loop is not None:
        result: T = await loop.run_in_executor(None, fn)
        return result
    trio = sys.modules.get("trio")
    if trio is not None:
        return await trio.to_thread.run_sync(fn)  # type: ignore[no-any-return]
    return fn()
