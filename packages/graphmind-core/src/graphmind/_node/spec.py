"""What the gate engine works with: a node's description, an adapter's settled result, an error on the wire."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .hold_timeout import KnownTimeout


@dataclass(slots=True)
class NodeSpec:
    """What a node is. `node_id` defaults to `<kind>:<name>`; `instance_id` to a fresh id."""

    name: str
    kind: str = "tool"
    input: Any = None
    node_id: str | None = None
    instance_id: str | None = None
    attrs: dict[str, Any] | None = None
    actions: tuple[str, ...] | None = None  # restrict what the before gate offers (spans: no inject)
    # Top-level fields added to node.started (the wire schema is loose): `providerExecuted`, `ungated`.
    extra: dict[str, Any] | None = None
    # Holds asked for from code (_hub/code_holds.py): gates to hold at while attached, and a condition
    # on the call's arguments (`input` as keyword arguments) checked at the before gate.
    breakpoints: frozenset[str] = frozenset()
    hold_if: Callable[..., Any] | None = None
    # A model step whose output is a reply described the adapters' way (`{"tool_calls": [{"id",
    # "name", ...}]}`): when it ends, its calls' ids go to the gated tools called next
    # (_runs/tool_call_ids.py; docs/protocol.md, "Tool node identity").
    tool_calls_in_output: bool = False
    # A timeout the adapter knows keeps running while this node's gates hold (a LlamaIndex
    # workflow's `timeout`): core warns once per node id when a hold outlives it (_node/hold_timeout.py).
    hold_timeout: KnownTimeout | None = None
    # The adapter built `input` and `attrs` for this node in fresh dicts and lists of `json_scalar`
    # leaves and keeps no hold on them: recorded without a snapshot copy (docs/adapters.md, "Owned payloads").
    owned: bool = False
    # Set by a describer that measured an owned `input` in the same pass (`payload.flat_scalar_chars`:
    # a flat dict of short JSON scalars): about how many characters its JSON takes. The pipeline
    # counts it without visiting it, and the loop guard keeps it as its streak key as it is.
    input_chars: int | None = None
    # Edit and reload (_node/edit.py; docs/protocol.md, "Editing a held call"): `edit(json)` rebuilds
    # the call from an edited input (the node's `input` shape) and returns the body to run, raising
    # with the reason when it cannot; None: the gate says "not editable". `reload()` re-imports a
    # gated callable's code. `output_schema`: a JSON Schema of the output (or a function returning
    # one, asked only when a gate holds), the inject box's skeleton. A spec describes one execution
    # (it carries its `instance_id`): core drops `edit` when the node ends, so a hook that closes
    # over the execution leaves no reference cycle (the call's request and reply freed at once).
    edit: Callable[[Any], Callable[[], Any]] | None = None
    reload: Callable[[], None] | None = None
    # The Python function the call runs, where the adapter finds it (a framework's function tool:
    # the function it was made from): core offers reload for it, and does it (_node/code_reload.py:
    # the module run again, the new code put into this very function object, which the framework
    # holds). None: the gate says why reload is not offered (`exec.paused.notReloadable`).
    function: Callable[..., Any] | None = None
    output_schema: Any = None
    # A replay's recorded error ({"name", "message", ...}) as the framework's own exception, or None
    # when the adapter cannot rebuild it (core then raises graphmind.ReplayedError; docs/replay.md).
    replay_error: Callable[[dict[str, Any]], BaseException | None] | None = None
    # A tool's effect (docs/effects.md): "read" / "write" said in code (`effects=`), or an adapter's
    # `graphmind.adapter.framework_effect(...)` from the framework's metadata; None: the name rule.
    # `effects_stub`: `(value,)`, what simulate hands back when nothing better is known.
    effects: Any = None
    effects_stub: tuple[Any] | None = None

    def __post_init__(self) -> None:
        if self.node_id is None:
            self.node_id = f"{self.kind}:{self.name}"


class Owned(tuple):  # type: ignore[type-arg]
    """An adapter describer's answer, e.g. `(input, key, length)` or `(output, usage)`, whose JSON
    values the describer owns: it built every dict and list of them fresh, every leaf is
    `json_scalar`, and nothing keeps a hold on them. The adapter then says so to the engine
    (`NodeSpec.owned`, `Settled.owned`) and the node records them without a snapshot copy
    (docs/adapters.md, "Owned payloads"). Equal to, and unpacked like, the plain tuple it wraps."""

    __slots__ = ()


@dataclass(slots=True)
class Settled:
    """What an adapter's `settle` hook decided about a body's result (`run_sync` / `run_async`).

    `result`: what the app gets when the after gate answers continue: the body's own result, or a
    replacement for it (a replay of a reply the hook had to read to describe it).
    `output` / `usage`: the node's output JSON, shown at the after gate and sent in `node.finished`
    (they replace `describe_output` / `describe_usage`); `owned`: the adapter built both fresh, of
    plain JSON leaves (docs/adapters.md, "Owned payloads").
    `finishes_later`: the adapter finishes the node itself later (it tees a live stream and calls
    `finish` / `fail` when the stream ends): no after gate now, `result` goes to the app at once.

    An injected value's converter (`from_injected`) may return a `Settled` too: the node then
    finishes with its `output` / `usage` (not the raw injected JSON) and the app gets its `result`.
    """

    result: Any
    output: Any = None
    usage: dict[str, Any] | None = None
    finishes_later: bool = False
    owned: bool = False  # `output` and `usage` are owned as `NodeSpec.owned` says of the input


def describe_error(exc: BaseException) -> dict[str, Any]:
    """An exception as the wire's Error object; never raises."""
    try:
        message = str(exc)
    except Exception as inner:  # a __str__ that raises
        message = f"<unprintable {type(exc).__name__}: {inner!r}>"
    try:
        stack = format_stack(exc)[-8000:]
    except Exception:
        stack = ""
    return {"name": type(exc).__name__, "message": message, "stack": stack}


def format_stack(exc: BaseException) -> str:
    """`traceback.format_exception`'s text (chained and grouped exceptions included) without the
    `^^^` markers under each line. On CPython 3.11 placing them runs `ast.parse` on the line
    (`traceback._extract_caret_anchors_from_line_segment`), and until 3.11.8 / 3.12.2 `ast.parse`
    kept its recursion depth in per-interpreter state (gh-106905): a parse here, while another
    thread parses (pytest formatting a failure) and a garbage collection hands the GIL over, makes
    the other parse fail with "SystemError: AST constructor recursion depth mismatch"
    (docs/dev/ast-race.md). A frame without column positions gets no markers, and no parse."""
    import traceback

    report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    pending, seen = [report], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for frame in current.stack:
            if hasattr(frame, "colno"):  # Python 3.11+ (3.10's frames have no columns, no markers)
                frame.colno = frame.end_colno = None  # type: ignore[attr-defined]  # (3.10 stubs)
        pending.extend(
            e
            for e in (current.__cause__, current.__context__, *(getattr(current, "exceptions", None) or ()))
            if e
        )
    return "".join(report.format())
