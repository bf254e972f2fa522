"""The two-agent cases of the shared kit, for an adapter whose framework has agents (docs/adapters.md,
"Agents"). An adapter opts in with a `TeamSubject`:

    from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case

    class Triage(TeamSubject):
        root, other = "triage", "billing"    # the fake provider scripts: triage hands off to billing
        ...                                  # make / instrument / undo / acall_team / other_model_calls

    @pytest.mark.parametrize("case", TEAM_CASES)
    async def test_team(case: str) -> None:
        await run_team_case(case, Triage())

One team call: the root agent makes at least one model step, then hands the work to the other agent
(a handoff, a transfer, a delegation through a tool), which makes at least one model step of its
own. The cases check core's rule (docs/protocol.md, "Agents"): two agents, `llm:step` for the root's
steps and `llm:step@<other>` for the other's, and, for a subject with `handoff = True`, one
`handoff:<root>-><other>` node whose gate edits and answers for the target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._api.client import Client
from .._runs.agents import handoff_node_id, step_node_id
from ._case import in_thread
from ._fakehub import Answer, FakeHub
from ._subject import Hub

__all__ = ["TEAM_CASES", "TeamSubject", "run_team_case"]


class TeamSubject:
    """What an adapter tells the kit about one team call. Override every method a case reaches."""

    root: str = "triage"  # the agent the call starts with (its steps keep `llm:step`)
    other: str = "billing"  # the agent it hands the work to
    handoff: bool = True  # the work passes through a handoff node (False: a delegation with no gate)
    injected: Any = "answered by the debugger"  # a JSON value injected at the handoff

    def make(self) -> Any:
        """A fresh team (the root agent, say), uninstrumented."""
        raise NotImplementedError

    def instrument(self, thing: Any, session: Client) -> Any:
        raise NotImplementedError

    def undo(self, thing: Any) -> None:
        raise NotImplementedError

    async def acall_team(self, thing: Any) -> Any:
        """One team call as an app makes it; returns what the app gets."""
        raise NotImplementedError

    @property
    def other_model_calls(self) -> int:
        """How many model requests the other agent sent to the (fake) provider."""
        raise NotImplementedError

    def edit_handoff(self, handed: Any) -> Any:
        """The edited handed-over input a person writes at the handoff's before gate (from its JSON)."""
        raise NotImplementedError(f"{type(self).__name__}.edit_handoff")

    def check_handoff_edited(self, edited: Any) -> None:
        """Asserts the other agent's first model request carried the edit."""
        raise NotImplementedError(f"{type(self).__name__}.check_handoff_edited")

    def check_injected(self, result: Any, value: Any) -> None:
        """Asserts the call finished with the injected value (the framework's own type)."""


class _TeamCase:
    def __init__(self, hub: Hub, client: Client, subject: TeamSubject) -> None:
        self.hub, self.client, self.subject = hub, client, subject
        self.thing = subject.instrument(subject.make(), client)
        self.other_step = step_node_id(subject.other)
        self.handoff_id = handoff_node_id(subject.root, subject.other)

    def answer(self, breakpoints: list[tuple[str, str]], answer: Callable[[dict[str, Any]], Answer]) -> None:
        self.hub.auto_answer(answer)
        self.hub.set_debug(breakpoints=breakpoints)

    async def run(self) -> Any:
        result = await self.subject.acall_team(self.thing)
        with self.client.span("team-marker"):  # everything emitted so far has reached the hub
            pass
        await in_thread(
            self.hub.wait_event,
            lambda e: e.get("type") == proto.NODE_FINISHED and e.get("name") == "team-marker",
        )
        return result

    def started(self) -> list[dict[str, Any]]:
        return [e for e in self.hub.of_type(proto.NODE_STARTED) if e.get("name") != "team-marker"]


async def _two_agents(c: _TeamCase) -> None:
    await c.run()
    started = c.started()
    s = c.subject
    agents = {e.get("agent") for e in started if e.get("agent")}
    assert {s.root, s.other} <= agents, f"expected agents {s.root!r} and {s.other!r}, got {agents}"
    steps = [(e["nodeId"], e.get("agent")) for e in started if e.get("kind") == "llm"]
    assert ("llm:step", s.root) in steps, f"the root agent's step is llm:step: {steps}"
    assert (c.other_step, s.other) in steps, f"the other agent's step is {c.other_step}: {steps}"
    assert all(a == s.root for n, a in steps if n == "llm:step"), f"llm:step is the root's alone: {steps}"
    paths = {e["nodeId"]: e.get("agentPath") for e in started if e.get("agent") == s.other}
    assert all(p and p[0] == s.root and p[-1] == s.other for p in paths.values()), paths
    handoffs = [e for e in started if e.get("kind") == proto.HANDOFF]
    if s.handoff:
        assert [e["nodeId"] for e in handoffs] == [c.handoff_id], f"one handoff node: {handoffs}"


async def _breakpoint_on_the_other_step(c: _TeamCase) -> None:
    c.answer([(c.other_step, proto.BEFORE)], lambda _p: (proto.CONTINUE, None))
    await c.run()
    paused = [p["nodeId"] for p in c.hub.of_type(proto.EXEC_PAUSED)]
    others = [e for e in c.started() if e["nodeId"] == c.other_step]
    assert paused == [c.other_step] * len(others) and paused, f"held only the other agent's steps: {paused}"


async def _handoff_edit(c: _TeamCase) -> None:
    edited: list[Any] = []

    def answer(paused: dict[str, Any]) -> Answer:
        edited.append(c.subject.edit_handoff(paused["input"]))
        return (proto.CONTINUE, None, {"input": edited[-1]})

    c.answer([(proto.ANY_HANDOFF, proto.BEFORE)], answer)
    await c.run()
    assert len(edited) == 1, f"the handoff held once: {edited}"
    c.subject.check_handoff_edited(edited[0])


async def _handoff_inject(c: _TeamCase) -> None:
    c.answer([(proto.ANY_HANDOFF, proto.BEFORE)], lambda _p: (proto.INJECT, c.subject.injected))
    result = await c.run()
    assert c.subject.other_model_calls == 0, "an inject at the handoff answers for the target: it never runs"
    c.subject.check_injected(result, c.subject.injected)
    assert not [e for e in c.started() if e["nodeId"] == c.other_step]


_CASES: dict[str, Callable[[_TeamCase], Any]] = {
    "two_agents": _two_agents,
    "breakpoint_on_the_other_step": _breakpoint_on_the_other_step,
    "handoff_edit": _handoff_edit,
    "handoff_inject": _handoff_inject,
}
TEAM_CASES = tuple(_CASES)
_HANDOFF_CASES = frozenset({"handoff_edit", "handoff_inject"})


async def run_team_case(
    case: str, subject: TeamSubject, *, hub: Callable[[], Hub] | None = None, **client_options: Any
) -> None:
    """Runs one two-agent case against a fresh hub and client (`hub`: as `gate_matrix.run_case`'s).
    The handoff cases pass at once for a subject with `handoff = False`."""
    try:
        fn = _CASES[case]
    except KeyError:
        raise ValueError(f"unknown team case {case!r}; the cases are {TEAM_CASES}") from None
    if case in _HANDOFF_CASES and not subject.handoff:
        return
    with (hub or (lambda: FakeHub(pause_on_error="off")))() as started:
        client = Client(app="team-kit", url=started.url, retry_interval=0.2, **client_options)
        try:
            if not client.ready(5):
                raise AssertionError("the client did not attach to the hub")
            case_ = _TeamCase(started, client, subject)
            try:
                await fn(case_)
            finally:
                subject.undo(case_.thing)
        finally:
            client.dispose()
