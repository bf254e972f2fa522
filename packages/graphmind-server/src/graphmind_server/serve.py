"""`graphmind serve`: bind, open the store, run the app on uvicorn; also in-process for the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import uvicorn

from graphmind import protocol as graphmind_protocol

from .access import tokenfile
from .access.limits import ACCEPT_BATCH, LISTEN_QUEUE, Limiter, http_protocol_class, install_accept_handler
from .access.viewer_codes import ViewerCodes
from .context import limits as context_limits
from .http.app import build_app
from .http.wsprotocol import protocol_class
from .hub.config import DEFAULT_PORT, ConfigError, Settings, is_loopback, settings_from
from .hub.state import Hub
from .store import Store, StoreError, prices, retention
from .store.prune_later import prune_in_background

LISTENING = "GraphMind hub listening on http://{host}:{port}"
# Apps look for the hub on the default port; on any other the first app recorded nothing until its
# user found the variable (issue 29), so the hub says it.
APPS_ATTACH_WITH = "Apps attach with: GRAPHMIND_URL=ws://{host}:{port}/ingest"
# Never the token nor a code: stdout may be a world-readable log, and a link clicked in a terminal
# lands on the browser's command line (/proc/<pid>/cmdline). The link names a page only this user
# can read, which holds the one-time code (access/viewer_codes.py).
VIEWER_WITH_TOKEN = "Open the viewer (a page only you can read; graphmind viewer-url prints it again): {url}"

GRACEFUL_SHUTDOWN_S = 3


class ServeError(Exception):
    """The hub cannot start; str() is the one line to print."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="start the hub (the default command)",
        description="Start the GraphMind hub: apps attach at /ingest, the viewer is at /.",
    )
    p.add_argument("--port", help="port to listen on (default 4747; 0 picks a free one)")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--db", help="SQLite database file (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.add_argument("--keep", help="runs to keep at start-up (default $GRAPHMIND_KEEP_RUNS or 200)")
    p.add_argument("--days", help="days of runs to keep at start-up (default $GRAPHMIND_KEEP_DAYS or 30)")
    p.add_argument(
        "--token",
        metavar="auto",
        help="require a token on every request: auto makes a random one (a value is never taken from "
        "the command line: use $GRAPHMIND_TOKEN or --token-file; required with a non-loopback --host)",
    )
    p.add_argument(
        "--token-file",
        dest="token_file",
        metavar="PATH",
        help="require the token kept in this file (default $GRAPHMIND_TOKEN, then $GRAPHMIND_TOKEN_FILE)",
    )
    p.add_argument(
        "--pause-on-error",
        dest="pause_on_error",
        help="on, off, or a node kind (default $GRAPHMIND_PAUSE_ON_ERROR or on)",
    )
    p.add_argument(
        "--otlp-endpoint",
        dest="otlp_endpoint",
        metavar="URL",
        help="forward each finished run to this OTLP/HTTP collector (e.g. http://127.0.0.1:4318)",
    )
    p.add_argument("--otlp-protocol", dest="otlp_protocol", help="http/protobuf (default) or http/json")
    p.add_argument(
        "--otlp-header",
        dest="otlp_header",
        action="append",
        metavar="K=V",
        help="an HTTP header for the collector (repeatable)",
    )
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    settings = settings_from(vars(args))
    run(settings)
    return 0


def display_host(host: str) -> str:
    if host in ("0.0.0.0", "", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the proto
    # says TCP, and without it every HTTP answer (headers, then body) waits ~40 ms on delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # SO_REUSEADDR lets a restarted hub take its port back while old connections sit in TIME_WAIT;
    # a port another process listens on still fails with EADDRINUSE.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(
                f"port {port} on {host} is already in use (another hub?); choose another with --port"
            ) from None
        if isinstance(exc, socket.gaierror) or exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            raise ServeError(
                f"cannot listen on {host}: not an address of this machine ({exc.strerror}); check --host"
            ) from None
        raise ServeError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); check --host and --port"
        ) from None
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        hub: Hub,
        on_ready: Callable[[], None],
        limiter: Limiter,
        hub_app_codes: ViewerCodes,
    ) -> None:
        super().__init__(config)
        self.hub = hub
        self.limiter = limiter
        self.viewer_codes: ViewerCodes = hub_app_codes
        self.on_ready = on_ready
        self.token_file: tuple[Path, str] | None = None
        self.prune_later: retention.Plan | None = None  # a start-up prune too big to do before listening
        self._pruning: asyncio.Task[None] | None = None

    def remove_token_file(self) -> None:
        self.viewer_codes.remove_file()
        if self.token_file is not None:
            tokenfile.remove(*self.token_file)
            self.token_file = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        install_accept_handler(asyncio.get_running_loop(), self.limiter)
        await super().startup(sockets)
        # asyncio accepts up to `backlog` connections per wake-up and listen()s with the same number;
        # uvicorn got ACCEPT_BATCH, so give the kernel its long queue back (access/limits.py).
        for sock in sockets or []:
            with contextlib.suppress(OSError):
                sock.listen(LISTEN_QUEUE)
        if self.started:
            self.on_ready()
            if self.prune_later is not None:
                self._pruning = asyncio.get_running_loop().create_task(
                    prune_in_background(self.hub.store, self.prune_later)
                )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._pruning is not None:
            self._pruning.cancel()  # what is left goes at the next start
        # Answer held gates while the apps are still connected; uvicorn closes them next.
        await self.hub.release_all()
        await super().shutdown(sockets)
        refusals = getattr(self.config.ws, "refusals", None)  # http/wsprotocol.py: refused upgrades
        if refusals is not None:
            refusals.flush()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises a captured signal after shutting down, which turns a clean Ctrl-C
        # into a KeyboardInterrupt traceback or a kill by SIGTERM. The hub just exits 0.
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handle(sig: int, frame: Any) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

        previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _prepare(settings: Settings, on_ready: Callable[[int], None]) -> tuple[_Server, socket.socket]:
    try:  # GRAPHMIND_PRICES: a file that cannot be used stops the hub now, not at the first read
        prices.check_env()
        context_limits.check_env()  # GRAPHMIND_CONTEXT_SIZES, the same way
    except (prices.PriceTableError, context_limits.ContextSizesError) as exc:
        raise ServeError(str(exc)) from None
    sock = bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    try:
        store = Store(settings.db, port=port)
    except StoreError:
        sock.close()
        raise
    try:
        later: retention.Plan | None = None
        if settings.retention:
            keep, days, now = settings.keep_runs, settings.keep_days, time.time() * 1000
            doomed = store.prune_plan(keep_runs=keep, keep_days=days, now_ms=now)
            if doomed.events > retention.PRUNE_BEFORE_LISTEN_EVENTS:
                later = doomed  # a big prune goes on once the hub listens (store/retention.py)
            elif (line := store.prune(keep_runs=keep, keep_days=days, now_ms=now).summary()) is not None:
                print(line, file=sys.stderr, flush=True)
        limiter = Limiter()
        app = build_app(replace(settings, port=port), store, trust=limiter.trust)
    except BaseException:
        store.close()
        sock.close()
        raise
    server_token: tuple[Path, str] | None = None
    if not settings.token:
        tokenfile.remove_stale(port)
    else:
        try:
            server_token = (tokenfile.write(port, settings.token), settings.token)
            app.state.viewer_codes.write_file(f"http://{display_host(settings.host)}:{port}", port)
        except OSError as exc:
            if server_token is not None:
                tokenfile.remove(*server_token)
            store.close()
            sock.close()
            raise ServeError(
                f"cannot write the token file {graphmind_protocol.token_file(port)} ({exc.strerror or exc}); "
                "set GRAPHMIND_HOME to a writable directory"
            ) from None
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=http_protocol_class(limiter),
        ws=protocol_class(limiter),
        backlog=ACCEPT_BATCH,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        # Refused at the frame's header (websockets checks the length before reading the payload),
        # closed 1009: never buffered (docs/protocol.md, "Frame sizes").
        ws_max_size=graphmind_protocol.INGEST_MAX_FRAME,
        # No permessage-deflate: a compressed frame's header gives its compressed length, so the
        # bound above could only be checked by inflating it (16 MiB each time, kept: four 60 MB
        # frames from a client with compression on left the hub at 119 MB from 40). The SDK never
        # compresses (loopback), and a browser's live feed works the same without it.
        ws_per_message_deflate=False,
    )
    server = _Server(config, app.state.hub, lambda: on_ready(port), limiter, app.state.viewer_codes)
    server.token_file = server_token
    server.prune_later = later
    return server, sock


SWITCH_INTERVAL_S = 0.001


def run(settings: Settings) -> None:
    """Serve until SIGINT/SIGTERM, printing the listening line once ready. Raises the one-line errors."""

    def ready(port: int) -> None:
        host = display_host(settings.host)
        print(LISTENING.format(host=host, port=port), flush=True)
        if port != DEFAULT_PORT:
            print(APPS_ATTACH_WITH.format(host=host, port=port), flush=True)
        viewer = server.viewer_codes.file
        if settings.token and viewer is not None:
            print(VIEWER_WITH_TOKEN.format(url=viewer.as_uri()), flush=True)

    if not is_loopback(settings.host):
        print(
            f"graphmind: warning: listening on {settings.host}, beyond this machine; every request needs the "
            "token (docs/security.md)",
            file=sys.stderr,
            flush=True,
        )
    server, sock = _prepare(settings, ready)
    # The event loop (every app's ingest, the API, a gate's answer) and the store writer share the
    # GIL; a writer in the Python part of a big transaction keeps it for the whole switch interval
    # (5 ms by default) each time the loop asks. 1 ms bounds what a held gate waits for it.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        server.remove_token_file()


class HubHandle:
    """A hub running on a background thread of this process (see start_in_thread)."""

    def __init__(self, server: _Server, thread: threading.Thread, host: str, port: int) -> None:
        self._server = server
        self._thread = thread
        self.host = host
        self.port = port
        self.url = f"http://{display_host(host)}:{port}"
        self.ingest_url = f"ws://{display_host(host)}:{port}/ingest"

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """Shut down like Ctrl-C (gates released, events flushed) and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> HubHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(
    *,
    port: int = 0,
    db: str | None = None,
    host: str = "127.0.0.1",
    settings: Settings | None = None,
    timeout: float = 15.0,
) -> HubHandle:
    """Start a hub on a daemon thread and return once it listens.

    Settings not given come from the GRAPHMIND_* variables and the defaults, like the CLI.
    Raises ConfigError, StoreError or ServeError (one-line messages) when it cannot start.
    """
    if settings is None:
        settings = settings_from({"port": str(port), "host": host, "db": db})
    ready = threading.Event()
    bound: list[int] = []

    def on_ready(p: int) -> None:
        bound.append(p)
        ready.set()

    server, sock = _prepare(settings, on_ready)
    failure: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # SystemExit from a failed uvicorn start-up included
            failure.append(exc)
        finally:
            sock.close()
            server.remove_token_file()
            ready.set()

    thread = threading.Thread(target=target, name="graphmind-hub", daemon=True)
    thread.start()
    if not ready.wait(timeout) or not bound:
        server.should_exit = True
        thread.join(5)
        raise ServeError(
            f"the hub did not start within {timeout} s" + (f" ({failure[0]!r})" if failure else "")
        )
    return HubHandle(server, thread, settings.host, bound[0])


__all__ = ["ConfigError", "HubHandle", "ServeError", "StoreError", "add_parser", "run", "start_in_thread"]
