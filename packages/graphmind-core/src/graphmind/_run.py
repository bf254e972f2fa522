"""A run: one `agent:<name>` node, one abort flag, the scope that groups model steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._ids import random_hex
from ._steps import StepTracker


@dataclass(eq=False)
class RunContext:
    """What `client.run(...)` yields. It works the same whether GraphMind is enabled or not."""

    name: str
    run_id: str = field(default_factory=random_hex)
    meta: dict[str, Any] = field(default_factory=dict)
    implicit: bool = False
    started_ms: float = 0.0
    # A plain flag: written once (False -> True) by whichever thread aborts, read on every gate.
    _aborted: bool = field(default=False, repr=False)
    steps: StepTracker = field(default_factory=StepTracker, repr=False)

    @property
    def aborted(self) -> bool:
        """True once the run was aborted from the debugger: your loop can check it and stop early."""
        return self._aborted

    @property
    def node_id(self) -> str:
        return f"agent:{self.name}"

    def mark_aborted(self) -> None:
        self._aborted = True
