"""The ingest URL: a malformed `GRAPHMIND_URL` or `url` is said once and the client runs detached."""

from __future__ import annotations

from urllib.parse import urlsplit

EXPECTED = "ws://HOST:PORT/ingest, for example ws://127.0.0.1:4747/ingest"


def url_problem(url: str, from_env: bool) -> str | None:
    """None for a usable WebSocket URL, else the one-line warning naming the value and the form."""
    problem = None
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number in 0-65535
    except ValueError as exc:
        problem = str(exc)
    else:
        if parts.scheme not in ("ws", "wss"):
            problem = "it is not a ws:// or wss:// URL"
        elif not parts.hostname:
            problem = "it names no host"
    if problem is None:
        return None
    where = f"GRAPHMIND_URL={url!r}" if from_env else f"url={url!r}"
    return (
        f"[graphmind] {where} cannot be used ({problem}); expected {EXPECTED}. "
        "GraphMind runs detached: your code runs as usual and nothing is recorded"
    )
