"""Labels: a note and tags a person puts on a run or on one of its nodes (docs/api.md, "Labels").

One row per (run, node); the run's own label has node_id ''. Labels are the user's, not the app's:
they are written through the writer like every change (one door to the database), exported with
the run by `graphmind record` and read back by `graphmind import`, and go when the run goes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

MAX_NOTE_CHARS = 10_000
MAX_TAGS = 32
MAX_TAG_CHARS = 60

MIGRATION: list[str] = [
    """CREATE TABLE labels (
        run_id TEXT NOT NULL,
        node_id TEXT NOT NULL DEFAULT '',
        note TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        updated_at REAL NOT NULL,
        PRIMARY KEY (run_id, node_id)
    ) WITHOUT ROWID""",
]

# The run's own label as a column of a runs query (store/reads.py): null when it has none.
RUN_LABEL_SQL = (
    "(SELECT json_object('note', l.note, 'tags', json(l.tags)) FROM labels l"
    " WHERE l.run_id = runs.id AND l.node_id = '')"
)


class LabelError(ValueError):
    """A label body that cannot be stored; str() is the one line to answer."""


def clean(body: Any) -> dict[str, Any]:
    """{"note": str, "tags": [str, ...]} from a request body, tags trimmed and unique in order."""
    shape = 'the body must be {"note": "...", "tags": ["...", ...]} (either may be left out)'
    if not isinstance(body, dict) or set(body) - {"note", "tags"}:
        raise LabelError(shape)
    note = body.get("note", "")
    tags = body.get("tags", [])
    if note is None:
        note = ""
    if not isinstance(note, str) or not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise LabelError(shape)
    if len(note) > MAX_NOTE_CHARS:
        raise LabelError(f"the note is over {MAX_NOTE_CHARS} characters")
    kept = list(dict.fromkeys(t.strip() for t in tags if t.strip()))
    if len(kept) > MAX_TAGS:
        raise LabelError(f"at most {MAX_TAGS} tags")
    long = next((t for t in kept if len(t) > MAX_TAG_CHARS), None)
    if long is not None:
        raise LabelError(f"the tag {long[:40]!r}… is over {MAX_TAG_CHARS} characters")
    return {"note": note.strip(), "tags": kept}


def as_api(text: Any) -> dict[str, Any]:
    """A stored label (the JSON RUN_LABEL_SQL gives, or None) as the API's {"note", "tags"}."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return {"note": "", "tags": []}
    tags = value.get("tags")
    return {
        "note": value.get("note") if isinstance(value.get("note"), str) else "",
        "tags": [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
    }


def put(conn: sqlite3.Connection, run_id: str, node_id: str, label: dict[str, Any]) -> bool:
    """Store (or, empty, remove) a label; False when the run is not stored."""
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        return False
    if not label["note"] and not label["tags"]:
        conn.execute("DELETE FROM labels WHERE run_id = ? AND node_id = ?", (run_id, node_id))
        return True
    conn.execute(
        """INSERT INTO labels (run_id, node_id, note, tags, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(run_id, node_id) DO UPDATE SET note = excluded.note, tags = excluded.tags,
           updated_at = excluded.updated_at""",
        (run_id, node_id, label["note"], json.dumps(label["tags"]), time.time() * 1000),
    )
    return True


def node_labels(conn: sqlite3.Connection, run_id: str) -> dict[str, dict[str, Any]]:
    """{nodeId: {"note", "tags"}} of a run's labelled nodes."""
    return {
        r[0]: {"note": r[1], "tags": as_api(json.dumps({"tags": json.loads(r[2])}))["tags"]}
        for r in conn.execute(
            "SELECT node_id, note, tags FROM labels WHERE run_id = ? AND node_id != '' ORDER BY node_id",
            (run_id,),
        )
    }


def forget_run(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute("DELETE FROM labels WHERE run_id = ?", (run_id,))


# The run list's filters (store/reads.py): a tag on the run or one of its nodes; words in a note or tag.
TAG_FILTER = "id IN (SELECT l.run_id FROM labels l, json_each(l.tags) t WHERE t.value = ?)"
TEXT_FILTER = "id IN (SELECT run_id FROM labels WHERE (note || ' ' || tags) LIKE ? ESCAPE '\\')"


def like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search(
    conn: sqlite3.Connection, query: str, run_id: str | None, limit: int, thread: str | None = None
) -> list[dict[str, Any]]:
    """Labels whose note or tags hold every word of `query` (any case), as search hits of type
    "label" (docs/api.md `GET /api/search`)."""
    words = query.split()
    if not words:
        return []
    where = " AND ".join(["(note || ' ' || tags) LIKE ? ESCAPE '\\'"] * len(words))
    args: list[Any] = [like(w) for w in words]
    if run_id is not None:
        where += " AND run_id = ?"
        args.append(run_id)
    if thread is not None:
        where += " AND run_id IN (SELECT id FROM runs WHERE thread = ?)"
        args.append(thread)
    rows = conn.execute(
        f"SELECT run_id, node_id, note, tags FROM labels WHERE {where} ORDER BY updated_at DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [
        {
            "runId": r[0],
            "nodeId": r[1] or None,
            "instanceId": None,
            "seq": None,
            "type": "label",
            "snippet": " ".join([r[2], *("#" + t for t in json.loads(r[3]))]).strip()[:200],
        }
        for r in rows
    ]
