"""One-time viewer links: how the browser gets the token without any browser keeping it (issue 28).

Chromium writes the URL it navigates to into its History database when the navigation commits,
fragment included, before any script of the page runs (measured: tests/browser/test_token.py;
`history.replaceState` and `location.replace` add entries, they remove none). So the printed link
cannot carry the token itself. It carries a *code*: 32 random bytes, usable once. The page
(index.html) takes it out of the address, posts it to `POST /api/viewer/redeem` (the one data
route open without the token; its Origin must be the hub's own), and gets the token back, which
it keeps in this tab's sessionStorage and sends explicitly with every call. What History keeps is
a code the hub already spent.

A new link for another browser or tab: `graphmind viewer-url` (or `POST /api/viewer/codes` with
the token). At most MAX_OPEN codes wait at once; the oldest goes first. None outlives the hub.
"""

from __future__ import annotations

import hmac
from collections import OrderedDict

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from .jsontext import JSON

MAX_OPEN = 16
REDEEM_PATH = "/api/viewer/redeem"


class ViewerCodes:
    def __init__(self, token: str | None) -> None:
        self.token = token
        self._open: OrderedDict[str, None] = OrderedDict()

    def issue(self) -> str:
        code = proto.new_nonce()
        self._open[code] = None
        while len(self._open) > MAX_OPEN:
            self._open.popitem(last=False)
        return code

    def redeem(self, code: object) -> str | None:
        """The token for a code issued and not yet used (then it is spent), else None."""
        if self.token is None or not isinstance(code, str):
            return None
        found = next((c for c in self._open if hmac.compare_digest(c.encode(), code.encode())), None)
        if found is None:
            return None
        del self._open[found]
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
                "error": "this viewer link was already used or is not this hub's: links work once; "
                "run `graphmind viewer-url` for a new one (docs/security.md)"
            },
            status_code=403,
        )
    return JSON({"token": token}, headers={"cache-control": "no-store"})


async def new_code(request: Request) -> Response:
    """A new one-time link (the token was checked by the Guard: this route is not public)."""
    codes = _codes(request)
    if codes.token is None:
        return JSON({"error": "this hub has no token: open its URL as it is"}, status_code=409)
    base = f"{request.url.scheme}://{request.url.netloc}"
    return JSON({"url": f"{base}/#code={codes.issue()}"}, headers={"cache-control": "no-store"})


routes = [
    Route(REDEEM_PATH, redeem, methods=["POST"]),
    Route("/api/viewer/codes", new_code, methods=["POST"]),
]
