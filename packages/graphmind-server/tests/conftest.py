"""Fixtures for the hub's own tests: an in-process hub on an ephemeral port, and API helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.hub.config import Settings
from graphmind_server.serve import HubHandle, start_in_thread
from graphmind_server.testing import FakeApp, api_call, wait_for


class ThreadHub:
    """A hub on a background thread, with the same helpers as HubProcess."""

    def __init__(self, db: Path, **settings: Any) -> None:
        self.db = db
        self.settings = settings
        self.handle: HubHandle = self._start(0)
        self.apps: list[FakeApp] = []

    def _start(self, port: int) -> HubHandle:
        return start_in_thread(settings=Settings(port=port, db=self.db, **self.settings))

    @property
    def port(self) -> int:
        return self.handle.port

    @property
    def url(self) -> str:
        return self.handle.url

    @property
    def ingest_url(self) -> str:
        return self.handle.ingest_url

    @property
    def live_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/api/live"

    def api(self, method: str, path: str, json: Any = None, **kw: Any) -> tuple[int, Any]:
        return api_call(self.url, method, path, json, **kw)

    def app(self, **kw: Any) -> FakeApp:
        app = FakeApp(self.ingest_url, **kw)
        self.apps.append(app)
        return app

    def restart(self) -> None:
        port = self.port
        self.handle.stop()
        self.handle = self._start(port)

    def stop(self) -> None:
        for app in self.apps:
            app.close()
        self.handle.stop()

    def wait_for(self, check: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
        return wait_for(check, timeout, what)

    def gates(self) -> list[dict[str, Any]]:
        return self.api("GET", "/api/gates")[1]["gates"]


@pytest.fixture
def make_hub(tmp_path: Path) -> Iterator[Callable[..., ThreadHub]]:
    hubs: list[ThreadHub] = []

    def make(**settings: Any) -> ThreadHub:
        hub = ThreadHub(settings.pop("db", tmp_path / "hub.db"), **settings)
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        hub.stop()


@pytest.fixture
def thub(make_hub: Callable[..., ThreadHub]) -> ThreadHub:
    return make_hub()


@pytest.fixture(scope="session")
def export_fixture() -> Any:
    """tests/export_fixture.py (a recorded run with nested secrets), for the export tests."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "export_fixture", Path(__file__).parent / "export_fixture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def otlp() -> Any:
    """tests/otlp_helpers.py (post OTLP bodies, read a run back as a graph), for the /v1/traces tests."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("otlp_helpers", Path(__file__).parent / "otlp_helpers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
