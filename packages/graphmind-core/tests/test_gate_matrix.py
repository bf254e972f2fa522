"""The shared gate matrix (graphmind.testing.gate_matrix), run on core itself with a toy framework
and a toy adapter built only on `graphmind.adapter`, the way every real adapter is."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import trio

import graphmind
from graphmind._node.stream_loop import Items
from graphmind.adapter import NodeExecution, NodeSpec, enabled_for, engine_for, parse_model_reply
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case


@dataclasses.dataclass
class Reply:
    """The toy framework's own reply type."""

    text: str


class ToyError(Exception):
    pass


class ToyModel:
    """A framework object: sync, async and streamed calls, each counted."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompts: list[str] = []
        self.fail: ToyError | None = None

    def _attempt(self, prompt: str = "") -> None:
        self.calls += 1
        self.prompts.append(prompt)
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error

    def reply(self, prompt: str) -> Reply:
        self._attempt(prompt)
        return Reply(f"real: {prompt}")

    async def areply(self, prompt: str) -> Reply:
        self._attempt(prompt)
        return Reply(f"real: {prompt}")

    def stream(self, prompt: str) -> Iterator[Reply]:
        self._attempt()
        for word in ("real", "streamed", prompt):
            yield Reply(word)

    async def astream(self, prompt: str) -> AsyncIterator[Reply]:
        self._attempt()
        for word in ("real", "streamed", prompt):
            yield Reply(word)


def _to_reply(value: Any) -> Reply:
    return Reply(parse_model_reply(value).content or "")


def _describe(items: list[Reply]) -> tuple[Any, dict[str, Any] | None]:
    return {"content": " ".join(i.text for i in items)}, None


def _reply_json(reply: Reply) -> Any:
    """The one model-reply shape, which `_to_reply` reads back (inject and replay)."""
    return {"content": reply.text}


def _to_items(value: Any) -> Items:
    """An injected (or replayed) stream: one item per word, as the toy streams."""
    return Items(tuple(Reply(word) for word in (parse_model_reply(value).content or "").split(" ")))


def instrument_toy(
    model: ToyModel,
    session: graphmind.Client,
    describe_output: Callable[[Reply], Any] = _reply_json,
    name: str | None = "toy-1",
) -> ToyModel:
    """The toy adapter: four instance attributes, all through the engine (asked per call: with no
    session, the default client is whatever `graphmind.configure()` built last)."""
    if not enabled_for(session) or "_gm_originals" in vars(model):
        return model
    reply, areply, stream, astream = model.reply, model.areply, model.stream, model.astream

    def edited_prompt(value: Any) -> str:
        # The toy's one JSON -> call conversion: the input's shape back into its argument.
        if not isinstance(value, dict) or not isinstance(value.get("prompt"), str):
            raise ValueError('the input must be {"prompt": "..."}')
        return str(value["prompt"])

    def spec(prompt: str, call: Callable[[str], Any]) -> NodeSpec:
        def edit(value: Any) -> Callable[[], Any]:
            edited = edited_prompt(value)
            return lambda: call(edited)

        return NodeSpec(
            "step",
            "llm",
            {"prompt": prompt},
            node_id="llm:step",
            attrs={"model": name} if name else None,
            edit=edit,
        )

    def gated_reply(prompt: str) -> Reply:
        return engine_for(session).execute(
            spec(prompt, reply),
            lambda: reply(prompt),
            describe_output=describe_output,
            from_injected=_to_reply,
        )

    async def gated_areply(prompt: str) -> Reply:
        return await engine_for(session).aexecute(
            spec(prompt, areply),
            lambda: areply(prompt),
            describe_output=describe_output,
            from_injected=_to_reply,
        )

    def gated_stream(prompt: str) -> Iterator[Reply]:
        ex = engine_for(session).start_node(spec(prompt, stream))
        return ex.stream_sync(lambda: stream(prompt), describe=_describe, from_injected=_to_items)

    async def gated_astream(prompt: str) -> AsyncIterator[Reply]:
        ex = await engine_for(session).astart_node(spec(prompt, astream))
        # aclosing: the app closing this generator early closes the node's stream too (cutShort)
        async with contextlib.aclosing(
            ex.stream_async(lambda: astream(prompt), describe=_describe, from_injected=_to_items)
        ) as items:
            async for item in items:
                yield item

    vars(model)["_gm_originals"] = (reply, areply, stream, astream)
    model.reply, model.areply, model.stream, model.astream = (
        gated_reply,
        gated_areply,
        gated_stream,
        gated_astream,
    )  # type: ignore[method-assign]
    return model


def uninstrument_toy(model: ToyModel) -> ToyModel:
    originals = vars(model).pop("_gm_originals", None)
    if originals is not None:
        for name in ("reply", "areply", "stream", "astream"):
            vars(model).pop(name, None)
    return model


class ToySubject(GateSubject):
    node_id = "llm:step"
    injected = "from the debugger"
    error_type = ToyError
    streams = True
    model_name: str | None = "toy-1"  # the model its steps name in attrs.model

    def __init__(self) -> None:
        self.models: list[ToyModel] = []

    @property
    def real_calls(self) -> int:
        return sum(m.calls for m in self.models)

    def make(self) -> ToyModel:
        self.models.append(ToyModel())
        return self.models[-1]

    def instrument(self, thing: ToyModel, session: graphmind.Client) -> ToyModel:
        return instrument_toy(thing, session, self.describe_output, self.model_name)

    def describe_output(self, reply: Reply) -> Any:
        return _reply_json(reply)

    def undo(self, thing: ToyModel) -> ToyModel:
        return uninstrument_toy(thing)

    def call(self, thing: ToyModel) -> Reply:
        return thing.reply("hi")

    async def acall(self, thing: ToyModel) -> Reply:
        return await thing.areply("hi")

    def stream(self, thing: ToyModel) -> Iterator[Reply]:
        return thing.stream("hi")

    def astream(self, thing: ToyModel) -> AsyncIterator[Reply]:
        return thing.astream("hi")

    def fail_next(self) -> None:
        self.raised = ToyError("the provider said no")
        for model in self.models:
            model.fail = self.raised

    def check_real(self, result: Any) -> None:
        assert result == Reply("real: hi")

    def check_injected(self, result: Any, value: Any) -> None:
        assert result == Reply(value)

    def check_stream(self, items: list[Any]) -> None:
        assert items == [Reply("real"), Reply("streamed"), Reply("hi")]

    def edit(self, original: Any) -> Any:
        assert original == {"prompt": "hi"}
        return {"prompt": "edited"}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert result == Reply("real: edited")
        assert self.models[-1].prompts[-1] == edited["prompt"]


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_on_a_toy_adapter(case: str) -> None:
    await run_case(case, ToySubject())


async def test_the_kit_catches_an_async_after_retry_that_acts_as_continue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mutation issue 20 found unguarded: `retry` at an async after gate treated as `continue`."""
    original = NodeExecution.agate

    async def retry_as_continue(self: Any, gate: str, payload: Any = None, convert: Any = None) -> Any:
        answer = await original(self, gate, payload, convert)
        return (
            dataclasses.replace(answer, action="continue", retries=False)
            if answer.retries and gate == "after"
            else answer
        )

    monkeypatch.setattr(NodeExecution, "agate", retry_as_continue)
    with pytest.raises(AssertionError, match="retry at the after gate runs the call again"):
        await run_case("after_retry_async", ToySubject())


class AppObjectSubject(ToySubject):
    """A describer that hands core the framework's own reply object."""

    def describe_output(self, reply: Reply) -> Any:
        return {"reply": reply}


class TupleSubject(ToySubject):
    def describe_output(self, reply: Reply) -> Any:
        return {"words": tuple(reply.text.split())}


class NamelessModelSubject(ToySubject):
    """An adapter whose model step does not say which model it called."""

    model_name = None


class SharedDictSubject(ToySubject):
    """A describer that hands over a dict the framework keeps and changes on its next call."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[str, Any] = {}

    def describe_output(self, reply: Reply) -> Any:
        self.last["text"] = reply.text
        self.last["calls"] = self.real_calls
        return self.last


@pytest.mark.parametrize(
    ("subject", "says"),
    [
        (AppObjectSubject, "test_gate_matrix.Reply, not a JSON value (an app object?)"),
        (TupleSubject, "output.words is a builtins.tuple"),
        (SharedDictSubject, "output changed after it was handed over: not a fresh value"),
        (NamelessModelSubject, "node.started llm:step: attrs.model is None, not the model's name"),
    ],
)
async def test_the_check_mode_fails_a_describer_that_hands_over_an_app_object_or_a_value_it_keeps(
    subject: type[ToySubject], says: str
) -> None:
    # after_retry: two real calls, so a kept dict is changed after the first node recorded it
    with pytest.raises(AssertionError, match="a describer broke the contract") as info:
        await run_case("after_retry", subject())
    assert says in str(info.value)
    await run_case("after_retry", subject(), check_describers=False)  # the same case passes unchecked


async def test_an_unknown_case_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="unknown gate-matrix case 'nope'"):
        await run_case("nope", ToySubject())


@pytest.mark.parametrize("case", CASES)
def test_gate_matrix_on_a_toy_adapter_under_trio(case: str) -> None:
    trio.run(run_case, case, ToySubject())
