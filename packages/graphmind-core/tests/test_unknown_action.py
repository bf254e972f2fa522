"""An answer this engine does not know (a hub newer than the app sends an action it has no rule for)
is continue, said once (_node/decide.py, `normalized`): the call runs, the app is not broken."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import graphmind
from graphmind.testing import FakeHub


def test_an_unknown_action_is_continue_with_one_warning(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[int] = []

    @client.tool(breakpoint="before")
    def refund(amount: int) -> int:
        ran.append(amount)
        return amount

    result: list[Any] = []
    with caplog.at_level(logging.WARNING, logger="graphmind"):
        worker = threading.Thread(target=lambda: result.append(refund(7)))
        worker.start()
        hub.wait_for(lambda: bool(hub.of_type("exec.paused")))
        paused = hub.of_type("exec.paused")[0]
        hub.resolve(paused["gateId"], "teleport", "ignored")
        worker.join(5)
    assert result == [7] and ran == [7], "the body ran, as at continue"
    hub.wait_for(lambda: bool(hub.of_type("exec.resumed")))
    resumed = hub.of_type("exec.resumed")[0]
    assert resumed["action"] == "continue"
    assert "unknown gate action 'teleport'; continuing" in caplog.text
