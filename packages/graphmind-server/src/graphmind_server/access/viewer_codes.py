"""How the browser gets the token without any URL, log or command line carrying a usable secret.

Three places leak a URL (docs/security.md, "The viewer link"):
- the browser's History: Chromium writes the URL it navigates to when the page commits, fragment
  included, before any script of the page runs (tests/browser/test_token.py);
- the hub's stdout, when it goes to a file (`graphmind serve > hub.log` under umask 022 is a
  world-readable log);
- the browser's command line: a link clicked in a terminal starts `browser URL`, and
  /proc/<pid>/cmdline is readable by every user, long enough for another user to redeem it first.

So the hub never prints a code. It writes a small page, `$GRAPHMIND_HOME/viewer-<port>.html`
(0600 in the 0700 directory that holds the token file), and prints that file's `file://` link:
nothing secret is in the link, and only this user can read the page. The page sends the browser to
`http://host:port/#code=<code>`, a navigation inside the browser (on no command line); the viewer
(index.html, boot.js) takes the code out of the address and trades it for the token at
`POST /api/viewer/redeem` (the one data route open without the token; Origin-checked like every
POST). A code works once; the file's code is replaced as soon as it is used, so the file always
opens the viewer again and what History keeps is spent.

A code handed out as a URL (`POST /api/viewer/codes` with `{"link": true}`, `graphmind viewer-url
--link`) expires LINK_TTL_S after it was made. The file's code does not: reading it takes the
same access as reading the token file beside it. At most MAX_OPEN codes wait; the oldest goes first.
None outlives the hub.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from ..base.files import write_private
from ..base.jsontext import JSON

MAX_OPEN = 16
LINK_TTL_S = 30.0
REDEEM_PATH = "/api/viewer/redeem"
PAGE = """<!doctype html>
<meta charset="utf-8">
<title>GraphMind</title>
<meta name="referrer" content="no-referrer">
<!-- Written by graphmind serve, readable by this user only: it holds a one-time code for the viewer
     of the hub on port {port} (docs/security.md, "The viewer link"). -->
<script>location.replace({target});</script>
<p><a href={target}>Open the GraphMind viewer</a></p>
"""


def viewer_file(port: int) -> Path:
    """`$GRAPHMIND_HOME/viewer-<port>.html`, beside the hub's token file."""
    return proto.token_file(port).with_name(f"viewer-{port}.html")


class ViewerCodes:
    def __init__(self, token: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.token = token
        self._clock = clock
        self._open: OrderedDict[str, float | None] = OrderedDict()  # code -> expiry (monotonic) or None
        self.base = ""  # http://host:port, once the hub listens
        self.port = 0
        self.file: Path | None = None
        self._file_code: str | None = None

    def issue(self, ttl: float | None = LINK_TTL_S) -> str:
        code = proto.new_nonce()
        self._open[code] = None if ttl is None else self._clock() + ttl
        while len(self._open) > MAX_OPEN:
            oldest = next(iter(self._open))
            if oldest == self._file_code:  # the file's code is kept: move it to the young end
                self._open.move_to_end(oldest)
                oldest = next(iter(self._open))
            del self._open[oldest]
        return code

    def write_file(self, base: str, port: int) -> Path:
        """(Re)write the viewer page with a fresh code; the previous one in it stops working."""
        self.base, self.port = base, port
        if self._file_code is not None:
            self._open.pop(self._file_code, None)
        self._file_code = self.issue(ttl=None)
        path = viewer_file(port).absolute()  # a relative GRAPHMIND_HOME: file:// needs an absolute path
        target = json.dumps(f"{base}/#code={self._file_code}")
        write_private(path, PAGE.format(port=port, target=target))
        self.file = path
        return path

    def remove_file(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.unlink()
            self.file = None

    def redeem(self, code: object) -> str | None:
        """The token for a code issued, not expired and not yet used (then it is spent), else None."""
        if self.token is None or not isinstance(code, str):
            return None
        now = self._clock()
        for old in [c for c, until in self._open.items() if until is not None and until <= now]:
            del self._open[old]
        found = next((c for c in self._open if hmac.compare_digest(c.encode(), code.encode())), None)
        if found is None:
            return None
        del self._open[found]
        if found == self._file_code and self.file is not None:
            try:
                self.write_file(self.base, self.port)  # the file opens the viewer again
            except OSError:
                self._file_code = None
        return self.token


def _codes(request: Request) -> ViewerCodes:
    codes: ViewerCodes = request.app.state.viewer_codes
    return codes


async def redeem(request: Request) -> Response:
    try:
        body = await request.json()
    except ValueError:
        body = None
    token = _codes(request).redeem(body.get("code") if isinstance(body, dict) else None)
    if token is None:
        return JSON(
            {
                "error": "this viewer link was already used, has expired or is not this hub's: open the "
                "viewer file graphmind serve printed, or run `graphmind viewer-url` (docs/security.md)"
            },
            status_code=403,
        )
    return JSON({"token": token}, headers={"cache-control": "no-store"})


async def new_code(request: Request) -> Response:
    """The viewer file with a fresh code, or with `{"link": true}` a link whose code expires in
    LINK_TTL_S (the token was checked by the Guard: this route is not public)."""
    codes = _codes(request)
    if codes.token is None:
        return JSON({"error": "this hub has no token: open its URL as it is"}, status_code=409)
    try:
        body = await request.json()
    except ValueError:
        body = None
    no_store = {"cache-control": "no-store"}
    if isinstance(body, dict) and body.get("link") is True:
        base = f"{request.url.scheme}://{request.url.netloc}"
        url = f"{base}/#code={codes.issue()}"
        return JSON({"url": url, "expiresIn": LINK_TTL_S}, headers=no_store)
    try:
        path = codes.write_file(
            codes.base or f"{request.url.scheme}://{request.url.netloc}", codes.port or request.url.port or 80
        )
    except OSError as exc:
        return JSON({"error": f"cannot write the viewer file ({exc.strerror or exc})"}, status_code=500)
    return JSON({"url": path.as_uri(), "path": str(path)}, headers=no_store)


routes = [
    Route(REDEEM_PATH, redeem, methods=["POST"]),
    Route("/api/viewer/codes", new_code, methods=["POST"]),
]
