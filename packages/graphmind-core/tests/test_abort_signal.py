"""A run's abort reaches work in flight (issue 16 item 7): an Event and an awaitable on RunContext."""

from __future__ import annotations

import asyncio
import threading

import pytest

import graphmind
from graphmind.testing import FakeHub


def test_an_abort_from_the_hub_stops_a_long_tool_waiting_on_the_event(
    hub: FakeHub, client: graphmind.Client
) -> None:
    started = threading.Event()
    outcome: list[object] = []

    @client.tool
    def long_job() -> str:
        run = client.current_run()
        assert run is not None
        started.set()
        # A long job that checks the signal instead of sleeping its full course.
        result = "stopped early" if run.abort_event.wait(10) else "ran to the end"
        outcome.append(result)
        return result

    def agent() -> None:
        try:
            with client.run("long") as run:
                runs.append(run)
                outcome.append(long_job())
        except graphmind.RunAborted as exc:
            outcome.append(exc)

    runs: list[graphmind.RunContext] = []
    worker = threading.Thread(target=agent)
    worker.start()
    assert started.wait(10)
    hub.abort_run(runs[0].run_id)
    worker.join(10)
    assert not worker.is_alive()
    # The tool saw the signal at once; its caller then gets RunAborted (the run is over).
    assert outcome[0] == "stopped early"
    assert isinstance(outcome[1], graphmind.RunAborted)
    assert runs[0].aborted and runs[0].abort_event.is_set()


def test_wait_aborted_wakes_a_task_when_another_thread_aborts() -> None:
    run = graphmind.RunContext(name="r")

    async def main() -> str:
        async def work() -> str:
            await asyncio.sleep(30)
            return "done"

        work_task = asyncio.ensure_future(work())
        abort_task = asyncio.ensure_future(run.wait_aborted())
        threading.Thread(target=run.mark_aborted).start()
        done, _ = await asyncio.wait({work_task, abort_task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        work_task.cancel()
        return "aborted" if abort_task in done else "timed out"

    assert asyncio.run(main()) == "aborted"
    assert run._abort_waiters == []


def test_wait_aborted_returns_at_once_after_an_abort_and_cancels_cleanly() -> None:
    run = graphmind.RunContext(name="r")

    async def cancelled_wait() -> None:
        task = asyncio.ensure_future(run.wait_aborted())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_wait())
    assert run._abort_waiters == []
    run.mark_aborted()
    asyncio.run(asyncio.wait_for(run.wait_aborted(), 5))


def test_a_disabled_run_still_hands_out_a_working_signal() -> None:
    client = graphmind.Client(environ={"GRAPHMIND_DISABLED": "1"})
    with client.run("off") as run:
        assert isinstance(run.abort_event, threading.Event)
        assert not run.abort_event.is_set()
        run.mark_aborted()
        assert run.abort_event.is_set()
