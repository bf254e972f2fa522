"""Routes for tests made from runs and for batch replays (docs/api.md): `POST /api/runs/{id}/tests`
(the viewer's "Save as test", the same files `graphmind test new` writes) and
`GET /api/replays/batches/{id}` (a `graphmind replay --each` batch as pairs of runs)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..export.source import iter_events
from ..replay.outcome import RESULTS, judge
from ..replay.testfile import Expectation, NotWritten, write_test
from ..store import reads
from .request import error, hub_of, json_object


def expectation_of(body: dict[str, Any]) -> Expectation:
    given = [k for k in ("expect", "contains", "matches") if k in body]
    if len(given) > 1:
        raise NotWritten(f"give one of expect, contains or matches (got {', '.join(given)})")
    if not given:
        return Expectation("equals")
    key = given[0]
    return Expectation("equals" if key == "expect" else key, body[key], recorded=False)


def folder_of(run: dict[str, Any], given: Any) -> Path:
    """`dir` resolved against the run's recorded working directory, never outside it."""
    meta: dict[str, Any] = run["meta"] if isinstance(run.get("meta"), dict) else {}
    cwd = meta.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        raise NotWritten(
            f"run {run['id']} recorded no working directory to write the test in; use "
            "`graphmind test new RUN_ID --dir DIR --command CMD` on the command line"
        )
    if given is None:
        given = "tests"
    if not isinstance(given, str) or not given.strip():
        raise NotWritten("dir must be a folder inside the app's directory, e.g. tests")
    root = Path(cwd).resolve()
    folder = (root / given).resolve()
    if not folder.is_relative_to(root):
        raise NotWritten(f"dir {given!r} is outside the run's directory {root}; give a folder inside it")
    return folder


def _save_test(conn: sqlite3.Connection, run_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
    run = reads.get_run(conn, run_id)
    if run is None:
        return None
    node = body.get("node")
    if node is not None and not isinstance(node, str):
        raise NotWritten("node must be a selector: an instance id, <nodeId>#<n> or a seq")
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise NotWritten("name must be a text")
    written = write_test(
        conn, run_id, folder_of(run, body.get("dir")), expectation_of(body), node=node or None, name=name
    )
    return {
        "test": str(written.test),
        "cassette": str(written.cassette),
        "node": written.node,
        "expected": written.expected,
    }


async def save_test(request: Request) -> Response:
    hub = hub_of(request)
    run_id = request.path_params["run_id"]
    body = await json_object(request, 'a JSON object: {"node", "expect" | "contains" | "matches", "dir"}')
    if not isinstance(body, dict):
        return body
    await hub.store.barrier()
    try:
        written = await hub.store.read(_save_test, run_id, body)
    except NotWritten as exc:
        return error(400, str(exc))
    except OSError as exc:
        return error(400, f"cannot write the test ({exc.strerror or exc}); check dir")
    if written is None:
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    return JSON(written, status_code=201)


def _batch(conn: sqlite3.Connection, batch: str) -> dict[str, Any] | None:
    runs = reads.batch_runs(conn, batch)
    if not runs:
        return None
    pairs = []
    for replay in runs:
        original = replay["meta"].get("replayOf")
        recorded = None
        if isinstance(original, str) and reads.get_run(conn, original) is not None:
            recorded = [s.event for s in iter_events(conn, original)]
        outcome = judge(recorded, [s.event for s in iter_events(conn, replay["id"])])
        if replay["status"] == "running":
            outcome.result, outcome.why = "running", "the replay has not ended yet"
        pairs.append(
            {
                "run": original,
                "replay": replay["id"],
                "name": replay["name"],
                "inHub": recorded is not None,
                **outcome.to_api(),
            }
        )
    totals = {r: sum(1 for p in pairs if p["result"] == r) for r in RESULTS}
    saved = round(sum(p["savedUsd"] for p in pairs), 8)
    return {"batch": batch, "pairs": pairs, "totals": totals, "savedUsd": saved}


async def batch_route(request: Request) -> Response:
    hub = hub_of(request)
    batch = request.path_params["batch"]
    await hub.store.barrier()
    found = await hub.store.read(_batch, batch)
    if found is None:
        return error(404, f"no replay batch {batch!r} (`graphmind replay --each` prints its id)")
    return JSON(found)


routes = [
    Route("/api/runs/{run_id}/tests", save_test, methods=["POST"]),
    Route("/api/replays/batches/{batch}", batch_route, methods=["GET"]),
]
