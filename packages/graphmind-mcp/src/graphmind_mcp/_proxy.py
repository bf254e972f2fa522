"""`graphmind mcp-proxy`: a stdio MCP server in front of a real one, every tool call a gated node.

```
host (Claude Desktop, an IDE, …) ──stdio──► proxy: low-level Server ──► ClientSession ──stdio──► real server
                                             tools/call: a tool:<name> node (instrument_mcp on the session)
                                             everything else: passed through (_routes.py, _relay.py)
```

One run per host session. The host exits: the run finishes ok. The server exits or crashes: the
calls in flight get an error, the run ends as error and the proxy exits (code 1), so the host sees
its server go away as it would without the proxy. Fail-open: with no hub the proxy forwards
everything untouched; a hub that goes away mid-hold releases the call (core's rule). Configured by
environment variables only (GRAPHMIND_URL, GRAPHMIND_HIDE_*, the loop guard's), like any app.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

import graphmind
from graphmind.adapter import Engine, RunAborted, RunContext, engine_for

from . import _hooks
from ._instrument import instrument
from ._label import command_label
from ._relay import HostChannel, WatchedStream
from ._routes import handlers

# How long the calls in flight get to answer the host once the server is gone.
DRAIN_SECONDS = 2.0
ABORTED_TEXT = "The call was aborted from the GraphMind debugger; the server was not asked for a result."


class ServerExited(RuntimeError):
    """The real MCP server closed its stdout (it exited or crashed)."""


class ProxyRun:
    """The run of one host session; a new one after an abort, so the proxy keeps serving."""

    def __init__(self, engine: Engine, name: str, meta: dict[str, Any]) -> None:
        self.engine = engine
        self.name = name
        self.meta = meta
        self.count = 1
        self.current: RunContext = engine.begin_run(name, meta)

    def restart_after_abort(self, aborted: RunContext) -> None:
        if aborted is not self.current:
            return  # another call already started the next run
        self.engine.end_run(aborted)
        self.count += 1
        self.current = self.engine.begin_run(f"{self.name} ({self.count})", self.meta)

    def end(self, error: BaseException | None) -> None:
        self.engine.end_run(self.current, error)


class ToolCalls:
    """The tools/call handler: the instrumented upstream session's call_tool, with progress relayed."""

    def __init__(self, upstream: ClientSession, run: ProxyRun) -> None:
        self.upstream = upstream
        self.run = run
        self.in_flight = 0
        self.idle = anyio.Event()
        self.idle.set()

    async def __call__(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        meta = dict(ctx.meta or {})
        progress = None
        if meta.pop("progress_token", None) is not None:
            session = ctx.session

            async def progress(value: float, total: float | None, message: str | None) -> None:
                # Reported against the host's own token (mcp/server/session.py ServerSession.report_progress).
                await session.report_progress(value, total, message)

        run = self.run.current
        self.in_flight += 1
        self.idle = anyio.Event()
        try:
            return await self.upstream.call_tool(
                params.name, params.arguments, progress_callback=progress, meta=meta or None
            )
        except RunAborted:
            self.run.restart_after_abort(run)
            return types.CallToolResult(content=[types.TextContent(text=ABORTED_TEXT)], is_error=True)
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self.idle.set()


def build_server(
    upstream: ClientSession, init: types.InitializeResult, calls: ToolCalls, host: HostChannel
) -> tuple[Server[Any], Any]:
    caps = init.capabilities
    routes = handlers(upstream, caps)
    if caps.tools is not None:
        routes["on_call_tool"] = calls
    info = init.server_info
    server: Server[Any] = Server(
        info.name, version=info.version, title=info.title, instructions=init.instructions, **routes
    )
    server.middleware.append(host.middleware)
    notify = NotificationOptions(
        prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
        resources_changed=bool(caps.resources and caps.resources.list_changed),
        tools_changed=bool(caps.tools and caps.tools.list_changed),
    )
    return server, server.create_initialization_options(notify)


def _say(message: str) -> None:
    print(f"graphmind mcp-proxy: {message}", file=sys.stderr, flush=True)


async def serve(
    argv: Sequence[str],
    *,
    name: str | None = None,
    gm: graphmind.Client | None = None,
    host_streams: tuple[Any, Any] | None = None,
) -> int:
    """Runs the proxy until the host or the server goes away; returns the exit code.

    `host_streams`: the host side as (read, write) streams (tests); default: this process's stdio.
    """
    session = ProxySession(list(argv), name, gm, host_streams)
    try:
        return await session.serve()
    finally:
        await session.close()


class ProxySession:
    """One host session: the server process, the run, and how it ends."""

    def __init__(
        self,
        argv: list[str],
        name: str | None,
        gm: graphmind.Client | None,
        host_streams: tuple[Any, Any] | None,
    ) -> None:
        self.own_client = gm is None
        self.gm = gm if gm is not None else graphmind.Client(app="mcp-proxy")  # the environment configures it
        self.argv = argv
        self.name = name
        self.host_streams = host_streams
        self.label = command_label(argv, self.gm.redaction_switches.hide_inputs)
        self.closed = anyio.Event()  # the server's stdout reached EOF
        self.run: ProxyRun | None = None
        self.calls: ToolCalls | None = None

    async def close(self) -> None:
        if self.own_client:
            await anyio.to_thread.run_sync(self.gm.dispose)  # a second dispose does nothing

    async def serve(self) -> int:
        if self.gm.live:
            # Attach before the first call so a breakpoint holds it; no hub: carry on detached at once.
            await anyio.to_thread.run_sync(self.gm.ready, 1.0)
        # The server inherits the proxy's whole environment (a host passes the server's secrets so).
        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=dict(os.environ))
        host = HostChannel()
        try:
            async with stdio_client(params) as (read, write):
                reader = WatchedStream(read, self.closed)
                async with ClientSession(reader, write, message_handler=host.on_server_message) as upstream:
                    try:
                        init = await upstream.initialize()
                    except MCPError as exc:
                        _say(
                            f"the MCP server `{self.label}` did not complete the MCP handshake ({exc}); check the command after `--`."
                        )
                        return 1
                    meta: dict[str, Any] = {"mcp": {"server": self.label, "protocol": init.protocol_version}}
                    run = self.run = ProxyRun(engine_for(self.gm), self.name or init.server_info.name, meta)
                    instrument(upstream, _hooks.State(self.gm, run=lambda: run.current))
                    self.calls = ToolCalls(upstream, run)
                    server, options = build_server(upstream, init, self.calls, host)
                    if await self._serve_host(server, options):
                        return 1
                    run.end(None)  # the host went away: the run is over, and it went fine
                    return 0
        except OSError as exc:
            _say(f"could not start the MCP server `{self.label}`: {exc}. Check the command after `--`.")
            return 1

    async def _serve_host(self, server: Server[Any], options: Any) -> bool:
        """Serves the host until it goes away (False) or the real server does (True)."""
        server_exited = False
        async with anyio.create_task_group() as tg:

            async def watch_server() -> None:
                nonlocal server_exited
                await self.closed.wait()
                server_exited = True
                await self._server_exited()
                tg.cancel_scope.cancel()

            tg.start_soon(watch_server)
            if self.host_streams is not None:
                await server.run(self.host_streams[0], self.host_streams[1], options)
            else:
                async with stdio_server() as (read, write):
                    await server.run(read, write, options)
            if not server_exited:
                tg.cancel_scope.cancel()
        return server_exited

    async def _server_exited(self) -> None:
        error = ServerExited(f"the MCP server `{self.label}` exited (its stdout closed)")
        if self.run is not None:
            self.run.end(error)
        _say(f"{error}; the host's session ends here. Its own stderr above says why.")
        if self.own_client:
            # Releases a call held at its error gate (continue), so the host gets its error now.
            await anyio.to_thread.run_sync(self.gm.dispose)
        if self.calls is not None:
            with anyio.move_on_after(DRAIN_SECONDS):
                await self.calls.idle.wait()  # the calls in flight answer the host with an error first
        if self.host_streams is None:
            # The host closes our stdin only once it sees our stdout close, and mcp's stdio_server reads
            # stdin in a worker thread that cannot be interrupted (mcp/server/stdio.py stdin_reader): end
            # the process as a crashed server would, after the last answers reached the host.
            await anyio.sleep(0.2)
            sys.stdout.flush()
            os._exit(1)
