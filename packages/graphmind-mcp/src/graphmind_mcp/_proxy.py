"""`graphmind mcp-proxy`: a stdio proxy in front of a real MCP server, every tool call a gated node.

```
host (Claude Desktop, an IDE, …) ──stdin/stdout──► proxy ──stdin/stdout──► real server (stderr: shared)
   tools/call: a tool:<name> node; the proxy sends it to the server under its own id, so retry can resend it
   everything else, both ways (initialize, lists, resources, prompts, progress, list changes,
   cancellation, the server's own requests to the host): passed on line by line, unchanged
```

The proxy speaks JSON-RPC, not the SDK's session layer: a message it does not gate costs one
`json.loads`, and any protocol revision passes through. It reads tools/list answers on their way to
the host for the tools' output schemas (an injected result is checked against them) and the
initialize answer for the server's name (the run's name). One run per host session. The host exits:
the run finishes ok. The server exits or crashes: the calls in flight get a JSON-RPC error, the run
ends as error and the proxy exits with code 1, as the server itself would have. Fail-open: with no
hub every call is forwarded untouched; a hub that goes away mid-hold releases the call (core's
rule). Configured by environment variables only, like any app.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import Sequence
from typing import Any

import graphmind
from graphmind.adapter import Engine, RunAborted, RunContext, engine_for

from ._call import ToolCall, call_tool_node
from ._effects import effect_of
from ._label import command_label
from ._result import describe_result
from ._schemas import OutputSchemas
from ._wire import LIMIT, Lines, TooLong, decode, encode, host_stdio, read_line, spawn

DRAIN_SECONDS = 2.0  # how long the calls in flight get to answer the host once the server is gone
STOP_SECONDS = 5.0  # how long a server gets to exit after the host left (then SIGTERM, then SIGKILL)
ABORTED_TEXT = "The call was aborted from the GraphMind debugger; the server was not asked for a result."
ID_PREFIX = "graphmind-mcp-proxy-"  # the ids of the proxy's own requests to the server
INTERNAL_ERROR = -32603  # JSON-RPC's code for an error of the receiver (here: the proxy's bound)


class JsonRpcError(Exception):
    """The server answered with a JSON-RPC error. `continue` at the error gate forwards it as it was."""

    def __init__(self, error: Any) -> None:
        self.error = error if isinstance(error, dict) else {"code": -32603, "message": str(error)}
        super().__init__(f"{self.error.get('message')} (JSON-RPC error {self.error.get('code')})")


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


def _say(message: str) -> None:
    print(f"graphmind mcp-proxy: {message}", file=sys.stderr, flush=True)


def _error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class Proxy:
    def __init__(self, argv: Sequence[str], name: str | None, gm: graphmind.Client) -> None:
        self.argv = list(argv)
        self.name = name
        self.gm = gm
        self.engine = engine_for(gm)
        self.label = command_label(self.argv, gm.redaction_switches.hide_inputs)
        self.hidden = gm.redaction_switches.hide_tool_results or gm.redaction_switches.hide_outputs
        self.run: ProxyRun | None = None
        self.server_name: str | None = None
        self.protocol: str | None = None
        self.schemas = OutputSchemas(self._list_tools)
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}  # the proxy's own requests
        self.calls: dict[Any, asyncio.Task[None]] = {}  # the host's tools/call id -> its node
        self.host_lists: set[Any] = set()  # the host's tools/list ids: their answers carry output schemas
        self.host_init: Any = None  # the host's initialize id: its answer names the server
        self.server_gone = False
        self._ids = itertools.count(1)

    # ---- the session -----------------------------------------------------------------------------
    async def serve(self) -> int:
        if self.gm.live:
            # Attach before the first call so a breakpoint holds it; no hub: carry on detached at once.
            await asyncio.get_running_loop().run_in_executor(None, self.gm.ready, 1.0)
        try:
            proc = await spawn(self.argv)
        except OSError as exc:
            _say(f"could not start the MCP server `{self.label}`: {exc}. Check the command after `--`.")
            return 1
        assert proc.stdin is not None and proc.stdout is not None
        self.server = Lines(proc.stdin)
        host_in, self.host = await host_stdio()
        host_done = asyncio.create_task(self._pump_host(host_in))
        server_done = asyncio.create_task(self._pump_server(proc.stdout))
        await asyncio.wait({host_done, server_done}, return_when=asyncio.FIRST_COMPLETED)
        if host_done.done():
            await self._host_left(proc, server_done)
            return 0
        await self._server_left(host_done)
        return 1

    async def _host_left(self, proc: asyncio.subprocess.Process, server_done: asyncio.Task[None]) -> None:
        for task in list(self.calls.values()):
            task.cancel()  # nobody is waiting for their answers any more
        self.server.close()  # EOF on the server's stdin: how a host says goodbye over stdio
        try:
            await asyncio.wait_for(proc.wait(), STOP_SECONDS)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), STOP_SECONDS)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        server_done.cancel()
        if self.run is not None:
            self.run.end(None)  # the host went away: the run is over, and it went fine

    async def _server_left(self, host_done: asyncio.Task[None]) -> None:
        self.server_gone = True
        error = ServerExited(f"the MCP server `{self.label}` exited (its stdout closed)")
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()
        if self.run is not None:
            self.run.end(error)
        _say(f"{error}; the host's session ends here. Its own stderr above says why.")
        # A call held at its error gate is released (continue): the host gets its error now.
        await asyncio.get_running_loop().run_in_executor(None, self.gm.dispose)
        if self.calls:
            await asyncio.wait(list(self.calls.values()), timeout=DRAIN_SECONDS)
        host_done.cancel()

    # ---- host -> server --------------------------------------------------------------------------
    async def _pump_host(self, reader: asyncio.StreamReader) -> None:
        while line := await read_line(reader):
            if isinstance(line, TooLong):
                await self._too_long(line, "the host", f"the MCP server `{self.label}` was not sent it")
                continue
            message = decode(line)
            if message is not None:
                method, request_id = message.get("method"), message.get("id")
                if method == "tools/call" and isinstance(request_id, str | int) and self.engine.live:
                    self._start_call(request_id, message.get("params") or {})
                    continue
                if method == "notifications/cancelled":
                    held = self.calls.get((message.get("params") or {}).get("requestId"))
                    if (
                        held is not None
                    ):  # the server knows this call by the proxy's id: _request cancels it there
                        held.cancel()
                        continue
                elif method == "tools/list" and isinstance(request_id, str | int):
                    self.host_lists.add(request_id)
                elif method == "initialize":
                    self.host_init = request_id
            await self.server.send(line)

    def _start_call(self, request_id: str | int, params: dict[str, Any]) -> None:
        task = asyncio.create_task(self._tool_call(request_id, params))
        self.calls[request_id] = task

        def forget(_task: asyncio.Task[None]) -> None:
            self.calls.pop(request_id, None)

        task.add_done_callback(forget)

    # ---- server -> host --------------------------------------------------------------------------
    async def _pump_server(self, reader: asyncio.StreamReader) -> None:
        while line := await read_line(reader):
            if isinstance(line, TooLong):
                await self._too_long(line, f"the MCP server `{self.label}`", "the host was not sent it")
                continue
            message = decode(line)
            if message is not None and "method" not in message:  # an answer
                request_id = message.get("id")
                if isinstance(request_id, str) and request_id.startswith(ID_PREFIX):
                    future = self.pending.pop(request_id, None)
                    if future is not None and not future.done():
                        future.set_result(message)
                    continue
                if isinstance(request_id, str | int) and request_id in self.host_lists:
                    self.host_lists.discard(request_id)
                    self.schemas.absorb(message.get("result"))
                elif request_id is not None and request_id == self.host_init:
                    self._initialized(message.get("result"))
            await self.host.send(line)

    async def _too_long(self, line: TooLong, source: str, dropped: str) -> None:
        """A message over the line bound (docs/mcp.md): dropped with one line on stderr, and the
        request it answers (or makes) gets a JSON-RPC error instead, so nobody waits for it."""
        what = f"a {line.size / 2**20:.0f} MiB message from {source}, over the {LIMIT // 2**20} MiB a line may hold"
        rid = line.request_id
        error = _error_reply(rid, INTERNAL_ERROR, f"graphmind mcp-proxy dropped {what}")
        if isinstance(rid, str) and rid.startswith(ID_PREFIX):
            future = self.pending.pop(rid, None)
            if future is not None and not future.done():
                future.set_result(error)  # the tool call it answered fails with this error
            answered = f"the tool call it answered ({rid}) fails with that error"
        elif rid is not None:
            self.host_lists.discard(rid)
            await self.host.send(encode(error))
            answered = f"the host got a JSON-RPC error for its request {rid!r}"
        else:
            answered = "it answered no request"
        _say(f"dropped {what}: {dropped}; {answered}. Return less from the tool (or a file path).")

    def _initialized(self, result: Any) -> None:
        if not isinstance(result, dict):
            return
        info = result.get("serverInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.server_name = info["name"]
        if isinstance(result.get("protocolVersion"), str):
            self.protocol = result["protocolVersion"]

    def _run(self) -> ProxyRun:
        if self.run is None:  # begun at the first tool call, once the server has said its name
            meta = {"mcp": {"server": self.label, "protocol": self.protocol}}
            self.run = ProxyRun(self.engine, self.name or self.server_name or self.label.split(" ")[0], meta)
        return self.run

    # ---- the proxy's own requests ----------------------------------------------------------------
    async def _request(self, method: str, params: Any) -> Any:
        if self.server_gone:
            raise ServerExited(f"the MCP server `{self.label}` has exited")
        request_id = f"{ID_PREFIX}{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        await self.server.send(
            encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        try:
            answer = await future
        except asyncio.CancelledError:
            self.pending.pop(request_id, None)
            with contextlib.suppress(Exception):  # the host cancelled: tell the server, as the host did
                cancel = {"requestId": request_id, "reason": "cancelled by the host"}
                await self.server.send(
                    encode({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
                )
            raise
        if "error" in answer:
            raise JsonRpcError(answer["error"])
        return answer.get("result")

    async def _list_tools(self, cursor: str | None) -> Any:
        return await self._request("tools/list", {"cursor": cursor} if cursor else {})

    async def _tool_call(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        run = self._run()
        aborted_run = run.current

        async def send(_name: Any, arguments: Any) -> Any:
            # with the host's _meta (progress goes to the host); `arguments` edited at a gate or not
            sent = params if arguments is params.get("arguments") else {**params, "arguments": arguments}
            return await self._request("tools/call", sent)

        call = ToolCall(send, self.schemas.validate, str(name), params.get("arguments"), (), {}, self.hidden)
        call.output_schema = self.schemas.known(str(name))
        call.effect = effect_of(await self.schemas.annotations(str(name)))
        try:
            result = await call_tool_node(self.engine, call, self.server_name, aborted_run)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": _wire(result)}
        except JsonRpcError as exc:
            reply = {"jsonrpc": "2.0", "id": request_id, "error": exc.error}
        except RunAborted:
            run.restart_after_abort(aborted_run)
            aborted = {"content": [{"type": "text", "text": ABORTED_TEXT}], "isError": True}
            reply = {"jsonrpc": "2.0", "id": request_id, "result": aborted}
        except ServerExited as exc:
            reply = _error_reply(request_id, -32000, str(exc))
        except Exception as exc:  # never leave the host without an answer
            reply = _error_reply(request_id, -32603, f"graphmind mcp-proxy: {type(exc).__name__}: {exc}")
        await self.host.send(encode(reply))


def _wire(result: Any) -> Any:
    """The server's own result as it came (a dict), or an injected `CallToolResult` in its wire form."""
    if isinstance(result, dict):
        return result
    dump = getattr(result, "model_dump", None)
    return (
        dump(mode="json", by_alias=True, exclude_none=True) if dump is not None else describe_result(result)
    )


async def serve(argv: Sequence[str], *, name: str | None = None) -> int:
    """Runs the proxy until the host or the server goes away; returns the exit code."""
    gm = graphmind.Client(
        app="mcp-proxy"
    )  # the environment configures it: the proxy takes no session options
    try:
        return await Proxy(argv, name, gm).serve()
    finally:
        await asyncio.get_running_loop().run_in_executor(None, gm.dispose)  # a second dispose does nothing
