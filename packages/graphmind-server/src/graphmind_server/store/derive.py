"""How a run's row and its nodes' rows follow its events (pure: no SQL, no I/O)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..base.jsontext import finite, loads_finite
from . import prices
from . import status as rule
from . import usage as tokens
from .search import event_facets
from .status import FINAL_STATUSES, RUN_STATUSES, split_node_id

__all__ = [
    "FINAL_STATUSES",
    "NODE_COLUMNS",
    "RUN_STATUSES",
    "NodeRow",
    "RunRow",
    "apply",
    "run_to_api",
    "text",
]
_SURROGATE = re.compile("[\ud800-\udfff]")
# A node row's columns, in NodeRow's field order (store/schema.py).
NODE_COLUMNS = "node_id, kind, name, executions, status, position, latest, latest_status, held"


@dataclass
class NodeRow:
    node_id: str
    kind: str
    name: str
    executions: int = 0
    status: str = "pending"  # store/status.py `node()`, kept for the readers
    position: int = 0
    # What the rule needs to know of the node's executions: the latest one (instanceId and status)
    # and the ones held now. No other execution can change the node's status.
    latest: str | None = None
    latest_status: str = "pending"
    held: list[str] = field(default_factory=list)

    @classmethod
    def from_db(cls, row: tuple[Any, ...]) -> NodeRow:
        """A row of NODE_COLUMNS. One stored before the rule kept its state (schema 1) has no latest
        execution: its status stands until the node's next event."""
        node_id, kind, name, executions, status, position, latest, latest_status, held = row
        try:
            ids = json.loads(held)
        except (TypeError, ValueError):
            ids = []
        held_ids = [h for h in ids if isinstance(h, str)] if isinstance(ids, list) else []
        return cls(
            node_id, kind, name, executions, status, position, latest, latest_status or status, held_ids
        )

    def to_db(self, run_id: str) -> tuple[Any, ...]:
        """(run_id, *NODE_COLUMNS)."""
        return (
            run_id,
            self.node_id,
            self.kind,
            self.name,
            self.executions,
            self.status,
            self.position,
            self.latest,
            self.latest_status,
            json.dumps(self.held),
        )

    def execution_event(self, instance: str, event: dict[str, Any]) -> None:
        """One event of one execution of this node (status.py's rule, kept per node)."""
        is_latest = instance == self.latest or self.latest is None or event.get("type") in rule.STARTS
        held = bool(self.held) and instance in self.held
        # Only the latest execution's status and which ones are held are kept: an older one that is
        # not held is "running" here, which gives the same answer for what the node shows.
        current = "held" if held else self.latest_status if instance == self.latest else "running"
        after = rule.execution(current, event)
        if after == "held":
            if not held:
                self.held.append(instance)
        elif held:
            self.held.remove(instance)
        if is_latest:
            self.latest, self.latest_status = instance, after
        self.status = rule.node(bool(self.held), self.latest_status)


@dataclass
class RunRow:
    id: str
    app: str
    name: str
    status: str
    started_at: float
    client_id: str
    ended_at: float | None = None
    event_count: int = 0
    meta: str = "{}"
    implicit: bool = False
    agent_node: str | None = None
    cursor: int = 0
    dropped: str = "{}"  # JSON {reason: events}: events of this run that never reached the store
    usage: str = "{}"  # JSON: tokens and reported cost per model (store/usage.py)
    held_ms: float = 0.0  # time its gates were held (the exec.resumed heldMs summed)
    abandoned_reason: str | None = None  # why the hub marked it abandoned (hub/state.py `abandon_reason`)
    # When this hub first stored anything of it (the hub's clock, ms): what the runs list and the
    # start-up prune order by. The app's clock (startedAt) may be anywhere: a span dated 2200.
    received_at: float = 0.0
    nodes: dict[str, NodeRow] | None = None  # loaded lazily by the writer
    new: bool = False
    dirty_nodes: set[str] = field(default_factory=set)
    # In memory only: facets written for this run (store/search.py), the ones to write, and the
    # model of each model node still open (its node.finished carries the usage, not the model).
    facets: set[str] = field(default_factory=set)
    new_facets: list[str] = field(default_factory=list)
    open_models: dict[str, str] = field(default_factory=dict)
    _usage: dict[str, Any] | None = None

    @classmethod
    def from_db(cls, row: tuple[Any, ...]) -> RunRow:
        """A row of the writer's run columns (store/rows.py `_RUN_COLUMNS`), its nodes not loaded."""
        (run_id, app, name, status, started, ended, events, client, meta, implicit, agent, cursor) = row[:12]
        dropped, usage, held_ms, abandoned_reason, received_at = row[12:17]
        return cls(
            id=run_id,
            app=app,
            name=name,
            status=status,
            started_at=started,
            ended_at=ended,
            event_count=events,
            client_id=client,
            meta=meta,
            implicit=bool(implicit),
            agent_node=agent,
            cursor=cursor,
            dropped=dropped,
            usage=usage,
            held_ms=held_ms,
            abandoned_reason=abandoned_reason,
            received_at=received_at,
            nodes={},
        )

    def add_usage(self, model: str | None, reported: Any) -> None:
        if self._usage is None:
            self._usage = tokens.load(self.usage)
        if tokens.add(self._usage, model, reported):
            self.usage = json.dumps(self._usage)

    def add_facets(self, facets: list[str]) -> None:
        for f in facets:
            if f not in self.facets:
                self.facets.add(f)
                self.new_facets.append(f)

    @property
    def node_count(self) -> int:
        return sum(1 for n in (self.nodes or {}).values() if n.executions > 0)

    def to_api(self) -> dict[str, Any]:
        return run_to_api(
            (
                self.id,
                self.app,
                self.name,
                self.status,
                self.started_at,
                self.ended_at,
                self.node_count,
                self.event_count,
                self.client_id,
                self.meta,
                self.dropped,
                self.usage,
                self.held_ms,
                self.abandoned_reason,
            )
        )

    def add_dropped(self, reasons: dict[str, int]) -> bool:
        """Merges loss totals (each the sender's total so far: the larger one wins). True if changed."""
        current = dropped_counts(self.dropped)
        merged = {**current, **{k: max(v, current.get(k, 0)) for k, v in reasons.items()}}
        if merged == current:
            return False
        self.dropped = json.dumps(merged, sort_keys=True)
        return True


def dropped_counts(text: Any) -> dict[str, int]:
    """The stored `dropped` column as {reason: events}; anything unreadable is {}."""
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if type(v) is int and v > 0}


def dropped_to_api(text: Any) -> dict[str, Any]:
    """The run's `dropped` field: {"count": all reasons together, "reasons": {reason: events}}."""
    reasons = dropped_counts(text)
    return {"count": sum(reasons.values()), "reasons": reasons}


def run_to_api(row: tuple[Any, ...]) -> dict[str, Any]:
    """A runs row (id, app, name, status, started_at, ended_at, node_count, event_count, client_id,
    meta, dropped, usage, held_ms, abandoned_reason) as the API's Run object, without heldCount (the
    hub adds it)."""
    try:
        meta = loads_finite(row[9])
    except (TypeError, ValueError, RecursionError):
        meta = {}
    return {
        "id": row[0],
        "app": row[1],
        "name": row[2],
        "status": row[3],
        "startedAt": finite(row[4]),
        "endedAt": finite(row[5]),
        "nodeCount": row[6],
        "eventCount": row[7],
        "clientId": row[8],
        "meta": meta,
        "dropped": dropped_to_api(row[10] if len(row) > 10 else None),
        "usage": tokens.to_api(tokens.load(row[11] if len(row) > 11 else None), prices.price),
        "heldMs": finite(row[12]) if len(row) > 12 else 0,
        # Why the hub gave up on it (an abandoned run only; docs/reliability.md).
        "abandonedReason": row[13] if len(row) > 13 and row[3] == "abandoned" else None,
    }


def text(value: str) -> str:
    """The string, with lone surrogates (legal in a JSON escape, not in UTF-8) replaced by U+FFFD."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value)


def _str(value: Any, default: str) -> str:
    return text(value) if isinstance(value, str) and value else default


def node(run: RunRow, node_id: str, kind: Any = None, name: Any = None) -> NodeRow:
    assert run.nodes is not None
    row = run.nodes.get(node_id)  # a known id is clean text already: no encode per event (issue 38)
    if row is None:
        node_id = text(node_id)
        row = run.nodes.get(node_id)
    if row is None:
        k, n = split_node_id(node_id)
        row = NodeRow(node_id, _str(kind, k), _str(name, n), position=len(run.nodes))
        run.nodes[node_id] = row
    else:
        if isinstance(kind, str) and kind and kind != row.kind:
            row.kind = text(kind)
        if isinstance(name, str) and name and name != row.name:
            row.name = text(name)
    run.dirty_nodes.add(node_id)
    return row


def apply(run: RunRow, event: dict[str, Any], ts: float) -> None:
    """Update a run (and its nodes) for one newly stored event."""
    kind = event.get("type")
    run.event_count += 1
    if run.status == "abandoned" and kind != "run.finished":
        # The app came back after the grace: the run is live again.
        run.status, run.ended_at, run.abandoned_reason = "running", None, None
    node_id = event.get("nodeId")
    if kind == "run.started":
        run.name = _str(event.get("name"), run.name)
        run.app = _str(event.get("app"), run.app)
        run.started_at = ts
        run.implicit = bool(event.get("implicit"))
        if isinstance(event.get("meta"), dict):
            run.meta = json.dumps(event["meta"])
        replay = {
            k: event[k]
            for k in ("replayOf", "forkedAt", "replayBatch")  # replayBatch: `graphmind replay --each`
            if isinstance(event.get(k), str) and event[k]
        }
        if replay:
            # A replay's recording (issue 31), kept with the run's meta so the runs list links a
            # recording and its replays both ways without reading any run's events.
            try:
                meta = json.loads(run.meta)
            except ValueError:
                meta = {}
            run.meta = json.dumps({**(meta if isinstance(meta, dict) else {}), **replay})
        if isinstance(node_id, str) and node_id:
            run.agent_node = text(node_id)
            row = node(run, node_id, event.get("kind") or "agent", event.get("name"))
            row.executions += 1
            row.execution_event(_str(event.get("instanceId"), run.id), event)
    elif kind == "run.finished":
        run.status = rule.run_final(event.get("status"))
        # Never before its start: the app's clock may have jumped back meanwhile (an hour, once).
        run.ended_at = max(ts, run.started_at)
        if run.agent_node and run.nodes and run.agent_node in run.nodes:
            row = node(run, run.agent_node)
            row.execution_event(row.latest or run.id, event)
    elif kind == "graph.hint":
        hinted = event.get("nodes")
        for item in hinted if isinstance(hinted, list) else []:
            if (
                isinstance(item, dict)
                and isinstance(item.get("nodeId"), str)
                and item["nodeId"]
                and run.nodes is not None
                and text(item["nodeId"]) not in run.nodes
            ):
                node(run, item["nodeId"], item.get("kind"), item.get("name"))
    elif isinstance(node_id, str) and node_id and kind in _NODE_EVENTS:
        row = node(run, node_id, event.get("kind"), event.get("name"))
        instance = _str(event.get("instanceId"), "")
        if kind == "node.started":
            row.executions += 1
            model = tokens.started_model(event)  # the one rule (store/usage.py, docs/protocol.md)
            if model is not None:
                run.open_models[instance] = model
        elif kind == "node.finished":
            model = run.open_models.pop(instance, None) or tokens.answered_model(event)
            usage = event.get("usage")
            cost = event.get("cost")  # a span that came in over OTLP: its llm.cost.total (otlp/spans.py)
            if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)):
                usage = {**(usage if isinstance(usage, dict) else {}), "costUsd": cost["total"]}
            if usage is not None:
                run.add_usage(model, usage)
        elif kind == "node.error":
            run.open_models.pop(instance, None)
        elif kind == "exec.resumed":
            held = event.get("heldMs")
            if isinstance(held, (int, float)) and not isinstance(held, bool) and 0 < held < float("inf"):
                run.held_ms += held
        run.add_facets(event_facets(event, row.kind, row.name))
        row.execution_event(instance, event)


# The events that change a node's status (node.token does not; a newer type is stored, not folded).
_NODE_EVENTS = ("node.started", "node.finished", "node.error", "exec.paused", "exec.resumed")
