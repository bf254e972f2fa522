"""Runs the demo: a hub (in-process, or the one already on the port), the model, the agent."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import webbrowser
from typing import Any

from .summary import print_summary
from .travel import TravelTools, scripted_reply

LIVE_MODEL = os.environ.get("GRAPHMIND_DEMO_MODEL", "gpt-4o-mini")
SCRIPTED_MODEL = "scripted-travel-model"


class DemoError(Exception):
    pass


def _api(base: str, method: str, path: str, body: Any = None, timeout: float = 5.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def _existing_hub(port: int) -> str | None:
    if port == 0:
        return None
    base = f"http://127.0.0.1:{port}"
    try:
        health = _api(base, "GET", "/api/health", timeout=0.5)
    except (OSError, ValueError):
        return None
    return base if isinstance(health, dict) and health.get("ok") else None


class GateAnswerer(threading.Thread):
    """--headless: plays the person at the viewer, answering every held gate with continue."""

    def __init__(self, base: str, hold: float) -> None:
        super().__init__(name="graphmind-demo-answerer", daemon=True)
        self.base = base
        self.hold = hold
        self.answered: list[dict[str, Any]] = []
        self._done = threading.Event()

    def run(self) -> None:
        seen: dict[str, float] = {}
        while not self._done.is_set():
            try:
                gates = _api(self.base, "GET", "/api/gates")["gates"]
            except (OSError, ValueError, KeyError):
                gates = []
            now = time.monotonic()
            for gate in gates:
                first = seen.setdefault(gate["gateId"], now)
                if now - first >= self.hold:
                    try:
                        _api(self.base, "POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
                        self.answered.append(gate)
                    except (OSError, ValueError):
                        pass
            self._done.wait(0.05)

    def stop(self) -> None:
        self._done.set()
        if self.ident is not None:  # never started when the demo failed before its first gate
            self.join(2)


# Each scenario's hold, set in the agent's code for this run only (the loop scenario needs none: the
# loop guard holds the third identical search while attached).
SCENARIO_BREAKPOINTS = {"default": {"book": "before"}, "error": {"check_budget": "error"}, "loop": {}}


NEEDS_EXTRA = "graphmind demo needs the OpenAI adapter: pip install 'graphmind-server[demo]'"


def _require_demo_extra() -> None:
    """Checked before anything starts (a hub, a thread), so every mode fails with the same one line."""
    try:
        import openai  # noqa: F401

        import graphmind_openai.testing  # noqa: F401
    except ImportError as exc:
        raise DemoError(NEEDS_EXTRA) from exc


def _openai_client(live: bool, base_url: str | None) -> Any:
    import openai

    if live:
        return openai.OpenAI()
    return openai.OpenAI(base_url=base_url, api_key="demo-key-not-used", max_retries=0)


def _instrument(client: Any, gm: Any) -> Any:
    from graphmind_openai import instrument_openai

    return instrument_openai(client, session=gm)


def _scripted_model(loop: bool) -> Any:
    """The loopback fake provider of graphmind-openai, answering with the travel script."""
    from graphmind_openai.testing import FakeOpenAI

    return FakeOpenAI(default_reply=lambda body: scripted_reply(body.get("messages") or [], loop=loop))


def _open_browser(url: str) -> None:
    has_display = sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if has_display:
        try:
            webbrowser.open(url)
        except Exception:
            pass


def run_demo(args: argparse.Namespace) -> int:
    if args.live and not os.environ.get("OPENAI_API_KEY"):
        print(
            "graphmind: demo --live needs OPENAI_API_KEY in the environment; set it, or run without --live to use the scripted model",
            file=sys.stderr,
        )
        return 2
    try:
        return _run(args)
    except DemoError as exc:
        print(f"graphmind: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import graphmind

    from ..serve import start_in_thread
    from .agent import run_travel_agent

    _require_demo_extra()
    hub_handle = None
    base = _existing_hub(args.port)
    if base is None:
        hub_handle = start_in_thread(port=args.port, db=args.db)
        base = hub_handle.url
        print(f"GraphMind hub started on {base}")
    else:
        print(f"Using the GraphMind hub already running on {base}")
    ingest = base.replace("http://", "ws://") + "/ingest"
    answerer = GateAnswerer(base, args.hold) if args.headless else None
    loop = args.scenario == "loop"
    try:
        with _scripted_model(loop) as model:
            gm = graphmind.Client(app="travel-demo", url=ingest, retry_interval=1.0)
            if not gm.ready(5):
                raise DemoError(
                    f"could not attach to the hub at {ingest}; is something else on port {args.port}? try --port 0"
                )
            openai_client = _instrument(_openai_client(args.live, model.base_url), gm)
            tools = TravelTools(fail_budget_once=args.scenario == "error")
            print(f"Open the viewer: {base}")
            if answerer is not None:
                answerer.start()
            else:
                if not args.no_browser:
                    _open_browser(base)
                print(_what_to_do(args.scenario))
            run_id, answer = run_travel_agent(
                openai_client,
                gm,
                tools,
                model=LIVE_MODEL if args.live else SCRIPTED_MODEL,
                run_name="travel-assistant",
                breakpoints=SCENARIO_BREAKPOINTS[args.scenario],
            )
            gm.dispose()
            print(f"\nAgent: {answer}")
            _wait_for_run_end(base, run_id)
            print_summary(base, run_id, answerer.answered if answerer else None)
    finally:
        if answerer is not None:
            answerer.stop()
    if hub_handle is not None:
        if args.headless:
            hub_handle.stop()
        else:
            print(f"\nThe hub keeps running so you can look around: {base} (Ctrl-C to stop)")
            try:
                while hub_handle.running:
                    time.sleep(0.5)
            except KeyboardInterrupt:
                pass
            hub_handle.stop()
    return 0


def _wait_for_run_end(base: str, run_id: str, timeout: float = 5.0) -> None:
    """dispose() has written run.finished to the socket; wait until the hub has stored it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if _api(base, "GET", f"/api/runs/{run_id}").get("status") != "running":
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)


def _what_to_do(scenario: str) -> str:
    return {
        "default": "The agent will hold before `book`. In the viewer: Continue to book, Inject to book something else, or Abort.",
        "error": "check_budget will fail and hold at its error gate. In the viewer: Retry (it works the second time), Inject a result, or Continue to let the agent see the error.",
        "loop": "The model searches again and again; the third identical search holds as a loop. Continue, Inject a result, or Abort.",
    }[scenario]
