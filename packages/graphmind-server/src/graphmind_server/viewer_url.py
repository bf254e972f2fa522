"""`graphmind viewer-url`: a new one-time viewer link for a hub with a token (viewer_codes.py).

The link `graphmind serve` prints works once (a browser keeps every URL it opens); another
browser or a new tab without one asks the hub for a fresh link, with the token found the way every
command finds it (`--token-file`, GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, the hub's token file).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

from graphmind import protocol as proto


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "viewer-url",
        help="print a new one-time viewer link for a hub started with a token",
        description="Ask the running hub for a new one-time viewer link (the one graphmind serve printed "
        "works once) and print it.",
    )
    p.add_argument("--port", type=int, default=4747, help="the hub's port (default 4747)")
    p.add_argument(
        "--token-file", dest="token_file", metavar="PATH", help="the hub's token, kept in this file"
    )
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    base = f"http://127.0.0.1:{args.port}"
    try:
        token = proto.find_token(f"ws://127.0.0.1:{args.port}/ingest", token_file_path=args.token_file)
    except proto.TokenError as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    if token is None:
        print(
            f"graphmind: no token for the hub on port {args.port}: set {proto.TOKEN_ENV}, pass --token-file, or "
            "run this as the hub's user (a hub without a token needs no link: open "
            f"{base}/)",
            file=sys.stderr,
            flush=True,
        )
        return 2
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
    request = urllib.request.Request(
        base + "/api/viewer/codes", data=b"{}", method="POST", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with opener.open(request, timeout=5) as response:
            print(json.loads(response.read())["url"], flush=True)
            return 0
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        print(f"graphmind: the hub at {base} answered {exc.code}: {message}", file=sys.stderr, flush=True)
    except (urllib.error.URLError, OSError) as exc:
        print(
            f"graphmind: no hub answers at {base} ({getattr(exc, 'reason', exc)}); check --port",
            file=sys.stderr,
            flush=True,
        )
    return 2
