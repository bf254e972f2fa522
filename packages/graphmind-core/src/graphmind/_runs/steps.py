"""Model steps grouped into invocations (docs/protocol.md, "Model step identity").

Within one run, a step whose prompt starts with the same first message as the previous step and has
grown continues that invocation (`<invocationId>:s2`, `:s3`, …); anything else starts a new one.
Every model adapter uses this, so `llm:step` instance ids mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._base import forksafe
from .._base.ids import random_hex


@dataclass(frozen=True, slots=True)
class StepIdentity:
    instance_id: str
    invocation_id: str
    step: int

    @property
    def first_step(self) -> bool:
        return self.step == 1


# A StepIdentity without the frozen dataclass's __init__ (an object.__setattr__ call per field, about
# 0.7 µs per model step): the slots are written through their descriptors. Same class, still frozen.
_new = object.__new__
_set_instance_id = StepIdentity.__dict__["instance_id"].__set__
_set_invocation_id = StepIdentity.__dict__["invocation_id"].__set__
_set_step = StepIdentity.__dict__["step"].__set__


def _step_identity(invocation: str, step: int) -> StepIdentity:
    identity: StepIdentity = _new(StepIdentity)
    _set_instance_id(identity, f"{invocation}:s{step}")
    _set_invocation_id(identity, invocation)
    _set_step(identity, step)
    return identity


class StepTracker:
    def __init__(self) -> None:
        self._lock = forksafe.lock()
        self._first_key: str | None = None
        self._length = -1
        self._invocation = ""
        self._step = 0

    def next_step(self, first_message_key: str, prompt_length: int) -> StepIdentity:
        """`first_message_key`: any stable text for the first message; `prompt_length`: message count."""
        with self._lock:
            if first_message_key == self._first_key and prompt_length > self._length and self._invocation:
                self._step += 1
            else:
                self._invocation = random_hex(48)
                self._step = 1
            self._first_key = first_message_key
            self._length = prompt_length
            return _step_identity(self._invocation, self._step)
