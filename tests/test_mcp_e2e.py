"""Issue 13 acceptance: the mcp SDK's own client as the host, `graphmind mcp-proxy` in front of the
real `mcp-server-time` (and of a small MCPServer for progress, list changes and a crash), against
the real hub process. Every hub request runs in a worker thread so the host's event loop keeps going."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from graphmind_server.testing import HubProcess, wait_for

GRAPHMIND = shutil.which("graphmind") or str(Path(sys.executable).with_name("graphmind"))
FIXTURES = Path(__file__).parent / "fixtures" / "mcp"
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
PROGRESS_SERVER = [sys.executable, str(FIXTURES / "progress_server.py")]
NODE = "tool:get_current_time"
FAKE_TIME = {
    "timezone": "UTC",
    "datetime": "2001-02-03T04:05:06+00:00",
    "day_of_week": "Saturday",
    "is_dst": False,
}


class Proxy:
    """The host's side of one proxy session, and what the test needs around it."""

    def __init__(self, session: ClientSession, hub: HubProcess, stderr: Path) -> None:
        self.session = session
        self.hub = hub
        self.stderr = stderr

    async def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return await anyio.to_thread.run_sync(lambda: self.hub.api(method, path, body))

    async def held(self, count: int = 1) -> list[dict[str, Any]]:
        return await anyio.to_thread.run_sync(lambda: self.hub.held_gates(count, timeout=20))

    async def answer(self, gate: dict[str, Any], action: str, value: Any = None) -> None:
        body: dict[str, Any] = {"action": action} if value is None else {"action": action, "value": value}
        status, reply = await self.api("POST", f"/api/gates/{gate['gateId']}", body)
        assert status == 200, reply

    async def debug(self, **state: Any) -> None:
        assert (await self.api("PUT", "/api/debug", state))[0] == 200

    async def runs(self) -> list[dict[str, Any]]:
        return (await self.api("GET", "/api/runs?app=mcp-proxy"))[1]["runs"]


@asynccontextmanager
async def proxy(
    hub: HubProcess, tmp_path: Path, server: list[str] = TIME_SERVER, env: dict[str, str] | None = None
) -> AsyncIterator[Proxy]:
    params = StdioServerParameters(
        command=GRAPHMIND,
        args=["mcp-proxy", "--", *server],
        env={"GRAPHMIND_URL": hub.ingest_url, **(env or {})},
    )
    stderr = tmp_path / "proxy.stderr"
    with stderr.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield Proxy(session, hub, stderr)


async def _run_of(p: Proxy, status: str, count: int = 1) -> list[dict[str, Any]]:
    def check() -> list[dict[str, Any]] | None:
        runs = p.hub.api("GET", "/api/runs?app=mcp-proxy")[1]["runs"]
        return runs if len([r for r in runs if r["status"] == status]) >= count else None

    return await anyio.to_thread.run_sync(lambda: wait_for(check, 20, f"a {status} proxy run"))


def _events(hub: HubProcess, run_id: str) -> list[dict[str, Any]]:
    return hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]


async def _in_task(tg: Any, fn: Callable[[], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    async def go() -> None:
        try:
            out["value"] = await fn()
        except Exception as exc:
            out["error"] = exc

    tg.start_soon(go)
    return out


async def test_tools_pass_through_and_each_call_is_a_node_of_one_run(hub: HubProcess, tmp_path: Path) -> None:
    async with proxy(hub, tmp_path) as p:
        tools = await p.session.list_tools()
        assert {t.name for t in tools.tools} == {"get_current_time", "convert_time"}
        assert tools.tools[0].output_schema is not None
        result = await p.session.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.structured_content["timezone"] == "UTC" and not result.is_error
        await p.session.call_tool(
            "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    run = (await _run_of(p, "finished"))[0]  # the host exited: the run closes as ok
    assert run["name"] == "mcp-time"
    assert run["meta"]["mcp"]["server"].endswith("-m mcp_server_time --local-timezone UTC")
    nodes = [(e["type"], e["nodeId"]) for e in _events(hub, run["id"]) if e["type"].startswith("node.")]
    assert nodes == [
        ("node.started", NODE),
        ("node.finished", NODE),
        ("node.started", "tool:convert_time"),
        ("node.finished", "tool:convert_time"),
    ]


async def test_before_inject_answers_with_valid_structured_content_and_the_server_is_never_asked(
    hub: HubProcess, tmp_path: Path
) -> None:
    log = tmp_path / "server-stdin.log"
    shim = [sys.executable, str(FIXTURES / "recording_shim.py"), str(log), "--", *TIME_SERVER]
    async with proxy(hub, tmp_path, server=shim) as p, anyio.create_task_group() as tg:
        await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
        out = await _in_task(tg, lambda: p.session.call_tool("get_current_time", {"timezone": "UTC"}))
        gate = (await p.held())[0]
        assert (gate["nodeId"], gate["gate"], gate["input"]) == (NODE, "before", {"timezone": "UTC"})
        # A value that does not match the outputSchema is refused: the gate is held again.
        await p.answer(gate, "inject", {"timezone": "UTC"})
        gate = (await p.held())[0]
        # ... and /api/gates says why on the gate held again (the card shows it)
        assert "'datetime' is a required property" in gate["refused"], gate
        await p.answer(gate, "inject", FAKE_TIME)
    result = out["value"]
    assert result.structured_content == FAKE_TIME and not result.is_error  # the host's SDK validated it too
    assert '"tools/call"' not in log.read_text()
    assert '"tools/list"' in log.read_text()  # the shim did see the proxy's traffic
    assert "'datetime' is a required property" in p.stderr.read_text()


async def test_an_edited_call_reaches_the_server_with_the_edited_arguments(hub: HubProcess, tmp_path: Path) -> None:
    async with proxy(hub, tmp_path) as p, anyio.create_task_group() as tg:
        await p.session.list_tools()  # the proxy sees the tools' output schemas pass by
        await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
        out = await _in_task(tg, lambda: p.session.call_tool("get_current_time", {"timezone": "UTC"}))
        gate = (await p.held())[0]
        assert gate["editable"] is True
        skeleton = gate["injectSkeleton"]  # the outputSchema's shape, to fill in
        assert isinstance(skeleton, dict) and {"timezone", "datetime"} <= set(skeleton), skeleton
        status, reply = await p.api(
            "POST", f"/api/gates/{gate['gateId']}", {"action": "continue", "input": {"timezone": "Asia/Tokyo"}}
        )
        assert status == 200, reply
    assert out["value"].structured_content["timezone"] == "Asia/Tokyo"  # what the server answered for
    run = (await _run_of(p, "finished"))[0]
    finished = [e for e in _events(hub, run["id"]) if e["type"] == "node.finished"][0]
    assert finished["edited"] is True and finished["originalInput"] == {"timezone": "UTC"}


async def test_an_is_error_result_holds_at_the_error_gate_then_retry_then_continue(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with proxy(hub, tmp_path) as p, anyio.create_task_group() as tg:
        await p.debug(pauseOnError="on")
        out = await _in_task(
            tg, lambda: p.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        )
        gate = (await p.held())[0]
        assert (gate["nodeId"], gate["gate"]) == (NODE, "error")
        assert "Mars/Olympus" in gate["error"]["message"]
        await p.answer(gate, "retry")
        gate = (await p.held())[0]  # the server failed again
        assert gate["gate"] == "error"
        await p.answer(gate, "continue")
    assert out["value"].is_error and "Mars/Olympus" in out["value"].content[0].text


async def test_abort_gives_the_host_an_error_result_and_the_proxy_serves_the_next_call(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with proxy(hub, tmp_path) as p:
        async with anyio.create_task_group() as tg:
            await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
            out = await _in_task(tg, lambda: p.session.call_tool("get_current_time", {"timezone": "UTC"}))
            await p.answer((await p.held())[0], "abort")
        assert out["value"].is_error and "aborted" in out["value"].content[0].text
        await p.debug(breakpoints=[])
        result = await p.session.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.structured_content["timezone"] == "UTC"
    runs = await _run_of(p, "finished")
    assert {r["status"] for r in runs} == {"aborted", "finished"}


async def test_progress_and_list_changes_are_relayed_to_the_host(hub: HubProcess, tmp_path: Path) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    changed = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with proxy(hub, tmp_path, server=PROGRESS_SERVER) as p:
        p.session._message_handler = _on_list_changed(
            changed
        )  # the host's notification hook (set at construction)
        result = await p.session.call_tool("count", {"steps": 3}, progress_callback=on_progress)
        assert result.content[0].text == "counted 3"
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        await p.session.call_tool("add_tool", {})
        with anyio.fail_after(10):
            await changed.wait()
        assert "added" in {t.name for t in (await p.session.list_tools()).tools}


def _on_list_changed(event: anyio.Event) -> Callable[[Any], Any]:
    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            event.set()

    return handler


async def test_a_crashing_server_ends_the_run_as_error_and_the_host_gets_a_clean_error(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with proxy(hub, tmp_path, server=PROGRESS_SERVER) as p:
        with pytest.raises(MCPError):
            await p.session.call_tool("crash", {})
    run = (await _run_of(p, "error"))[0]
    finished = next(e for e in _events(hub, run["id"]) if e["type"] == "run.finished")
    assert "exited" in finished["error"]["message"]
    stderr = p.stderr.read_text()
    assert "progress-server: crashing on purpose" in stderr  # the server's stderr passes through
    assert "graphmind mcp-proxy: the MCP server" in stderr and "Traceback" not in stderr


async def test_the_hub_going_away_mid_hold_lets_the_call_continue(hub: HubProcess, tmp_path: Path) -> None:
    async with proxy(hub, tmp_path) as p, anyio.create_task_group() as tg:
        await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
        out = await _in_task(tg, lambda: p.session.call_tool("get_current_time", {"timezone": "UTC"}))
        await p.held()
        await anyio.to_thread.run_sync(hub.kill)
    assert out["value"].structured_content["timezone"] == "UTC"


async def test_with_no_hub_everything_is_forwarded_untouched(hub: HubProcess, tmp_path: Path) -> None:
    hub.stop()
    async with proxy(hub, tmp_path) as p:
        result = await p.session.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.structured_content["timezone"] == "UTC"
        failed = await p.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        assert failed.is_error


async def test_hide_inputs_keeps_the_command_line_out_of_the_run(hub: HubProcess, tmp_path: Path) -> None:
    async with proxy(hub, tmp_path, env={"GRAPHMIND_HIDE_INPUTS": "1"}) as p:
        await p.session.call_tool("get_current_time", {"timezone": "UTC"})
    run = (await _run_of(p, "finished"))[0]
    assert run["meta"]["mcp"]["server"] == Path(sys.executable).name
    started = next(e for e in _events(hub, run["id"]) if e["type"] == "node.started")
    assert started["input"] == "__REDACTED__"


async def test_a_held_call_the_host_cancels_is_released_and_ends(hub: HubProcess, tmp_path: Path) -> None:
    async with proxy(hub, tmp_path) as p:
        await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def call() -> None:
                with scope:
                    await p.session.call_tool("get_current_time", {"timezone": "UTC"})

            tg.start_soon(call)
            await p.held()
            scope.cancel()  # the host's SDK sends notifications/cancelled for the request
        await anyio.to_thread.run_sync(
            lambda: wait_for(lambda: not hub.api("GET", "/api/gates")[1]["gates"], 20, "the gate released")
        )
        await p.debug(breakpoints=[])
        assert (await p.session.call_tool("get_current_time", {"timezone": "UTC"})).structured_content[
            "timezone"
        ] == "UTC"
    run = (await _run_of(p, "finished"))[0]
    errors = [e for e in _events(hub, run["id"]) if e["type"] == "node.error"]
    assert [e["error"]["name"] for e in errors] == ["CancelledError"]


async def test_the_loop_guard_is_configured_by_the_environment_and_spans_the_host_session(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with (
        proxy(hub, tmp_path, env={"GRAPHMIND_LOOP_THRESHOLD": "2"}) as p,
        anyio.create_task_group() as tg,
    ):
        await p.session.call_tool("get_current_time", {"timezone": "UTC"})
        out = await _in_task(tg, lambda: p.session.call_tool("get_current_time", {"timezone": "UTC"}))
        gate = (await p.held())[0]
        assert (gate["gate"], gate["reason"], gate["loop"]["repeats"]) == ("before", "loop", 2)
        await p.answer(gate, "continue")
    assert out["value"].structured_content["timezone"] == "UTC"


async def test_disabled_passes_every_call_through_and_records_nothing(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with proxy(hub, tmp_path, env={"GRAPHMIND_DISABLED": "1"}) as p:
        await p.debug(breakpoints=[{"nodeId": NODE, "gate": "before"}])
        result = await p.session.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.structured_content["timezone"] == "UTC"
    assert await p.runs() == []


async def test_hidden_results_are_not_quoted_into_the_error_under_the_proxy(
    hub: HubProcess, tmp_path: Path
) -> None:
    async with proxy(hub, tmp_path, env={"GRAPHMIND_HIDE_TOOL_RESULTS": "1"}) as p:
        await p.debug(pauseOnError="off")
        failed = await p.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        assert failed.is_error and "Mars/Olympus" in failed.content[0].text  # the host still gets it all
    run = (await _run_of(p, "finished"))[0]
    error = next(e for e in _events(hub, run["id"]) if e["type"] == "node.error")["error"]
    assert "Mars" not in error["message"] and "content is hidden" in error["message"]
