"""The gate matrix's replay cases (docs/replay.md, docs/adapters.md "Replay"): every adapter replays
through its own inject conversion, so a recording of its call answers the same call again.

Each case records the subject's call through the case's client (one real call), writes the hub's
events as a cassette (`graphmind record`'s format), and makes the call again through a second
client that replays it: a fresh instrumented thing, the same hub.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from .. import protocol as proto
from .._api.client import Client
from .._replay.cassette import write_cassette
from .._replay.errors import ReplayDivergence, ReplayedError
from ._case import Case, astream_items, in_thread

_ENDINGS = (proto.NODE_FINISHED, proto.NODE_ERROR)
DIFFERENT = {"graphmind-kit": "an input the call does not have"}


async def _record(c: Case, is_async: bool, *, fail: bool = False, stream: bool = False) -> Any:
    """One real call through the case's client; returns what the app got (or raised)."""
    if fail:
        c.subject.fail_next()
    try:
        if stream:
            result: Any = await _stream(c, c.thing, is_async)
        else:
            result = await c.call(is_async)
    except Exception as exc:
        if not fail:
            raise
        result = exc
    await c.wait_node_end()
    await c.settled()
    return result


async def _stream(c: Case, thing: Any, is_async: bool) -> list[Any]:
    if is_async:
        items, _ = await astream_items(c.subject, thing)
        return items
    return list(c.subject.stream(thing))


@contextlib.contextmanager
def _cassette(c: Case, change_input: bool = False) -> Iterator[Path]:
    """The hub's events so far as a cassette file; `change_input`: the subject's node recorded with
    another input (so the same call diverges)."""
    events = [dict(e) for e in c.hub.events]
    if change_input:
        for event in events:
            if event.get("type") == proto.NODE_STARTED and event.get("nodeId") == c.node_id:
                event["input"] = DIFFERENT
    folder = Path(tempfile.mkdtemp(prefix="graphmind-kit-"))
    try:
        path = folder / "cassette.jsonl"
        write_cassette(path, c.client.client_id, events)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def _replaying(c: Case, path: Path, **replay: Any) -> AsyncIterator[Any]:
    """A second client replaying `path`, and a fresh thing instrumented with it (the case's thing is
    undone first: a subject whose `make` hands back the same object, an MCP session, gets it back bare)."""
    client = Client(app="gate-matrix-replay", url=c.hub.url, retry_interval=0.2, replay={"source": path, **replay})
    thing = None
    try:
        if not await in_thread(client.ready, 5):
            raise AssertionError("the replaying client did not attach to the hub")
        c.subject.undo(c.thing)
        thing = c.subject.instrument(c.subject.make(), client)
        yield thing
    finally:
        if thing is not None:
            c.subject.undo(thing)
        await in_thread(client.dispose)


async def _call(c: Case, thing: Any, is_async: bool) -> Any:
    return await c.subject.acall(thing) if is_async else c.subject.call(thing)


async def _replayed_end(c: Case) -> dict[str, Any]:
    return await in_thread(
        c.hub.wait_event,
        lambda e: e.get("nodeId") == c.node_id and e.get("type") in _ENDINGS and e.get("replayed") is True,
    )


async def _match(c: Case, is_async: bool) -> None:
    await _record(c, is_async)
    calls = c.subject.real_calls
    with _cassette(c) as path:
        async with _replaying(c, path, on_divergence="fail") as thing:
            result = await _call(c, thing, is_async)
    c.subject.check_real(result)
    assert c.subject.real_calls == calls, "a replayed call must not reach the real thing"
    end = await _replayed_end(c)
    assert end["type"] == proto.NODE_FINISHED and "injected" not in end
    replays = [e for e in c.hub.of_type(proto.RUN_STARTED) if e.get("replayOf")]
    assert replays, "the replayed run names the recorded run (replayOf)"


async def replay_match(c: Case) -> None:
    await _match(c, False)


async def replay_match_async(c: Case) -> None:
    await _match(c, True)


async def _diverge(c: Case, is_async: bool, policy: str) -> None:
    await _record(c, is_async)
    calls = c.subject.real_calls
    with _cassette(c, change_input=True) as path:
        async with _replaying(c, path, on_divergence=policy) as thing:
            if policy == "fail":
                try:
                    await _call(c, thing, is_async)
                except ReplayDivergence as exc:
                    assert exc.node_id == c.node_id and exc.occurrence == 1, exc
                else:
                    raise AssertionError("on_divergence=fail must raise ReplayDivergence")
                assert c.subject.real_calls == calls
                return
            if policy == "hold":
                c.hub.auto_answer(lambda _e: (proto.RECORDED, None))
            result = await _call(c, thing, is_async)
    c.subject.check_real(result)
    if policy == "live":
        assert c.subject.real_calls == calls + 1, "on_divergence=live runs the call"
        return
    assert c.subject.real_calls == calls, "`recorded` at a held divergence hands back the recording"
    held = [e for e in c.events(proto.EXEC_PAUSED) if e.get("reason") == proto.DIVERGENCE]
    assert len(held) == 1 and held[0]["expected"] == DIFFERENT, held
    assert held[0]["replay"]["occurrence"] == 1 and proto.RECORDED in held[0]["actions"]
    await _replayed_end(c)


async def replay_divergence_fail(c: Case) -> None:
    await _diverge(c, False, "fail")


async def replay_divergence_fail_async(c: Case) -> None:
    await _diverge(c, True, "fail")


async def replay_divergence_live(c: Case) -> None:
    await _diverge(c, False, "live")


async def replay_divergence_live_async(c: Case) -> None:
    await _diverge(c, True, "live")


async def replay_divergence_hold(c: Case) -> None:
    await _diverge(c, False, "hold")


async def replay_divergence_hold_async(c: Case) -> None:
    await _diverge(c, True, "hold")


async def _recorded_error(c: Case, is_async: bool) -> None:
    recorded = await _record(c, is_async, fail=True)
    assert isinstance(recorded, c.subject.error_type), recorded
    calls = c.subject.real_calls
    with _cassette(c) as path:
        async with _replaying(c, path, on_divergence="fail") as thing:
            try:
                await _call(c, thing, is_async)
            except (c.subject.error_type, ReplayedError) as exc:
                if isinstance(exc, ReplayedError):
                    assert exc.type_name == type(recorded).__name__, (exc.type_name, recorded)
            else:
                raise AssertionError("a recorded error must replay as an error")
    assert c.subject.real_calls == calls
    end = await _replayed_end(c)
    assert end["type"] == proto.NODE_ERROR and end["error"]["name"] == type(recorded).__name__


async def replay_recorded_error(c: Case) -> None:
    await _recorded_error(c, False)


async def replay_recorded_error_async(c: Case) -> None:
    await _recorded_error(c, True)


async def _replay_stream(c: Case, is_async: bool) -> None:
    if not c.subject.streams:
        return
    await _record(c, is_async, stream=True)
    calls = c.subject.real_calls
    with _cassette(c) as path:
        async with _replaying(c, path, on_divergence="fail") as thing:
            items = await _stream(c, thing, is_async)
    c.subject.check_stream(items)
    assert c.subject.real_calls == calls, "a replayed stream must not reach the real thing"
    await _replayed_end(c)


async def replay_stream(c: Case) -> None:
    await _replay_stream(c, False)


async def replay_stream_async(c: Case) -> None:
    await _replay_stream(c, True)


async def _fork(c: Case, is_async: bool) -> None:
    await _record(c, is_async)
    calls = c.subject.real_calls
    with _cassette(c) as path:
        async with _replaying(c, path, fork=f"{c.node_id}#1", output=c.subject.injected) as thing:
            result = await _call(c, thing, is_async)
    c.subject.check_injected(result, c.subject.injected)
    assert c.subject.real_calls == calls
    forked = [e for e in c.hub.of_type(proto.RUN_STARTED) if e.get("forkedAt")]
    assert forked and forked[0]["forkedAt"] == f"{c.node_id}#1"


async def replay_fork_output(c: Case) -> None:
    await _fork(c, False)


async def replay_fork_output_async(c: Case) -> None:
    await _fork(c, True)


REPLAY_CASES: list[Callable[[Case], Awaitable[None]]] = [
    replay_match,
    replay_match_async,
    replay_divergence_fail,
    replay_divergence_fail_async,
    replay_divergence_live,
    replay_divergence_live_async,
    replay_divergence_hold,
    replay_divergence_hold_async,
    replay_recorded_error,
    replay_recorded_error_async,
    replay_stream,
    replay_stream_async,
    replay_fork_output,
    replay_fork_output_async,
]
