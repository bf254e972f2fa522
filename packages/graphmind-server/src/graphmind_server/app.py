"""The ASGI app: routes, the Origin/Host guard, and the lifespan that runs the store and the hub."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, WebSocketRoute

from . import api
from .config import Settings
from .debugstate import DebugState
from .export.forwarder import OtlpForwarder
from .export.otlp_http import OtlpTarget
from .hub import Hub
from .ingest import ingest
from .live import live
from .security import Guard
from .static import Viewer
from .store import Store, reads
from .store.writer import Committed


def initial_debug_state(store: Store, settings: Settings) -> DebugState:
    """Breakpoints and mode survive a restart; pauseOnError comes from the flag/variable/default."""
    saved = store.read_now(reads.setting, "debug")
    state = DebugState.loads(saved) if saved else DebugState()
    state.pause_on_error = settings.pause_on_error
    return state


def otlp_forwarder(settings: Settings, store: Store) -> OtlpForwarder | None:
    if settings.otlp_endpoint is None:
        return None
    target = OtlpTarget(settings.otlp_endpoint, settings.otlp_protocol, settings.otlp_headers)
    return OtlpForwarder(store.path, target)


def build_app(settings: Settings, store: Store) -> Starlette:
    """An app around an opened store; the store is started and closed by the app's lifespan."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub: Hub = app.state.hub
        left_running = store.read_now(reads.running_clients)  # before the writer owns the connection
        forwarder = app.state.otlp
        if forwarder is None:
            store.start(asyncio.get_running_loop(), hub.on_commit)
        else:
            forwarder.start()

            def on_commit(c: Committed) -> None:
                hub.on_commit(c)
                forwarder.on_commit(c)

            store.start(asyncio.get_running_loop(), on_commit)
        hub.start(left_running)
        try:
            yield
        finally:
            hub.stop()
            if forwarder is not None:
                forwarder.stop()
            await asyncio.get_running_loop().run_in_executor(None, store.close)

    app = Starlette(
        routes=[
            *api.routes,
            WebSocketRoute("/ingest", ingest),
            WebSocketRoute("/api/live", live),
            Mount("/", app=Viewer(settings.viewer_dist)),
        ],
        middleware=[Middleware(Guard, allowed_origins=settings.allowed_origins, bound_host=settings.host)],
        lifespan=lifespan,
    )
    app.state.hub = Hub(store, settings, initial_debug_state(store, settings))
    app.state.otlp = otlp_forwarder(settings, store)
    return app
