"""Runs a framework's own test suite bare, instrumented detached, and instrumented attached to a real hub.

    python scripts/suites/run_suite.py openai <source dir> [pytest args...]
    python scripts/suites/run_suite.py anthropic <source dir> [pytest args...]
    python scripts/suites/run_suite.py langchain <source dir> [pytest args...]
    python scripts/suites/run_suite.py mcp|llamaindex|litellm|google_adk|openai-agents|pydantic_ai <source dir> [pytest args...]

Test paths among the pytest args (relative to the source dir) replace the whole suite.

Run it through nox (`uv run nox -s "suite(framework='openai')"`), which installs the suite's
dependencies and fetches the source package. Each of the three runs writes a JUnit XML file;
this script compares them test by test and exits 1 when a test that passes bare does not pass
instrumented (detached or attached), except the tests listed in EXPECTED_DIFFERENT (each named
with its reason in docs/compatibility.md). Such a test is rerun alone in the same mode (passing
there: timing under load), and if it fails there too, alone bare (failing there as well: its pass
in the suite came from the tests before it in the same worker, not a difference GraphMind
makes). Prints one line per run and the GraphMind counts.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

SUITES: dict[str, dict[str, Any]] = {
    "openai": {
        "plugin": "gm_suite_openai",
        # The suite raises API errors on purpose; the hub's default pauseOnError=on would hold each at
        # its error gate like a breakpoint. "No breakpoint" means none of those either.
        "hub_args": ["--pause-on-error", "off"],
        # tests/api_resources talk to the SDK's Prism mock server (TEST_API_BASE_URL, port 4010).
        "args": [
            "tests",
            "--ignore=tests/api_resources",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=",
            "--timeout=120",
        ],
    },
    "anthropic": {
        "plugin": "gm_suite_anthropic",
        "hub_args": ["--pause-on-error", "off"],
        # Like openai's: tests/api_resources need the Prism mock server; its addopts loads a needed plugin.
        "args": [
            "tests",
            "--ignore=tests/api_resources",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=-p tests._alias_httpx",
            "--timeout=120",
        ],
    },
    "langchain": {
        "plugin": "gm_suite_langchain",
        "hub_args": [],  # the hub's defaults: the handler has before gates only
        # The Makefile's --disable-socket would also stop GraphMind's own connection to the hub.
        "args": ["tests/unit_tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "mcp": {
        "plugin": "gm_suite_mcp",
        # The suite's tools fail on purpose (isError results, JSON-RPC errors): no error gate holds.
        "hub_args": ["--pause-on-error", "off"],
        # The whole suite: every test is offline (in-memory transports, loopback servers). Its
        # addopts without --color (a file, not a terminal); -p anyio / -p examples load its plugins.
        "args": [
            "tests",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=--capture=fd -p anyio -p examples",
            "--timeout=120",
        ],
    },
    "llamaindex": {
        "plugin": "gm_suite_llamaindex",
        "hub_args": ["--pause-on-error", "off"],
        # The whole of llama-index-core's tests/ (`make test`), all offline (MockLLM, MockEmbedding,
        # in-memory stores); `integration`-marked ones are skipped by its conftest unless --integration.
        # A test module that cannot be imported against the installed release (tests from another
        # version, docs/compatibility.md) fails bare and is not compared, instead of stopping the run.
        "args": [
            "tests",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "--timeout=120",
            "--continue-on-collection-errors",
        ],
    },
    "openai-agents": {
        "plugin": "gm_suite_openai_agents",
        # Tools fail and guardrails trip on purpose: no error gate holds.
        "hub_args": ["--pause-on-error", "off"],
        # A selection (the "paths" below replace "tests"): the runner, streamed and sync runs,
        # agents as tools, function tools, guardrails, handoffs, hooks, cancellation, max turns,
        # tool-use behaviour, step execution and the SDK's own tracing of runs. The SDK's fake models
        # (tests/fake_model.py) are the models gated. The rest of tests/ covers realtime, voice,
        # sandboxes, memory backends and MCP servers, none of which this adapter hooks.
        "paths": [
            "tests/test_agent_runner.py",
            "tests/test_agent_runner_streamed.py",
            "tests/test_agent_runner_sync.py",
            "tests/test_agent_as_tool.py",
            "tests/test_function_tool.py",
            "tests/test_function_tool_decorator.py",
            "tests/test_guardrails.py",
            "tests/test_tool_guardrails.py",
            "tests/test_handoff_tool.py",
            "tests/test_global_hooks.py",
            "tests/test_agent_hooks.py",
            "tests/test_run_hooks.py",
            "tests/test_cancel_streaming.py",
            "tests/test_max_turns.py",
            "tests/test_tool_use_behavior.py",
            "tests/test_run_step_execution.py",
            "tests/test_agent_tracing.py",
        ],
        "args": ["tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "litellm": {
        "plugin": "gm_suite_litellm",
        # The mocked unit tests raise provider errors on purpose.
        "hub_args": ["--pause-on-error", "off"],
        # In every run, as litellm's CI sets it: else each process fetches the model cost map at
        # import (no network here: three attempts and their back-off sleeps, about 7 s).
        "env": {"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        # A selection of tests/test_litellm (the offline unit tests, `make test-unit`; the rest of
        # tests/ calls real providers): the tests that go through the functions the adapter gates
        # (`completion` / `acompletion` with mocked clients or `mock_response`, the router, the
        # responses API, the bridge between them) and the OpenAI and Anthropic provider tests.
        # Globs are expanded in the source dir. Not the proxy's (a server with its own database),
        # the other providers' (thousands of request-shape tests that never reach
        # `litellm.completion`), nor the import-time tests that start a Python process per test
        # (test_eager_tiktoken_load.py, test_lazy_imports.py: 30 minutes a run on 2 cores).
        "paths": [
            "tests/test_litellm/test_main.py",
            "tests/test_litellm/test_router*.py",
            "tests/test_litellm/test_responses_api_bridge_non_stream.py",
            "tests/test_litellm/test_acompletion_session_reuse_e2e.py",
            "tests/test_litellm/test_shared_session_integration.py",
            "tests/test_litellm/test_exception_*.py",
            "tests/test_litellm/test_nested_drop_params.py",
            "tests/test_litellm/responses",
            "tests/test_litellm/llms/openai",
            "tests/test_litellm/llms/anthropic",
        ],
        "args": [
            "tests/test_litellm",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "--timeout=120",
            "--continue-on-collection-errors",
        ],
    },
    "google_adk": {
        "plugin": "gm_suite_google_adk",
        # The unit tests raise model and tool errors on purpose: no error gate holds.
        "hub_args": ["--pause-on-error", "off"],
        # tests/unittests: offline (mock models, in-memory services); tests/integration call Gemini.
        "args": ["tests/unittests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "pydantic_ai": {
        "plugin": "gm_suite_pydantic_ai",
        # Its tests raise from models and tools on purpose (retries, failures).
        "hub_args": ["--pause-on-error", "off"],
        # Its blocking-call detector off, as its CI runs every lane but one (its conftest's
        # `blockbuster` fixture); in all three runs alike.
        "env": {"BLOCKBUSTER_ENABLED": "false"},
        # Its retry tests call one tool with the same arguments until the retries run out: attached,
        # the loop guard holds the third call (docs/protocol.md, "The loop streak"), and a hold nobody
        # answers hangs the worker (a held tool with its own `timeout=` never returned: the whole
        # run stopped). The attached run answers each loop hold `continue` through the hub's API, as
        # the person at the debugger would; the count is printed.
        "answer_loop_holds": True,
        # A selection (docs/compatibility.md; the "paths" below replace "tests"): agents over
        # FunctionModel / TestModel with tools, deferred tools, streams, history processors,
        # concurrency limits, cancellation, nested sync runs, capabilities' event streams and
        # teardown, output schemas. Its warning filters as its pyproject.toml sets them.
        "paths": [
            "tests/test_tools.py",
            "tests/test_streaming.py",
            "tests/test_history_processor.py",
            "tests/test_concurrency.py",
            "tests/test_run_cancellation.py",
            "tests/test_nested_sync_agent.py",
            "tests/test_capability_process_event_stream.py",
            "tests/test_capability_stream_teardown.py",
            "tests/test_agent_output_schemas.py",
        ],
        # 60 s, not 120: its tests take milliseconds, and a test the loop hold stops while attached
        # (EXPECTED_DIFFERENT) waits out the whole timeout.
        "args": ["tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=60"],
    },
}

# Tests that assert the exact list of a run's handlers: one more handler on every run (the point
# of the exercise) changes that list. Each is named, with why, in docs/compatibility.md.
EXPECTED_DIFFERENT: dict[str, set[str]] = {
    # Three identical calls in a row through one session: the loop hold holds the third while a
    # debugger (the hub) is attached, by design (docs/protocol.md, "The loop streak"); nobody answers
    # it in a suite, so the test times out. Each is named in docs/compatibility.md.
    "mcp": {
        "tests.client.test_session_claims::test_call_tool_overload_matrix_narrows_statically",
        "tests.docs_src.test_middleware::test_calls_made_one_after_another_never_reach_the_cap",
        "tests.examples.test_stories::test_story[stickynotes-server-http-asgi-legacy]",
        "tests.examples.test_stories::test_story[stickynotes-server-in-memory-legacy]",
        "tests.examples.test_stories::test_story[stickynotes-server_lowlevel-in-memory-legacy]",
        "tests.examples.test_stories::test_story[stickynotes-server_lowlevel-http-asgi-legacy]",
    },
    "llamaindex": set(),
    "litellm": set(),
    # The same tool with the same arguments on every turn until max_turns: the loop guard holds the
    # third identical call while the hub is attached (as mcp's above); docs/compatibility.md.
    "openai-agents": {
        "tests.test_max_turns::test_non_streamed_max_turns",
        "tests.test_max_turns::test_non_streamed_max_turns_none_disables_limit",
        "tests.test_max_turns::test_streamed_max_turns",
        "tests.test_max_turns::test_streamed_max_turns_none_disables_limit",
    },
    "openai": set(),
    "anthropic": set(),
    "google_adk": set(),
    "langchain": {
        # `trace_as_chain_group`'s manager is configured, so it holds the hook's handler too: `len == 1` fails.
        "tests.unit_tests.runnables.test_config::test_merge_config_callbacks",
    },
    "pydantic_ai": {
        # It replaces the agent's private root capability with its own and asserts that capability's
        # `wrap_run_event_stream` is what the run calls; a run capability (ours, or any other given
        # to `agent.iter(capabilities=...)`, bare) combines with it and is dispatched leaf by leaf.
        "tests.test_capability_stream_teardown::test_agent_stream_closes_custom_async_iterator",
    },
}


def outcomes(junit: Path) -> dict[str, str]:
    result: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds or "error" in kinds:
            result[name] = "failed"
        elif "skipped" in kinds:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def durations(junit: Path) -> dict[str, float]:
    """Each test's time (JUnit's `time`: setup, call and teardown)."""
    return {
        f"{case.get('classname')}::{case.get('name')}": float(case.get("time") or 0)
        for case in ET.parse(junit).getroot().iter("testcase")
    }


def node_id(src: Path, junit_name: str) -> str:
    """`tests.x.test_mod.TestCls::test_a[p]` (JUnit's classname::name) -> `tests/x/test_mod.py::TestCls::test_a[p]`."""
    classname, name = junit_name.split("::", 1)
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (src / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return junit_name


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(
    name: str,
    src: Path,
    mode: str,
    extra: list[str],
    work: Path,
    hub_url: str | None,
    only: list[str] | None = None,
) -> dict[str, Any]:
    """One pytest run of the suite; `only`: these tests alone, one process (a rerun)."""
    suite = SUITES[name]
    label = f"{mode}-rerun" if only else mode
    junit = work / f"{name}-{label}.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    for key in [k for k in env if k.startswith("GRAPHMIND_")]:
        del env[key]
    env.update(suite.get("env", {}))
    options = suite["args"]
    paths = [a for a in extra if not a.startswith("-") and (src / a.split("::")[0]).exists()]
    if only or paths:
        options = options[1:]  # test paths given: they replace the whole suite
    elif suite.get("paths"):  # the suite's selection replaces its root (globs expanded in src)
        selected = [str(p.relative_to(src)) for pattern in suite["paths"] for p in sorted(src.glob(pattern))]
        options = [*selected, *options[1:]]
    if only:
        extra = [a for a in extra if a not in paths]
    args = [sys.executable, "-m", "pytest", *options, f"--junitxml={junit}", *extra]
    if only:
        args += ["-n", "0", *only]
    if mode == "bare":
        env["GRAPHMIND_DISABLED"] = "1"
    else:
        args[3:3] = ["-p", suite["plugin"]]
        env["GRAPHMIND_URL"] = hub_url or f"ws://127.0.0.1:{closed_port()}/ingest"
        env["GRAPHMIND_SUITE_REPORT"] = str(work / f"{name}-{label}")
    started = time.monotonic()
    proc = subprocess.run(args, cwd=src, env=env, check=False)
    seconds = time.monotonic() - started
    counts: dict[str, Any] = {}
    for part in work.glob(f"{name}-{label}.*.json"):
        data = json.loads(part.read_text())
        stats = data.pop("stats", {})
        for key, value in [
            *data.items(),
            *((k, stats.get(k, 0)) for k in ("events", "sent", "dropped")),
        ]:
            counts[key] = counts.get(key, 0) + int(value)
    return {
        "mode": mode,
        "exit": proc.returncode,
        "seconds": seconds,
        "outcomes": outcomes(junit),
        "durations": durations(junit),
        "counts": counts,
    }


def answer_loop_holds(port: int, stop: threading.Event, answered: list[str]) -> None:
    """Until `stop`: every 1 s, each gate the loop guard holds answered `continue` through
    `POST /api/gates/{id}` (the viewer's call); other gates are left held."""
    body = json.dumps({"action": "continue"})
    seen: set[str] = set()
    while not stop.wait(1.0):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/api/gates")
            gates = json.loads(conn.getresponse().read())["gates"]
            for gate in gates:
                if gate.get("reason") != "loop" or gate["gateId"] in seen:
                    continue
                seen.add(gate["gateId"])
                conn.request(
                    "POST", f"/api/gates/{gate['gateId']}", body, {"Content-Type": "application/json"}
                )
                response = conn.getresponse()
                response.read()
                if response.status == 200:
                    answered.append(str(gate.get("nodeId")))
        except OSError:
            pass  # the hub busy or between restarts: the next round asks again
        finally:
            conn.close()


def hub_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {
            "hub_runs": conn.execute("SELECT count(*) FROM runs").fetchone()[0],
            "hub_nodes": conn.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "hub_events": conn.execute("SELECT count(*) FROM events").fetchone()[0],
        }


SLOWER_S = 5.0  # a test this much slower than bare is named (what makes a run slow: a hold, a wait)


def report(
    name: str,
    result: dict[str, Any],
    passed_bare: set[str],
    rerun: dict[str, Any] | None,
    bare: dict[str, Any] | None = None,
    bare_alone: dict[str, str] | None = None,
) -> int:
    """Prints one run's line, each test that passes bare but not here, and the tests that took
    SLOWER_S longer than bare (the five worst); returns the regressions."""
    out = result["outcomes"]
    tally = {k: sum(1 for o in out.values() if o == k) for k in ("passed", "failed", "skipped")}
    lost = sorted(t for t in passed_bare if out.get(t) != "passed")
    alone = rerun["outcomes"] if rerun else {}
    # Failing alone bare too: the suite's pass depended on what ran before it in the same worker
    # (xdist's split differs from run to run), not on GraphMind.
    alone_bare = bare_alone or {}
    regressed = [
        t
        for t in lost
        if t not in EXPECTED_DIFFERENT[name] and alone.get(t) != "passed" and alone_bare.get(t) == "passed"
    ]
    print(
        f"[suite {name}] {result['mode']:8} {len(out)} tests: {tally['passed']} passed, {tally['failed']} failed, "
        f"{tally['skipped']} skipped; {len(lost)} passing bare do not pass here, {len(regressed)} regressed; "
        f"{result['seconds']:.0f} s; {json.dumps(result['counts'])}"
    )
    for test in lost:
        why = (
            "expected (named in docs/compatibility.md)"
            if test in EXPECTED_DIFFERENT[name]
            else "passes when rerun alone (timing under load)"
            if alone.get(test) == "passed"
            else "fails alone bare too (its pass in the suite depends on the tests before it)"
            if alone_bare.get(test) != "passed"
            else "REGRESSED"
        )
        print(f"    {test}: {out.get(test, 'missing')}; {why}")
    if bare is not None:
        before = bare["durations"]
        grown = sorted(
            ((t - before.get(test, 0.0), test) for test, t in result["durations"].items()),
            reverse=True,
        )
        slower = [(d, test) for d, test in grown if d >= SLOWER_S]
        for _grew, test in slower[:5]:
            print(
                f"    slower: {test}: {result['durations'][test]:.1f} s, bare {before.get(test, 0.0):.1f} s"
            )
        if len(slower) > 5:
            print(f"    slower: {len(slower) - 5} more tests took {SLOWER_S:.0f} s or more longer than bare")
    return len(regressed)


def instrumented(
    name: str, src: Path, mode: str, extra: list[str], work: Path, hub_url: str | None, passed_bare: set[str]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The instrumented run, and a rerun alone of what passed bare but failed here (a wall-clock
    assertion can fail on a loaded machine with two workers; alone it shows whether GraphMind breaks it)."""
    result = run(name, src, mode, extra, work, hub_url)
    suspects = [
        t for t in passed_bare if result["outcomes"].get(t) != "passed" and t not in EXPECTED_DIFFERENT[name]
    ]
    rerun = (
        run(name, src, mode, extra, work, hub_url, only=[node_id(src, t) for t in suspects])
        if suspects
        else None
    )
    return result, rerun


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in SUITES:
        print(__doc__, file=sys.stderr)
        return 2
    name, src, extra = argv[0], Path(argv[1]).resolve(), argv[2:]
    from graphmind_server.testing import HubProcess

    with tempfile.TemporaryDirectory(prefix=f"gm-suite-{name}-") as tmp:
        work = Path(tmp)
        bare = run(name, src, "bare", extra, work, None)
        passed_bare = {t for t, o in bare["outcomes"].items() if o == "passed"}
        detached = instrumented(name, src, "detached", extra, work, None, passed_bare)
        with HubProcess(work / "hub.db", args=SUITES[name]["hub_args"]) as hub:
            stop, answered = threading.Event(), []
            answerer = threading.Thread(
                target=answer_loop_holds, args=(hub.port, stop, answered), daemon=True
            )
            if SUITES[name].get("answer_loop_holds"):
                answerer.start()
            attached = instrumented(name, src, "attached", extra, work, hub.ingest_url, passed_bare)
            stop.set()
            if SUITES[name].get("answer_loop_holds"):
                answerer.join(35)
                attached[0]["counts"]["loop_holds_answered"] = len(answered)
            time.sleep(1.0)  # the hub writes in batches; let the last one land before counting
            attached[0]["counts"].update(hub_counts(work / "hub.db"))
        # What failed alone instrumented, alone bare: the same test, the same single process.
        failed_alone = sorted(
            {
                t
                for _, rerun in (detached, attached)
                if rerun
                for t, o in rerun["outcomes"].items()
                if o != "passed"
            }
        )
        bare_alone = (
            run(name, src, "bare", extra, work, None, only=[node_id(src, t) for t in failed_alone])[
                "outcomes"
            ]
            if failed_alone
            else {}
        )
    report(name, bare, passed_bare, None)
    regressions = report(name, detached[0], passed_bare, detached[1], bare, bare_alone)
    regressions += report(name, attached[0], passed_bare, attached[1], bare, bare_alone)
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
