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
        f"{MARKER}(cassette=PATH, ignore_keys=[...]): replay (or record) this test's GraphMind calls "
        "from a cassette (docs/testing.md)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", None)
        if item.get_closest_marker(MARKER) is not None and isinstance(names, list) and FIXTURE not in names:
            names.insert(0, FIXTURE)


@dataclass
class GraphmindCassette:
    """What the fixture gives a test: the cassette, the mode, and the client (the default one)."""

    path: Path
    mode: str
    recording: bool
    replaying: bool
    client: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)


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
    options: dict[str, Any] = {}
    if replaying:
        policy = "live" if mode == "new_episodes" else "fail"
        options["replay"] = {"source": path, "on_divergence": policy, "ignore_keys": ignore}
    state = GraphmindCassette(path, mode, recording, replaying)
    client = graphmind.Client(app=request.node.path.stem, **options)
    if recording:
        client._tap = state.events.append
    state.client = client
    previous = graphmind._default
    graphmind._default = client  # the session adapters use when given none
    request.node._graphmind_client = client
    try:
        yield state
    finally:
        graphmind._default = previous
        client.dispose()
        failed = getattr(request.node, "_graphmind_failed", False)
        if recording and state.events and not failed:
            from graphmind._replay.cassette import write_cassette

            write_cassette(path, client.client_id, state.events)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and report.failed:
        item._graphmind_failed = True  # type: ignore[attr-defined]  # a failed recording is not written
        client = getattr(item, "_graphmind_client", None)
        link = _run_link(client)
        if link:
            report.sections.append(("graphmind", f"the run in the viewer: {link}"))
    return report


def _run_link(client: Any) -> str | None:
    if client is None or not client.attached:
        return None
    run = client._runs.implicit_run
    url = str(client.options.url)
    if run is None or not url.startswith(("ws://", "wss://")):
        return None
    base = url.replace("ws", "http", 1).rsplit("/ingest", 1)[0]
    return f"{base}/#/run/{run.run_id}"
