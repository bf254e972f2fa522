"""A run's answer, read off its events (or a cassette): what `graphmind test new` asserts and what
`graphmind replay --each` compares, one rule for both (docs/testing.md, "A run becomes a test").

The final answer is the output of the run's last model step that ended (in start order), as text
when the step's output holds it (`content` or `text`, a string or a list of text blocks); a chosen
node (`node=`: an instance id, `<nodeId>#<n>` or a seq, as `--fork` names one) answers with its
whole output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .cassette import Cassette, Recorded


@dataclass(frozen=True)
class Answer:
    selector: str  # `<nodeId>#<n>` of the node that gave it
    value: Any


def answer_of(source: Cassette | Iterable[dict[str, Any]], node: str | None = None) -> Answer | None:
    """The run's final answer, or the chosen node's output; None when the run has no ended model
    step (a chosen node that is not there raises CassetteError, naming what is)."""
    cassette = source if isinstance(source, Cassette) else Cassette.from_events(source)
    if node is not None:
        rec = cassette.find(node)
        return Answer(rec.selector, rec.output if rec.error is None else {"error": rec.error})
    last: Recorded | None = None
    for rec in cassette.by_instance.values():
        if rec.kind == "llm" and rec.ended and rec.error is None:
            last = rec
    if last is None:
        return None
    return Answer(last.selector, text_of(last.output))


def text_of(output: Any) -> Any:
    """A model step's reply as text when it holds one; else the output as it is."""
    if not isinstance(output, dict):
        return output
    for key in ("content", "text"):
        value = output.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            texts = [str(b["text"]) for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
            if texts:
                return "".join(texts)
    return output
