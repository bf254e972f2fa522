"""pytest fixtures that run core's gate-matrix kit on both hubs: core's in-process FakeHub and the
real hub process (`graphmind serve`), driven as the viewer drives it (`KitHub`).

Every adapter's tests take them from here, so there is one copy. Import them into a conftest.py
(importing works in any conftest; `pytest_plugins` only in the rootdir's one):

    # packages/graphmind-<adapter>/tests/conftest.py
    from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401

    # tests/test_gate_matrix.py
    @pytest.mark.parametrize("case", CASES)
    async def test_gate_matrix(case, kit_hub):
        await run_case(case, MySubject(), hub=kit_hub)

`kit_hub` runs each test twice (ids `fake-hub` and `real-hub`). The hub process is started the first
time a `real-hub` test of a module needs it and serves the module's remaining cases: each case
enters its own `KitHub` (its own live feed and a reset debug state), so the cases do not see each
other, and one start (about a third of a second) is paid per module rather than per case.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

import graphmind
from graphmind.testing import FakeHub

from ._kit_hub import KitHub
from ._process import HubProcess

__all__ = ["KIT_FULL", "KIT_HUBS", "fakehub", "gm", "hub_process", "kit_default", "kit_hub"]

KIT_HUBS = ("fake-hub", "real-hub")  # the ids of kit_hub's parameters
# The nox matrix cells set this: every case on every hub and subject. The default run (`uv run pytest`)
# takes each case once per subject, on one hub (`kit_default`).
KIT_FULL = os.environ.get("GRAPHMIND_KIT_FULL") == "1"


def kit_default(case: str, hub: Callable[[], KitHub] | None, subject: int = 0) -> None:
    """For a kit too big for the default run: skips `case` on the hub the default run leaves to the
    nox matrix cell (GRAPHMIND_KIT_FULL=1). Each case (its sync and async forms together) runs on
    one hub, the next case on the other, and subject `n` starts on the other hub than subject
    `n - 1`: every case of the kit still runs once per subject (call kind), and every case meets the
    real hub in some subject when there are two."""
    if KIT_FULL:
        return
    from graphmind.testing.gate_matrix import CASES

    kinds = list(
        dict.fromkeys(c.removesuffix("_async") for c in CASES)
    )  # a case and its async form: one kind
    real = (kinds.index(case.removesuffix("_async")) + subject) % 2 == 1
    if real != (hub is not None):
        pytest.skip(
            f"on the {'real' if real else 'fake'} hub in the default run (GRAPHMIND_KIT_FULL=1: both)"
        )


@pytest.fixture(scope="module")
def hub_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One real hub process (on a fresh database, an ephemeral loopback port) for the test module.
    A traceback in its stderr fails the module's last test at teardown: the hub must not crash on
    anything the kit sends it."""
    with HubProcess(tmp_path_factory.mktemp("hub") / "hub.db") as process:
        yield process
    assert "Traceback" not in process.stderr, process.stderr


@pytest.fixture(params=KIT_HUBS)
def kit_hub(request: pytest.FixtureRequest) -> Callable[[], KitHub] | None:
    """`run_case(..., hub=kit_hub)`: None runs the case on the kit's own FakeHub; else a factory of
    a fresh `KitHub` over the module's `hub_process`."""
    if request.param == "fake-hub":
        return None
    process: HubProcess = request.getfixturevalue("hub_process")
    return lambda: KitHub(process)


@pytest.fixture
def fakehub() -> Iterator[FakeHub]:
    """Core's in-process hub, for an adapter's own tests."""
    with FakeHub() as hub:
        yield hub


@pytest.fixture
def gm(fakehub: FakeHub) -> Iterator[graphmind.Client]:
    """A session attached to `fakehub` (quick reconnects), disposed after the test."""
    client = graphmind.Client(app="adapter-tests", url=fakehub.url, retry_interval=0.2)
    assert client.ready(5)
    yield client
    client.dispose()
