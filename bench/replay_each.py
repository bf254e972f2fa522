"""A batch of recorded runs replayed under one change: `graphmind replay --each DIR -- python agent.py`
(docs/replay.md, "Many runs under one change"; target: 100 cassettes in < 1 min).

Setup (not timed): a hub (`graphmind serve` on a loopback port, its own database), a fake OpenAI
provider on loopback, and bench/replay_each_agent.py (3 model calls and 4 tool calls a run, the
OpenAI SDK instrumented) recording N runs in one process through the hub; `graphmind record RUN_ID
--out DIR/NAME.jsonl` then writes each stored run as a cassette, the way a user makes them.

Timed: the `graphmind replay --each DIR --json -- python agent.py` process end to end (wall clock):
each replay is its own agent process, reports to the hub, and is read back from its database. Every
replay must give the same answer with no provider request. Also printed: the agent's own start
(`python agent.py` importing openai and graphmind, no run) so the share that is the user's process
start is plain. One batch per `--jobs` value (default: 1, then 4 replays at a time).
Run: `uv run python bench/replay_each.py [--runs 100] [--jobs 1 4]`. Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for

AGENT = Path(__file__).parent / "replay_each_agent.py"


def _model(body: dict[str, Any]) -> Any:
    """Look the order up, check the policy, then answer with what they said."""
    done = [json.loads(m["content"]) for m in body["messages"] if m.get("role") == "tool"]
    order, reason = body["messages"][1]["content"].split(": ", 1)
    if not done:
        return FakeOpenAI.tool_call("lookup_order", {"order_id": order}, call_id=f"call_l_{order}")
    if len(done) == 1:
        args = {"order_id": order, "reason": reason}
        return FakeOpenAI.tool_call("check_policy", args, call_id=f"call_p_{order}")
    return f"{done[1]['refund'].capitalize()} refund of {done[0]['paid']} for {order}."


def _stored(hub: HubProcess) -> list[dict[str, Any]]:
    status, body = hub.api("GET", "/api/runs?app=refund-bench&limit=1000")
    assert status == 200, body
    return [r for r in body["runs"] if r["status"] == "finished"]


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0] if Path("/proc/loadavg").exists() else "?"


def _batch(
    cli: list[str], env: dict[str, str], cassettes: Path, fake: FakeOpenAI, runs: int, jobs: int
) -> None:
    requests = fake.request_count
    load_before = _load()
    command = [*cli, "replay", "--each", str(cassettes), "--jobs", str(jobs), "--json"]
    t = time.perf_counter()
    each = subprocess.run(
        [*command, "--", sys.executable, str(AGENT)], env=env, capture_output=True, text=True, check=False
    )
    batch_s = time.perf_counter() - t
    assert each.returncode == 0, each.stdout[-2000:] + each.stderr[-2000:]
    report = json.loads(each.stdout)
    assert report["totals"]["same answer"] == runs, report["totals"]
    assert fake.request_count == requests, "a replay must make no provider request"
    print(
        f"replay --each --jobs {jobs} of {runs} cassettes: {batch_s:.1f} s = {batch_s / runs * 1000:.0f} ms a run "
        f"(target < 60 s for 100); load {load_before} -> {_load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument(
        "--jobs",
        type=int,
        nargs="+",
        default=[1, 4],
        help="replays at a time (--each --jobs), one batch each",
    )
    args = parser.parse_args()
    reasons = ("the mug arrived broken", "it came late", "wrong size", "I changed my mind")
    tickets = [{"order_id": f"A{i}", "text": reasons[i % len(reasons)]} for i in range(args.runs)]
    with tempfile.TemporaryDirectory(prefix="bench-each-") as tmp_name:
        tmp = Path(tmp_name)
        with HubProcess(tmp / "hub.db") as hub, FakeOpenAI(default_reply=_model) as fake:
            env = {
                **os.environ,
                "GRAPHMIND_URL": hub.ingest_url,
                "GRAPHMIND_DB": str(hub.db),
                "GRAPHMIND_HOME": str(tmp / "home"),
                "GRAPHMIND_TELEMETRY": "0",
                "FAKE_OPENAI_URL": fake.base_url,
            }
            for name in ("GRAPHMIND_SAFE", "GRAPHMIND_REPLAY_SAFE", "TICKETS"):
                env.pop(name, None)
            cli = [sys.executable, "-m", "graphmind_server"]
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(AGENT)],
                env={**env, "TICKETS": json.dumps(tickets)},
                capture_output=True,
                text=True,
                check=True,
            )
            wait_for(lambda: len(_stored(hub)) == args.runs, 60, f"the {args.runs} recorded runs")
            cassettes = tmp / "cassettes"
            cassettes.mkdir()
            for number, run in enumerate(sorted(_stored(hub), key=lambda r: r["startedAt"])):
                out = cassettes / f"{number:04d}.jsonl"
                subprocess.run(
                    [*cli, "record", run["id"], "--out", str(out)], env=env, check=True, capture_output=True
                )
            recorded_s = time.perf_counter() - start
            steps = sum(1 for line in done.stdout.splitlines() if line.endswith("-- Support"))
            assert steps == args.runs, done.stdout + done.stderr
            size = sum(p.stat().st_size for p in cassettes.iterdir()) / 1e6
            print(
                f"recorded {args.runs} runs (3 model + 4 tool calls each) in {recorded_s:.1f} s: {size:.1f} MB of cassettes"
            )

            bare = []
            for _ in range(3):
                t = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-c", "import openai, graphmind, graphmind_openai"], env=env, check=True
                )
                bare.append(time.perf_counter() - t)
            print(
                f"the agent's own start (python -c 'import openai, graphmind, graphmind_openai'): "
                f"{min(bare) * 1000:.0f} ms"
            )
            for jobs in args.jobs:
                _batch(cli, env, cassettes, fake, args.runs, jobs)
        assert "Traceback" not in hub.stderr, hub.stderr[-2000:]


if __name__ == "__main__":
    main()
