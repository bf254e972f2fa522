"""Holds asked for from code: `breakpoint=` on a gated callable, the `breakpoints=[...]` client
option for adapter nodes, and `hold_if=` conditions on a call's arguments.

They hold only while a hub is attached, like every other hold, and never change the hub's debug
state: the person's breakpoints stay theirs. A gate held from code says so on the wire
(`exec.paused` with `reason: "breakpoint", source: "code"`, or `reason: "condition", why: ...`), so
the card can say why it held. A condition runs in the app, at the before gate, with the call's bound
arguments as keyword arguments; one that raises is warned about once and does not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._base import forksafe
from ..protocol import AFTER, BEFORE, ERROR_GATE, GATES

BreakpointArg = bool | str | Iterable[str] | None
Condition = Callable[..., Any]

CONDITION_REASON = "condition"


def gates_of(breakpoint: BreakpointArg, where: str = "breakpoint") -> frozenset[str]:
    """`True` or `"before"` -> {before}; `"after"`, `"error"`, or several: `("before", "error")`."""
    if breakpoint is None or breakpoint is False:
        return frozenset()
    if breakpoint is True:
        return frozenset({BEFORE})
    names = [breakpoint] if isinstance(breakpoint, str) else breakpoint
    try:
        gates = frozenset(names)
    except TypeError:
        gates = frozenset({repr(breakpoint)})
    bad = sorted(str(g) for g in gates if g not in GATES)
    if bad or not gates:
        raise ValueError(
            f"graphmind: {where}={breakpoint!r} is not a gate; use True, {BEFORE!r}, {AFTER!r}, "
            f"{ERROR_GATE!r} or a list of them"
        )
    return gates


def client_breakpoints(option: Any) -> dict[str, frozenset[str]]:
    """The `breakpoints=[...]` client option: node ids (`"llm:step"`, a before gate), or
    `("llm:step", "after")` / `{"nodeId": "llm:step", "gate": "after"}` for another gate."""
    if option is None:
        return {}
    if isinstance(option, (str, Mapping)) or not isinstance(option, Iterable):
        option = [option]
    table: dict[str, set[str]] = {}
    node_id: Any
    gate: Any
    for entry in option:
        if isinstance(entry, str):
            node_id, gate = entry, BEFORE
        elif isinstance(entry, Mapping):
            node_id, gate = entry.get("nodeId"), entry.get("gate", BEFORE)
        elif isinstance(entry, (tuple, list)) and len(entry) == 2:
            node_id, gate = entry
        else:
            node_id, gate = None, None
        if not isinstance(node_id, str) or ":" not in node_id or gate not in GATES:
            raise ValueError(
                f"graphmind: option breakpoints has {entry!r}; each entry is a node id such as "
                f"'llm:step' or 'tool:book', or (node id, gate) with gate one of {', '.join(GATES)}"
            )
        table.setdefault(node_id, set()).add(gate)
    return {node_id: frozenset(gates) for node_id, gates in table.items()}


@dataclass(frozen=True, slots=True)
class CodeHolds:
    """What a gated callable asked for: gates to hold at, and a condition on its arguments."""

    gates: frozenset[str] = frozenset()
    hold_if: Condition | None = None

    @classmethod
    def of(cls, breakpoint: BreakpointArg, hold_if: Condition | None) -> CodeHolds | None:
        gates = gates_of(breakpoint)
        if hold_if is not None and not callable(hold_if):
            raise TypeError(
                f"graphmind: hold_if must be a callable that takes the call's arguments, got {hold_if!r}"
            )
        return cls(gates, hold_if) if gates or hold_if is not None else None


class ConditionChecker:
    """Runs `hold_if` conditions for one client; a raising condition is warned about once."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._warned: set[int] = set()
        self._lock = forksafe.lock()

    def why(
        self, condition: Condition, name: str, arguments: Mapping[str, Any], agent: str | None = None
    ) -> str | None:
        """None: do not hold. Otherwise the reason shown on the card ("condition" for True).
        `agent`: the agent the call ran in, passed as `agent=` to a condition that takes it (a
        parameter of that name, or `**kwargs`) unless the call has an argument of that name."""
        try:
            if agent is not None and "agent" not in arguments and _takes_agent(condition):
                arguments = {**arguments, "agent": agent}
            verdict = condition(**arguments)
            if isinstance(verdict, str):
                return verdict or None
            return CONDITION_REASON if bool(verdict) else None
        except Exception as exc:  # a bug in the condition must not break the call it watches
            with self._lock:
                first = id(condition) not in self._warned
                self._warned.add(id(condition))
            if first:
                self._warn(
                    f"[graphmind] hold_if of {name} raised {type(exc).__name__}: {exc}; the call goes on "
                    "without holding (this is said once per condition); fix the condition, which gets "
                    "the call's arguments as keyword arguments"
                )
            return None


def _takes_agent(condition: Condition) -> bool:
    """Whether `condition` accepts an `agent=` keyword (asked only for a call that ran in an agent)."""
    import inspect

    try:
        params = inspect.signature(condition).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it the arguments only
        return False
    return any(
        (p.name == "agent" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) or p.kind == p.VAR_KEYWORD
        for p in params
    )
