"""The one warning a closing client gives about what the hub will never have (issue 29).

Its total is the one `stats()["dropped"]` gives: the ring's drops, the encoder's refusals, what was
still unsent at close, and the pipeline's drops. A client that never found a hub listening (none
was started) is the detached mode the app chose: counted, not said.
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
