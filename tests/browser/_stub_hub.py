"""A stand-in for the hub's read API and live feed (docs/api.md), in memory.

Only for developing and smoke-testing the viewer's pages without the real hub; the acceptance
tests run against `graphmind_server.testing.HubProcess`. It folds no gates: a test pushes the
frames it wants the page to see.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

VIEWER = Path(__file__).resolve().parents[2] / "packages/graphmind-server/src/graphmind_server/viewer"


class StubHub:
    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.gates: list[dict[str, Any]] = []
        self.debug: dict[str, Any] = {"breakpoints": [], "mode": "run", "pauseOnError": "on", "version": 1}
        self.requests: list[tuple[str, str, Any]] = []
        self.cursor = 0
        self.history: list[dict[str, Any]] = []  # every frame with a cursor, for ?after= catch-up
        self.connects: list[str | None] = []
        self._clients: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ---- test side -----------------------------------------------------------------------
    def add_run(self, run: dict[str, Any], events: list[dict[str, Any]]) -> None:
        self.runs[run["id"]] = run
        self.events[run["id"]] = list(events)

    def push(self, frame: dict[str, Any]) -> None:
        """Send a live frame to every connected viewer (thread-safe)."""
        if frame.get("type") in ("event", "run"):
            self.cursor += 1
            frame = {**frame, "cursor": self.cursor}
            self.history.append(frame)
        if frame.get("type") == "event":
            self.events.setdefault(frame["runId"], []).append(frame["event"])
        if frame.get("type") == "run":
            self.runs[frame["run"]["id"]] = frame["run"]
        if frame.get("type") == "gate.held":
            self.gates.append(frame["gate"])
        if frame.get("type") == "gate.released":
            self.gates = [g for g in self.gates if g["gateId"] != frame["gateId"]]
        if self._loop is None:
            return
        for q in list(self._clients):
            self._loop.call_soon_threadsafe(q.put_nowait, frame)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- routes --------------------------------------------------------------------------
    def app(self) -> Starlette:
        async def static(request: Request) -> Response:
            rel = request.path_params.get("path") or "index.html"
            path = (VIEWER / rel).resolve()
            if VIEWER not in path.parents or not path.is_file():
                return JSONResponse({"error": "not found"}, 404)
            return FileResponse(path)

        async def runs(request: Request) -> Response:
            rows = sorted(self.runs.values(), key=lambda r: -r["startedAt"])
            return JSONResponse({"runs": rows})

        async def run(request: Request) -> Response:
            rid = request.path_params["id"]
            if rid not in self.runs:
                return JSONResponse({"error": "no such run"}, 404)
            nodes: dict[str, dict[str, Any]] = {}
            for ev in self.events.get(rid, []):
                if "nodeId" in ev and ev["type"] in ("node.started", "run.started"):
                    n = nodes.setdefault(
                        ev["nodeId"],
                        {
                            "nodeId": ev["nodeId"],
                            "kind": ev.get("kind"),
                            "name": ev.get("name"),
                            "executions": 0,
                            "status": "ok",
                        },
                    )
                    n["executions"] += 1
            return JSONResponse({**self.runs[rid], "nodes": list(nodes.values())})

        async def events(request: Request) -> Response:
            rid = request.path_params["id"]
            after = int(request.query_params.get("after", 0))
            limit = int(request.query_params.get("limit", 1000))
            rows = [e for e in self.events.get(rid, []) if e["seq"] > after]
            page = rows[:limit]
            nxt = page[-1]["seq"] if len(rows) > limit else None
            return JSONResponse({"events": page, "next": nxt})

        async def gates(request: Request) -> Response:
            return JSONResponse({"gates": self.gates})

        async def debug(request: Request) -> Response:
            if request.method == "PUT":
                body = await request.json()
                self.requests.append(("PUT", "/api/debug", body))
                self.debug = {**self.debug, **body, "version": self.debug["version"] + 1}
                self.push({"type": "debug", "debug": self.debug})
            return JSONResponse(self.debug)

        async def playground(request: Request) -> Response:  # the node detail asks what a send would need
            return JSONResponse({"missing": None})

        async def proposals(request: Request) -> Response:  # the node detail lists an assistant's proposals
            return JSONResponse({"proposals": []})

        async def post(request: Request) -> Response:
            body = await request.json()
            self.requests.append(("POST", request.url.path, body))
            return JSONResponse({"ok": True})

        async def context(request: Request) -> Response:
            # The Context X-ray routes (docs/api.md): this stub counts nothing, so it has no parts.
            if "nodeId" in request.path_params:
                return JSONResponse({"parts": [], "warnings": [], "total": 0, "diff": None})
            return JSONResponse({"steps": []})

        async def live(ws: WebSocket) -> None:
            await ws.accept()
            q: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
            self._clients.add(q)
            try:
                self.connects.append(ws.query_params.get("after"))
                await ws.send_json(
                    {"type": "hello", "cursor": self.cursor, "debug": self.debug, "gates": self.gates}
                )
                after = ws.query_params.get("after")
                if after is not None:
                    for f in [f for f in self.history if f["type"] == "event" and f["cursor"] > int(after)]:
                        await ws.send_json(f)
                while True:
                    frame = await q.get()
                    if frame is None:  # the stub is stopping, like a hub restart
                        await ws.close(1012)
                        return
                    await ws.send_json(frame)
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                self._clients.discard(q)

        return Starlette(
            routes=[
                Route("/api/runs", runs),
                Route("/api/runs/{id}", run),
                Route("/api/runs/{id}/events", events),
                Route("/api/runs/{id}/context", context),
                Route("/api/runs/{id}/nodes/{nodeId}/context", context),
                Route("/api/gates", gates),
                Route("/api/gates/{gid}", post, methods=["POST"]),
                Route("/api/debug", debug, methods=["GET", "PUT"]),
                Route("/api/playground", playground),
                Route("/api/proposals", proposals),
                Route("/api/pause", post, methods=["POST", "DELETE"]),
                Route("/api/runs/{id}/abort", post, methods=["POST"]),
                WebSocketRoute("/api/live", live),
                Route("/", static),
                Route("/{path:path}", static),
            ]
        )

    # ---- lifecycle -----------------------------------------------------------------------
    def start(self, port: int = 0) -> StubHub:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._loop.call_soon(ready.set)
            self._loop.run_until_complete(self._server.serve(sockets=[sock]))  # type: ignore[union-attr]

        self._thread = threading.Thread(target=run, name="stub-hub", daemon=True)
        self._thread.start()
        ready.wait(5)
        deadline = 50
        while not self._server.started and deadline:
            threading.Event().wait(0.1)
            deadline -= 1
        return self

    def stop(self) -> None:
        if self._loop is not None:
            for q in list(self._clients):
                self._loop.call_soon_threadsafe(q.put_nowait, None)
        if self._server:
            self._server.should_exit = True
        if self._thread:
            self._thread.join(5)
        with contextlib.suppress(Exception):
            assert self._loop is not None
            self._loop.close()
        self._loop = None
        self._clients.clear()
