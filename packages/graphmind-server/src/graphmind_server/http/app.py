"""The ASGI app: routes, the Origin/Host guard, and the lifespan that runs the store and the hub."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route, WebSocketRoute

from ..access import proof, viewer_codes
from ..access.guard import Guard
from ..base.jsontext import JSON
from ..context import api as api_context
from ..effects import api as api_effects
from ..export.forwarder import OtlpForwarder
from ..export.otlp_http import OtlpTarget
from ..hub.config import Settings
from ..hub.debugstate import DebugState
from ..hub.state import Hub
from ..ingest.route import ingest
from ..otlp.route import OtlpIngest, max_seq
from ..store import Store, reads
from ..store.items import Committed
from . import api, cockpit, playground, proposals, replays, threads, trends
from .live import live
from .static import Viewer

_log = logging.getLogger("graphmind.hub")


def initial_debug_state(store: Store, settings: Settings) -> DebugState:
    """Breakpoints, mode and safe mode survive a restart; pauseOnError comes from the
    flag/variable/default."""
    saved = store.read_now(reads.setting, "debug")
    state = DebugState.loads(saved) if saved else DebugState()
    state.pause_on_error = settings.pause_on_error
    return state


async def _internal_error(request: Request, exc: Exception) -> Response:
    """A bug must still answer JSON (and a one-line log), never a plain-text 500."""
    _log.error("graphmind: %s %s failed: %r", request.method, request.url.path, exc)
    return JSON(
        {"error": f"internal error ({type(exc).__name__}); the hub log has the details"}, status_code=500
    )


async def _store_error(request: Request, exc: Exception) -> Response:
    """The database failed a read (damaged, gone): a JSON 503 and one log line, never a traceback.
    A handler for this class (not for Exception) is what keeps Starlette from re-raising it to
    uvicorn, which would log the traceback."""
    _log.error("graphmind: %s %s: the database failed (%s)", request.method, request.url.path, exc)
    return JSON({"error": f"the hub cannot read its database ({exc}); see the hub log"}, status_code=503)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (a path no route matches, e.g. one with a newline) as JSON too."""
    assert isinstance(exc, HTTPException)
    message = (
        f"no such route: {request.method} {request.url.path!r} (see docs/api.md)"
        if exc.status_code == 404
        else exc.detail
    )
    return JSON({"error": message}, status_code=exc.status_code, headers=exc.headers)


def otlp_forwarder(settings: Settings, store: Store) -> OtlpForwarder | None:
    if settings.otlp_endpoint is None:
        return None
    target = OtlpTarget(settings.otlp_endpoint, settings.otlp_protocol, settings.otlp_headers)
    return OtlpForwarder(store.path, target)


def build_app(settings: Settings, store: Store, trust: Callable[[Any], None] | None = None) -> Starlette:
    """An app around an opened store; the store is started and closed by the app's lifespan.

    `trust(client)`: told when a connection proved itself (limits.Limiter.trust)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub: Hub = app.state.hub
        left_running = store.read_now(reads.running_clients)  # before the writer owns the connection
        forwarder = app.state.otlp
        if forwarder is None:
            store.start(asyncio.get_running_loop(), hub.on_commit, hub.on_storing, hub.control.writer_wait)
        else:
            forwarder.start()

            def on_commit(c: Committed) -> None:
                hub.on_commit(c)
                forwarder.on_commit(c)

            store.start(asyncio.get_running_loop(), on_commit, hub.on_storing, hub.control.writer_wait)
        hub.start(left_running)
        try:
            yield
        finally:
            hub.stop()
            if forwarder is not None:
                forwarder.stop()
            app.state.otlp_ingest.close()
            await asyncio.get_running_loop().run_in_executor(None, store.close)

    sessions = proof.Sessions(settings.token)
    app = Starlette(
        routes=[
            *viewer_codes.routes,
            *proof.routes,
            *cockpit.routes,  # before api.routes: those end with the catch-all 404
            *replays.routes,
            *threads.routes,
            *trends.routes,
            *playground.routes,
            *api_effects.routes,
            *proposals.routes,  # before api.routes (its catch-all 404)
            *api_context.routes,
            *api.routes,
            Route("/v1/traces", api.otlp_traces, methods=["POST"]),
            WebSocketRoute("/ingest", ingest),
            WebSocketRoute("/api/live", live),
            Mount("/", app=Viewer(settings.viewer_dist)),
        ],
        middleware=[
            Middleware(
                Guard,
                allowed_origins=settings.allowed_origins,
                bound_host=settings.host,
                token=settings.token,
                trust=trust,
                sessions=sessions,
            )
        ],
        lifespan=lifespan,
        exception_handlers={
            Exception: _internal_error,
            HTTPException: _http_error,
            sqlite3.Error: _store_error,
        },
    )
    app.state.trust = trust
    app.state.proof_sessions = sessions
    app.state.viewer_codes = viewer_codes.ViewerCodes(settings.token)
    app.state.hub = Hub(store, settings, initial_debug_state(store, settings))
    app.state.otlp = otlp_forwarder(settings, store)
    # Read before the writer owns the connection: OTLP events continue the `otlp` client's seq.
    app.state.otlp_ingest = OtlpIngest(store, settings.allowed_origins, store.read_now(max_seq))
    return app
