"""`graphmind viewer-url`: where to open the viewer of a hub with a token (access/viewer_codes.py).

The hub writes a page only its user can read (`$GRAPHMIND_HOME/viewer-<port>.html`) and prints its
`file://` link; this command asks the hub to write it afresh and prints the link again. With
`--link`, an `http://...#code=` link instead, whose code works once and expires in 30 s: for a
browser that cannot open the file (another machine through a tunnel, a sandboxed browser); paste
it into a running browser, since a link handed to a new browser process is on its command line
where every user can read it (docs/security.md).

The command proves the hub is the hub before it asks anything (access/proof.py): the token is
never sent, so a listener squatting on the port learns nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphmind import protocol as proto

from .proof import NotOurHub, ProvenHub, Unreachable, token_source


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "viewer-url",
        help="print where to open the viewer of a hub started with a token",
        description="Ask the running hub for a fresh viewer page (a file only you can read, holding a "
        "one-time code) and print its link.",
    )
    p.add_argument("--port", type=int, default=4747, help="the hub's port (default 4747)")
    p.add_argument(
        "--token-file", dest="token_file", metavar="PATH", help="the hub's token, kept in this file"
    )
    p.add_argument(
        "--link",
        action="store_true",
        help="print an http link with a one-time code that expires in 30 s instead (paste it into a "
        "running browser)",
    )
    p.set_defaults(func=run_command)


def _say(message: str) -> int:
    print(f"graphmind: {message}", file=sys.stderr, flush=True)
    return 2


def run_command(args: argparse.Namespace) -> int:
    base = f"http://127.0.0.1:{args.port}"
    try:
        token = proto.find_token(f"ws://127.0.0.1:{args.port}/ingest", token_file_path=args.token_file)
    except proto.TokenError as exc:
        return _say(str(exc))
    if token is None:
        return _say(
            f"no token for the hub on port {args.port}: set {proto.TOKEN_ENV}, pass --token-file, or "
            f"run this as the hub's user (a hub without a token needs no link: open {base}/)"
        )
    hub = ProvenHub(args.port, token, token_source(args.port, args.token_file), timeout=5)
    try:
        status, body = hub.call("POST", "/api/viewer/codes", {"link": True} if args.link else {})
    except NotOurHub as exc:
        return _say(str(exc))
    except Unreachable as exc:
        return _say(f"{exc}; check --port")
    url = body.get("url") if isinstance(body, dict) else None
    if status != 200 or not isinstance(url, str):
        message = body.get("error") if isinstance(body, dict) else None
        return _say(f"the hub at {base} answered {status}: {message or 'no link'}")
    print(url, flush=True)
    return 0
