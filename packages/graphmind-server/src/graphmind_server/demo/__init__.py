"""`graphmind demo`: a travel assistant held at a gate, against an embedded hub and the viewer."""

from __future__ import annotations

import argparse
from typing import Any

SCENARIOS = {
    "default": "a breakpoint before `book`: the first thing you do is answer a gate",
    "error": "check_budget fails once and pause-on-error holds it",
    "loop": "the model searches three times with identical arguments and the third is held as a loop",
}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run a demo agent against an embedded hub and open the viewer",
        description="Run a small travel assistant (an OpenAI client on a scripted model, tools "
        "search_flights, check_budget and book) and watch it in the viewer.",
    )
    scenario = parser.add_mutually_exclusive_group()
    scenario.add_argument(
        "--error", action="store_const", dest="scenario", const="error", help=SCENARIOS["error"]
    )
    scenario.add_argument(
        "--loop", action="store_const", dest="scenario", const="loop", help=SCENARIOS["loop"]
    )
    parser.set_defaults(scenario="default")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="answer every gate with continue after a short hold, print a summary of the run, exit",
    )
    parser.add_argument("--live", action="store_true", help="use a real OpenAI model (needs OPENAI_API_KEY)")
    parser.add_argument("--port", type=int, default=4747, help="hub port (default 4747; 0 = any free port)")
    parser.add_argument(
        "--db",
        default=None,
        help="hub database when the demo starts its own hub (default: GRAPHMIND_DB or ~/.graphmind/graphmind.db)",
    )
    parser.add_argument(
        "--hold",
        type=float,
        default=0.3,
        help="with --headless: seconds each gate is held before it is answered (default 0.3)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from .command import run_demo

    return run_demo(args)
