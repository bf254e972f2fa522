"""A cassette: the file `graphmind record` writes (docs/export.md, "Formats": jsonl), read for a replay.

Only what a replay needs is kept: every recorded node execution in the order its `node.started`
was stored, with its input and its ending (output or error), found by (nodeId, occurrence),
instance id or seq (the selectors of `--fork` / `--until`). `write_cassette` writes the same
format from a client's own events (the pytest plugin's record modes), secret keys stripped as
`graphmind record` strips them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .. import protocol as proto
from .._events.redaction import strip_secret_keys
from . import foreign
from .errors import CassetteError

FORMAT = {"type": "graphmind.export", "version": 1}
# One line is one event; a hub takes no frame over 16 MiB (protocol.INGEST_MAX_FRAME), and an
# export line adds little to its event. A longer line is refused before it is read whole: the file
# is read line by line (a 1 GB line cost `Client()` 36 s and 3.1 GB when the file was read whole).
MAX_LINE = 2 * proto.INGEST_MAX_FRAME


@dataclass(slots=True)
class Recorded:
    """One recorded node execution."""

    node_id: str
    occurrence: int  # 1-based, per node id, in the order the node started
    instance_id: str
    seq: int | None
    kind: str
    input: Any
    output: Any = None
    error: dict[str, Any] | None = None
    ended: bool = False
    container: bool = False  # other recorded nodes ran inside it: it runs live, its children replay
    # The recorded `usage` (a model step's tokens): a replayed reply reports it to the app as the
    # provider did (an agent loop that budgets by tokens makes the same requests again).
    usage: dict[str, Any] | None = None
    # A foreign trace's call that lacks the output a replay hands back: why (foreign.missing_output).
    lacking: str | None = None
    has_output: bool = False  # its ending carried an `output`
    ts: float = 0.0  # its node.started time

    @property
    def selector(self) -> str:
        return f"{self.node_id}#{self.occurrence}"


@dataclass
class Cassette:
    source: str
    run_ids: list[str] = field(default_factory=list)
    nodes: dict[str, list[Recorded]] = field(default_factory=dict)
    by_instance: dict[str, Recorded] = field(default_factory=dict)
    by_seq: dict[int, Recorded] = field(default_factory=dict)
    # A trace another instrumentor recorded (a run the hub took over OTLP): matched in the
    # comparison form of foreign.py, by logical node id, and only its model and tool calls replay.
    foreign: bool = False

    @property
    def run_id(self) -> str | None:
        """The recorded run a replay names as `replayOf` (the first, for a file of several)."""
        return self.run_ids[0] if self.run_ids else None

    def get(self, node_id: str, occurrence: int) -> Recorded | None:
        found = self.nodes.get(node_id)
        if found is None or occurrence > len(found):
            return None
        return found[occurrence - 1]

    def __len__(self) -> int:
        return len(self.by_instance)

    def find(self, selector: str) -> Recorded:
        """A node by instance id, `<nodeId>#<occurrence>` or seq; CassetteError names what exists."""
        text = selector.strip()
        hit = self.by_instance.get(text)
        if hit is None and "#" in text:
            node_id, _, occ = text.rpartition("#")
            if occ.isdigit():
                hit = self.get(node_id, int(occ))
        if hit is None and text.isdigit():
            hit = self.by_seq.get(int(text))
        if hit is None:
            raise CassetteError(f"{self.source}: no recorded node {selector!r} ({self._hint(text)})")
        return hit

    def _hint(self, text: str) -> str:
        """What to write instead: the node's own occurrences when the node id was recorded (a bare
        `tool:book`, or `tool:book#3` of a node that ran once), else the first few recorded nodes."""
        node_id = text.rpartition("#")[0] if "#" in text else text
        runs = self.nodes.get(node_id)
        if runs:
            some = ", ".join(r.selector for r in runs[:5])
            times = "once" if len(runs) == 1 else f"{len(runs)} times"
            return f"{node_id} ran {times}: write {some}{', …' if len(runs) > 5 else ''}"
        some = ", ".join(r.selector for r in list(self.by_instance.values())[:5])
        more = ", …" if len(self) > 5 else ""
        return f"give an instance id, <nodeId>#<n> or a seq; recorded: {some}{more}"

    @classmethod
    def from_events(cls, events: Iterable[dict[str, Any]], source: str = "<events>") -> Cassette:
        cassette = cls(source)
        parents: set[str] = set()
        for event in events:
            kind = event.get("type")
            run_id = event.get("runId")
            if kind == proto.RUN_STARTED:
                if isinstance(run_id, str) and run_id not in cassette.run_ids:
                    cassette.run_ids.append(run_id)
                meta = event.get("meta")
                if isinstance(meta, dict) and foreign.META_KEY in meta:
                    cassette.foreign = True
                continue
            instance = event.get("instanceId")
            if not isinstance(instance, str):
                continue
            if kind == proto.NODE_STARTED:
                node_id = event.get("nodeId")
                if not isinstance(node_id, str):
                    continue
                same = cassette.nodes.setdefault(node_id, [])
                seq = event.get("seq")
                rec: Recorded | None = Recorded(
                    node_id,
                    len(same) + 1,
                    instance,
                    seq if isinstance(seq, int) else None,
                    str(event.get("kind") or ""),
                    event.get("input"),
                )
                assert rec is not None
                ts = event.get("ts")
                rec.ts = float(ts) if isinstance(ts, (int, float)) else 0.0
                # A handoff runs live in a replay (its gate passes the handed-over input on): the
                # target agent's own calls are what replays (docs/replay.md, "Teams of agents").
                rec.container = rec.kind == "handoff"
                same.append(rec)
                cassette.by_instance[instance] = rec
                if rec.seq is not None:
                    cassette.by_seq[rec.seq] = rec
                parent = event.get("parentInstanceId")
                if isinstance(parent, str):
                    parents.add(parent)
                if isinstance(run_id, str) and run_id not in cassette.run_ids:
                    cassette.run_ids.append(run_id)
            elif kind in (proto.NODE_FINISHED, proto.NODE_ERROR):
                rec = cassette.by_instance.get(instance)
                if rec is None or rec.ended:
                    continue
                rec.ended = True
                if kind == proto.NODE_FINISHED:
                    rec.output = event.get("output")
                    rec.has_output = "output" in event
                    usage = event.get("usage")
                    rec.usage = usage if isinstance(usage, dict) else None
                else:
                    error = event.get("error")
                    rec.error = error if isinstance(error, dict) else {"name": "Error", "message": str(error)}
        for instance in parents:
            parent_rec = cassette.by_instance.get(instance)
            if parent_rec is not None:
                parent_rec.container = True
        if cassette.foreign:
            cassette._as_foreign()
        return cassette

    def _as_foreign(self) -> None:
        """A foreign trace's spans were stored as they ended, each its own request maybe (its run's
        start often last): its calls are counted by logical node id in the order they started, and
        what each lacks is said once here (foreign.py)."""
        by_id: dict[str, list[Recorded]] = {}
        for rec in sorted(self.by_instance.values(), key=lambda r: (r.ts, r.seq or 0)):
            rec.node_id = foreign.logical(rec.node_id)
            same = by_id.setdefault(rec.node_id, [])
            same.append(rec)
            rec.occurrence = len(same)
            if rec.ended and rec.error is None:
                rec.output = foreign.reply(rec.kind, rec.output)
                rec.lacking = foreign.missing_output(rec.kind, rec.output, rec.has_output)
        self.nodes = by_id

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Cassette:
        name = os.fspath(path)
        try:
            with open(name, "rb") as f:
                return cls.from_events(_events_of(name, f), name)
        except OSError as exc:
            raise CassetteError(f"cannot read the replay cassette {name} ({exc.strerror or exc})") from None


def _lines(name: str, f: IO[bytes]) -> Iterator[tuple[int, str]]:
    """(number, text) of each line, read one at a time and never more than MAX_LINE of one."""
    number = 0
    while True:
        raw = f.readline(MAX_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE:
            raise CassetteError(
                f"{name}:{number}: a line over {MAX_LINE // (1024 * 1024)} MiB, longer than any event a "
                "hub stores; pass a file written by `graphmind record`"
            )
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CassetteError(
                f"{name}:{number}: not UTF-8 text; pass a file written by `graphmind record`"
            ) from None


def _events_of(name: str, f: IO[bytes]) -> Iterator[dict[str, Any]]:
    for number, line in _lines(name, f):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteError(
                f"{name}:{number}: not JSON ({exc.msg}); pass a file written by `graphmind record` (jsonl)"
            ) from None
        if not isinstance(item, dict):
            raise CassetteError(
                f"{name}:{number}: not a JSON object; pass a file written by `graphmind record`"
            )
        if number == 1 and item.get("type") != FORMAT["type"]:
            raise CassetteError(
                f"{name}:1: not a GraphMind export (no {FORMAT['type']!r} header); "
                "pass a file written by `graphmind record` (jsonl)"
            )
        event = item.get("event")
        if item.get("type") == "event" and isinstance(event, dict):
            if "runId" not in event and isinstance(item.get("runId"), str):
                event = {**event, "runId": item["runId"]}
            yield event


def write_cassette(path: str | os.PathLike[str], client_id: str, events: list[dict[str, Any]]) -> int:
    """Writes `events` (one client's, in order) as a `graphmind record` jsonl file, 0600, with the
    values under secret-looking keys replaced by "__REDACTED__". Returns how many values it removed."""
    removed = 0
    lines = [_line(FORMAT)]
    runs: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("type") == proto.RUN_STARTED and isinstance(event.get("runId"), str):
            runs[event["runId"]] = {
                "id": event["runId"],
                "app": event.get("app") or "",
                "name": event.get("name") or "",
                "status": "finished",
                "startedAt": event.get("ts") or 0,
                "endedAt": None,
                "clientId": client_id,
                "meta": event.get("meta") or {},
                "nodes": [],
            }
    for run_id, run in runs.items():
        clean, n = strip_secret_keys(run)
        removed += n
        lines.append(_line({"type": "run", "run": clean}))
        for event in events:
            if event.get("runId") == run_id:
                clean, n = strip_secret_keys(event)
                removed += n
                lines.append(_line({"type": "event", "runId": run_id, "clientId": client_id, "event": clean}))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
        out.write("\n".join(lines) + "\n")
    partial.replace(target)
    return removed


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
