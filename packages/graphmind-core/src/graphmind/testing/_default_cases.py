"""The gate matrix's default-session case: a thing instrumented with no `session=` before the app
calls `graphmind.configure(...)` (at import, the usual layout) reports to the client `configure`
builds, holds at its breakpoints and at its error gate there (graphmind/_api/default.py)."""

from __future__ import annotations

import graphmind

from .. import protocol as proto
from ._case import Case
from ._kill_switch import no_default_client
from ._registry import _case


@_case
async def configured_later(c: Case) -> None:
    with no_default_client():
        thing = c.subject.instrument(c.subject.make(), None)  # type: ignore[arg-type]  # None: the default session
        assert graphmind._default is None, "instrumenting built a default client before configure()"
        assert graphmind.configure(app="gate-matrix-later", url=c.hub.url, retry_interval=0.2).ready(5)
        c.break_on(proto.BEFORE, (proto.INJECT, c.subject.injected))
        c.subject.check_injected(c.subject.call(thing), c.subject.injected)
        assert c.subject.real_calls == 0, "the breakpoint did not hold the call before configure's client"
        c.break_on(proto.ERROR_GATE, (proto.RETRY, None))
        c.subject.fail_next()
        c.subject.check_real(await c.subject.acall(thing))
        assert c.subject.real_calls == 2, "the error did not hold at the error gate (retried once)"
        started = c.events(proto.NODE_STARTED)
        assert len(started) == 2, f"two calls, two nodes on the configured client (got {len(started)})"
        assert [e["gate"] for e in c.events(proto.EXEC_PAUSED)] == [proto.BEFORE, proto.ERROR_GATE]
