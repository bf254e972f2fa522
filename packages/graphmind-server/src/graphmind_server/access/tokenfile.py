"""The token file: where an app of the same user finds the hub's token without configuration.

`$GRAPHMIND_HOME/token-<port>` (default `~/.graphmind/token-<port>`, `graphmind.protocol.token_file`),
created 0600 in a 0700 directory before the hub listens and removed when it stops. Another user
cannot read it; any process of the same user can (docs/security.md says what that means).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from graphmind import protocol as proto

from ..base.files import write_private


def write(port: int, token: str) -> Path:
    path = proto.token_file(port)
    write_private(path, token)
    return path


def remove(path: Path, token: str) -> None:
    """Remove the file if it is still ours (a newer hub on the same port may have replaced it)."""
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8").strip() == token:
            path.unlink()


def remove_stale(port: int) -> None:
    """A hub without a token on `port`: a token file left for this port by a hub that did not stop
    cleanly (SIGKILL) would make apps expect a token here and refuse this hub as not theirs; its
    viewer page (access/viewer_codes.py) would hold a code of a hub that is gone."""
    for path in (proto.token_file(port), proto.token_file(port).with_name(f"viewer-{port}.html")):
        with contextlib.suppress(OSError):
            path.unlink()
