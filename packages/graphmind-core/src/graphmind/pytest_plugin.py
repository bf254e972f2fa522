"""GraphMind's pytest plugin (docs/testing.md): a recorded run as a regression test.

Registered as a `pytest11` entry point of graphmind-core and inactive unless used: a test marked
`@pytest.mark.graphmind(cassette="cassettes/test_x.jsonl", ignore_keys=[...])`, or one that asks for
the `graphmind_cassette` fixture, gets a process-wide default client (`graphmind.get_client()`, what
adapters instrumented without `session=` use) that replays the cassette, records it, or both, as
`--graphmind-record-mode` says (VCR.py's meanings):

- `none` (the default, for CI): replay only; any divergence fails the test (`ReplayDivergence`);
  a missing cassette fails it too.
- `once`: replay an existing cassette as `none` does; record one that is missing.
- `new_episodes`: replay what matches, run the rest live (on_divergence=live), and write the run
  as the new cassette.
- `all`: run live and record the cassette again.

Nothing but this module is imported at pytest start; graphmind itself only when a test uses it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MODES = ("none", "once", "new_episodes", "all")
MARKER = "graphmind"
FIXTURE = "graphmind_cassette"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphmind")
    group.addoption(
        "--graphmind-record-mode",
        choices=MODES,
        default=None,
        help="how tests marked @pytest.mark.graphmind use their cassette: none (replay only, the default), "
        "once (record a missing one), new_episodes (replay what matches, record the rest), all (re-record)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(cassette=PATH, ignore_keys=[...], live=False): replay (or record) this test's GraphMind calls "
        "from a cassette (docs/testing.md)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", None)
        if item.get_closest_marker(MARKER) is not None and isinstance(names, list) and FIXTURE not in names:
            names.insert(0, FIXTURE)


@dataclass
class GraphmindCassette:
    """What the fixture gives a test: the cassette, the mode, and the client (the default one now)."""

    path: Path
    mode: str
    recording: bool
    replaying: bool
    client: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)


class _TestSession:
    """The default session while one test runs: the first client, and every client the code under
    test builds with `graphmind.configure(...)` (its options apply), replay and record into the
    same cassette. Notes each call and run it sees, for the report (`_nothing_recorded`, `_run_links`)."""

    def __init__(self, state: GraphmindCassette, replay: Any) -> None:
        self.state = state
        self.replay = replay  # the `replay=` option every client of the test gets (None: record only)
        self.clients: list[Any] = []
        self.calls = 0
        self.runs: list[tuple[str, Any]] = []  # (run id, its client), in the order they started

    def make(self, app: str | None = None, **options: Any) -> Any:
        import graphmind

        if self.replay is not None:
            options["replay"] = self.replay
        client = graphmind.Client(app, **options)
        if self.replay is not None and client._replay is not None:
            self.replay = client._replay  # the next client goes on matching where this one is
        client._tap = lambda event: self._tap(client, event)
        self.clients.append(client)
        self.state.client = client
        return client

    def _tap(self, client: Any, event: dict[str, Any]) -> None:
        if self.state.recording:
            self.state.events.append(event)
        kind = event.get("type")
        if kind == "node.started":
            self.calls += 1
        elif kind == "run.started":
            self.runs.append((str(event.get("runId")), client))


def _mode(config: pytest.Config) -> str:
    return str(
        config.getoption("--graphmind-record-mode") or os.environ.get("GRAPHMIND_RECORD_MODE") or "none"
    )


def _path(request: pytest.FixtureRequest, marker: pytest.Mark | None) -> Path:
    given = marker.kwargs.get("cassette") if marker is not None else None
    if given is None and marker is not None and marker.args:
        given = marker.args[0]
    base = Path(str(request.node.path)).parent
    if given is None:
        name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
        return base / "cassettes" / f"{request.node.path.stem}.{name}.jsonl"
    path = Path(os.fspath(given))
    return path if path.is_absolute() else base / path


@pytest.fixture
def graphmind_cassette(request: pytest.FixtureRequest) -> Iterator[GraphmindCassette]:
    import graphmind

    marker = request.node.get_closest_marker(MARKER)
    mode = _mode(request.config)
    if mode not in MODES:
        raise pytest.UsageError(f"GRAPHMIND_RECORD_MODE must be one of {', '.join(MODES)} (got {mode!r})")
    path = _path(request, marker)
    exists = path.is_file()
    if mode == "none" and not exists:
        pytest.fail(
            f"graphmind: no cassette {path}; record it once with --graphmind-record-mode=once "
            "(against a live or fake provider) and commit it",
            pytrace=False,
        )
    replaying = exists and mode in ("none", "once", "new_episodes")
    recording = mode in ("new_episodes", "all") or (mode == "once" and not exists)
    ignore = list(marker.kwargs.get("ignore_keys", ())) if marker is not None else []
    live = marker is not None and marker.kwargs.get("live") is True
    replay = None
    if replaying:
        # A write call the recording did not have fails the test, unless it is marked live=True
        # (docs/effects.md): a replayed test never refunds, books or sends for real by surprise.
        policy = "live" if mode == "new_episodes" or live else "fail"
        safe = "off" if live else "fail"
        replay = {"source": path, "on_divergence": policy, "ignore_keys": ignore, "safe": safe}
    state = GraphmindCassette(path, mode, recording, replaying)
    session = _TestSession(state, replay)
    previous, previous_make = graphmind._default, graphmind._make
    # A default the test module configured (at its import) keeps its options for the test.
    inherited: dict[str, Any] = {}
    app = request.node.path.stem
    if previous is not None and previous.live and previous.options.raw:
        inherited, app = dict(previous.options.raw), previous.app
    client = session.make(app, **inherited)
    with graphmind._default_lock:
        graphmind._default = client  # the session adapters (and graphmind.tool / run / ...) use
    graphmind._make = session.make  # `configure()` in the code under test: its options, our recording
    request.node._graphmind_session = session
    try:
        yield state
    finally:
        graphmind._make = previous_make
        with graphmind._default_lock:
            graphmind._default = previous
        for made in session.clients:
            made.dispose()
        failed = getattr(request.node, "_graphmind_failed", False)
        if recording and state.events and not failed:
            from graphmind._replay.cassette import write_cassette

            write_cassette(path, session.clients[0].client_id, state.events)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    session = getattr(item, "_graphmind_session", None)
    if call.when != "call" or session is None:
        return report
    unrecorded = [f for f in getattr(session.replay, "failures", ()) if type(f).__name__ == "UnrecordedWrite"]
    if report.passed and unrecorded:  # a write the recording did not have, which the code under test caught
        report.outcome = "failed"
        report.longrepr = f"graphmind: {unrecorded[0]}"
    if report.passed and item.get_closest_marker(MARKER) is not None:
        why = _nothing_recorded(session)
        if why is not None:  # a passing test that checked nothing must not look like a regression test
            report.outcome = "failed"
            report.longrepr = why
    if report.failed:
        item._graphmind_failed = True  # type: ignore[attr-defined]  # a failed recording is not written
        links = _run_links(session)
        if links:
            report.sections.append(
                ("graphmind", "\n".join(f"the run in the viewer: {link}" for link in links))
            )
    return report


def _nothing_recorded(session: _TestSession) -> str | None:
    """One line when a marked test made no call through the default session (None otherwise)."""
    if session.calls:
        return None
    state = session.state
    if state.recording:
        done = f"recorded no call, so no cassette was written to {state.path}"
    else:
        done = f"replayed no call of {state.path}"
    return (
        f"graphmind: this test is marked for a cassette but {done}: no model or tool call reached "
        "the default session (a client the test builds with graphmind.Client(...) or passes as "
        "session= is not recorded: use graphmind.configure(...) instead)"
    )


def _run_links(session: _TestSession) -> list[str]:
    """The viewer link of each run the test started on a client attached to a hub."""
    links = []
    for run_id, client in session.runs:
        url = str(client.options.url)
        if client.attached and url.startswith(("ws://", "wss://")):
            base = url.replace("ws", "http", 1).rsplit("/ingest", 1)[0]
            links.append(f"{base}/#/run/{run_id}")
    return links
