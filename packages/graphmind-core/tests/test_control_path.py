"""The control path stays bounded (issue 29): a frame the app cannot parse is ignored (a held gate
stays held), `error` frames cost one line per code per interval and a bounded number of codes,
`pause` requests for runs this app does not have are not kept."""

from __future__ import annotations

import logging
import threading

import pytest

import graphmind
from graphmind import protocol
from graphmind._hub.control import ERROR_CODES_MAX
from graphmind.testing import FakeHub


def test_a_frame_nested_too_deep_is_ignored_and_a_held_gate_stays_held() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            hub.set_debug(breakpoints=[("tool:held", "before")])
            tool = client.wrap(lambda: "ran", name="held")
            out: list[str] = []
            thread = threading.Thread(target=lambda: out.append(tool()), daemon=True)
            with client.run("r"):
                thread.start()
                paused = hub.next_paused()
                deep = '{"type":"debug.state","x":' + "[" * 100_000 + "]" * 100_000 + "}"

                async def send_raw() -> None:
                    for ws in list(hub._connections):
                        await ws.send(deep)

                import asyncio

                asyncio.run_coroutine_threadsafe(send_raw(), hub._loop).result(5)
                hub.set_debug(mode="run")  # acked: the deep frame before it was read and ignored
                assert client.attached and client.stats()["held"] == 1
                hub.resolve(paused["gateId"], "continue")
                thread.join(5)
            assert out == ["ran"]
        finally:
            client.dispose()


def test_error_frames_with_many_codes_cost_a_bounded_number_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            caplog.set_level(logging.WARNING, logger="graphmind")
            for i in range(300):
                hub._broadcast({"type": protocol.ERROR, "code": f"code-{i}", "message": "x"})
            for _ in range(50):
                hub._broadcast({"type": protocol.ERROR, "code": "code-0", "message": "again"})
            hub.set_debug(mode="run")
            lines = [r for r in caplog.records if "the hub reported" in r.getMessage()]
            assert len(lines) == ERROR_CODES_MAX + 1, len(lines)
        finally:
            client.dispose()


def test_pause_requests_for_runs_this_app_does_not_have_are_not_kept() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            for i in range(2000):
                hub._broadcast({"type": protocol.PAUSE, "runId": f"someone-elses-{i}"})
            hub.set_debug(mode="run")
            assert len(client._hub._pause_runs) == 0
            with client.run("mine") as run:
                hub._broadcast({"type": protocol.PAUSE, "runId": run.run_id})
                hub.set_debug(mode="run")
                assert client._hub._pause_runs == {run.run_id}
        finally:
            client.dispose()
