"""`StepTracker.next_step` builds its StepIdentity without the dataclass __init__ (_steps.py): the
object must be the very same kind of value one built the ordinary way is."""

from __future__ import annotations

import dataclasses

import pytest

from graphmind._runs.steps import StepIdentity, StepTracker


def test_a_tracked_step_identity_is_an_ordinary_frozen_step_identity() -> None:
    tracker = StepTracker()
    first = tracker.next_step("system: be brief", 1)
    second = tracker.next_step("system: be brief", 3)
    assert type(first) is StepIdentity
    assert first == StepIdentity(f"{first.invocation_id}:s1", first.invocation_id, 1)
    assert second == StepIdentity(f"{first.invocation_id}:s2", first.invocation_id, 2)
    assert hash(second) == hash(StepIdentity(second.instance_id, second.invocation_id, 2))
    assert repr(first) == repr(StepIdentity(first.instance_id, first.invocation_id, 1))
    assert first.first_step and not second.first_step
    assert dataclasses.astuple(second) == (second.instance_id, second.invocation_id, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.step = 5  # type: ignore[misc]
