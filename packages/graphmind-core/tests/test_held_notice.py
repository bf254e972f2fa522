"""A replay's "held at ..." stderr line (_hub/held_notice.py): once, after a second unanswered, with
the viewer's URL and no token; not for an ordinary app."""

from __future__ import annotations

import threading

import graphmind
from graphmind._hub.held_notice import HeldNotices, held_line, viewer_url

EFFECT = {"nodeId": "tool:book_flight", "reason": "effect", "effect": {"class": "write", "source": "name"}}


def test_the_viewer_url_has_no_path_query_or_user() -> None:
    assert viewer_url("ws://127.0.0.1:4747/ingest") == "http://127.0.0.1:4747"
    assert viewer_url("wss://me:secret@hub.example:8443/ingest?token=abc") == "https://hub.example:8443"
    assert viewer_url("ws://[::1]:4747/ingest") == "http://[::1]:4747"


def test_the_line_names_the_node_and_why() -> None:
    url = "http://127.0.0.1:4747"
    assert held_line(EFFECT, url) == (
        "graphmind: held at tool:book_flight (safe mode: a write) — answer it in the viewer at http://127.0.0.1:4747"
    )
    unknown = {**EFFECT, "effect": {"class": "unknown"}}
    assert "(safe mode: an unknown)" in held_line(unknown, url)
    diverged = {"nodeId": "tool:book", "reason": "divergence", "replay": {"occurrence": 2}}
    assert held_line(diverged, url).startswith(
        "graphmind: held at tool:book#2 (the replay diverged from the recording) — "
    )


def test_said_once_after_the_delay_and_never_for_an_answered_gate() -> None:
    said: list[str] = []
    written = threading.Event()

    def write(line: str) -> None:
        said.append(line)
        written.set()

    notices = HeldNotices("http://127.0.0.1:4747", write, after_s=0.05)
    notices.start("g1", EFFECT, lambda: True)  # answered before the delay: nothing
    notices.start("g2", EFFECT, lambda: False)
    assert written.wait(5)
    notices.stop("g1")
    notices.stop("g2")
    notices.start("g3", EFFECT, lambda: False)
    notices.stop("g3")  # closed before the delay: cancelled
    assert said == [held_line(EFFECT, "http://127.0.0.1:4747")]
    for timer in [t for t in threading.enumerate() if t.name == "graphmind-held-notice"]:
        timer.join(5)  # a cancelled timer's thread ends at once
        assert not timer.is_alive()


def test_an_app_that_does_not_replay_says_nothing() -> None:
    client = graphmind.Client(app="plain", url="ws://127.0.0.1:9/ingest", environ={})
    try:
        assert client._hub.held_notices is None
    finally:
        client.dispose()
