"""The one warning a closing client gives about what the hub will never have (issue 29).

Its total is the one `stats()["dropped"]` gives: the ring's drops, the encoder's refusals, what was
still unsent at close, and the pipeline's drops. A client that never found a hub listening (none
was started) is the detached mode the app chose: counted, not said.

Sent events the hub had not confirmed storing when the app closed are not in that total: they were
sent, and a hub still committing a backlog has most likely stored them, so they get their own
warning that says "not confirmed", never "lost" (`stats()["unconfirmed"]`).
"""

from __future__ import annotations


def close_warning(dropped: int, left: int, *, attached_ever: bool, reached: bool, url: str) -> str | None:
    """The warning for `dropped` events lost (`left` of them still unsent at close), or None."""
    if not dropped or not (attached_ever or reached):
        return None
    if attached_ever:
        why = (
            f"{left} could not be sent before closing (it stopped taking them), {dropped - left} were "
            "dropped earlier (the replay buffer was full, they could not be encoded, or the hub lost them)"
        )
        fix = "Raise buffer_size / max_buffer_bytes, or keep the hub running until the app exits."
    else:
        why = "this app never attached to it (is `graphmind serve` running there?)"
        fix = "Start the hub before the app, or set GRAPHMIND_URL to where it listens."
    return f"[graphmind] {dropped} event(s) never reached the hub at {url}: {why}; stats()['dropped'] counts them. {fix}"


def unconfirmed_warning(unconfirmed: int, *, url: str) -> str | None:
    """The warning for sent events no hub confirmed storing before the app closed, or None."""
    if not unconfirmed:
        return None
    return (
        f"[graphmind] {unconfirmed} event(s) were sent to the hub at {url} but it had not confirmed "
        "storing them when the app closed (it was still busy: they are most likely stored, the run "
        "in the viewer shows what it has); stats()['unconfirmed'] counts them. Keep the hub running "
        "a moment longer after a large burst to have them confirmed."
    )
