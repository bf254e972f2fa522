"""The two exceptions a replay raises (docs/replay.md)."""

from __future__ import annotations


class ReplayDivergence(Exception):
    """A call the recording does not match, under the `fail` policy: names the node, its
    occurrence and what differs (`node_id`, `occurrence`, `why`, `diff`)."""

    def __init__(self, node_id: str, occurrence: int, why: str, diff: str = "", source: str = "") -> None:
        self.node_id = node_id
        self.occurrence = occurrence
        self.why = why
        self.diff = diff
        self.source = source
        text = f"replay diverged at {node_id}#{occurrence}: {why}"
        if source:
            text += f" (recording: {source})"
        if diff:
            text += "\n" + diff
        super().__init__(text)


class UnrecordedWrite(ReplayDivergence):
    """A write call (docs/effects.md) the recording did not have, under a replay that must not run
    one (the pytest plugin's cassette replay): the test fails, even when the code under test catches it."""


class ReplayedError(Exception):
    """A recorded error replayed at its node, when the adapter cannot rebuild the framework's own
    exception type: `type_name` and `message` are the recorded ones."""

    def __init__(self, type_name: str, message: str) -> None:
        self.type_name = type_name
        self.message = message
        super().__init__(f"{type_name}: {message}" if type_name else message)


class CassetteError(ValueError):
    """A replay that cannot be set up (a cassette that cannot be read, a bad setting): one line
    naming the file or the setting and what is wrong."""
