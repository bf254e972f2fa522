"""A year of runs: a hub database filled with 20,000 runs / 20 million events, then what a person waits
for in it.

    uv run python bench/year_of_runs.py                    # the whole year (20,000 runs, ~20M events)
    uv run python bench/year_of_runs.py --scale 0.05       # 1,000 runs, ~1M events: a quick figure
    uv run python bench/year_of_runs.py --db year.db --keep-db    # keep the file (a second run reuses it)
    uv run python bench/year_of_runs.py --db year.db --skip-prune # the reads only (the prune deletes runs)
    uv run python bench/year_of_runs.py --db year.db --fill --fill-minutes 60   # fill only; again: go on
    uv run python bench/year_of_runs.py --trends           # also time GET /api/trends (if the hub has it)
    uv run python bench/year_of_runs.py --db big.db --one-run 1000000   # one run of a million events

- **The fill** goes through the store's own door for `graphmind import` (store/importing.py): the
  hub's writer, its dedupe, run and node summaries and search index, in big transactions (one per
  200 runs), so the file is what a hub that stored these events would hold. Then each run's
  `received_at` (the hub's clock, which the list's order and `--days` read) is spread over the last
  365 days, as a year of use would have left it.
- **The runs**: 5 apps, 8 models, 400 threads (`meta.threadId`); sizes skewed as real use is (60 %
  short runs of ~100 events, 30 % of ~1,000, 10 % long ones of ~7,000); a model step carries a
  ~2 KB prompt and a ~500-character answer with token usage, a tool step ~200 characters each way;
  one run in 20 ends in error.
- **The reads** (a real hub, `graphmind serve` in a subprocess on the file, retention off): the
  runs list and each filter, search (a common word, a rare one, within a run), opening a run (its
  summary and every page of its events, as the viewer loads it) for the longest run and random ones;
  each timed 5 times, the median and the max given.
- **The prune**: the hub restarted with `--keep` at half the runs (`--prune-runs N`: the oldest N)
  while a real `graphmind.Client` keeps sending events (its ring: `--ring`); says how long the hub took to listen again, the events sent, stored and
  lost (the client's own count); then the runs list's `q=` and search again (a prune once slowed them).
- Also the file's size per million events and the hub's RSS after the reads.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

APPS = ["support-bot", "research-agent", "code-review", "travel-planner", "billing-assistant"]
MODELS = [
    "gpt-4o",
    "gpt-4o-mini",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "llama-3.3-70b",
    "mistral-large",
]
TOOLS = ["search", "fetch_page", "run_sql", "send_email", "read_file", "calculator"]
WORDS = [
    "the",
    "customer",
    "asked",
    "about",
    "an",
    "invoice",
    "refund",
    "shipping",
    "delay",
    "order",
    "status",
    "account",
    "password",
    "reset",
    "flight",
    "hotel",
    "booking",
    "itinerary",
    "museum",
    "weather",
    "forecast",
    "budget",
    "report",
    "quarterly",
    "revenue",
    "churn",
    "python",
    "function",
    "error",
    "stack",
    "trace",
    "retry",
    "timeout",
    "database",
    "migration",
    "index",
    "query",
    "latency",
]
RARE = "zanzibar"  # one word in a few runs only: the search a person makes for one thing
THREADS = 400
YEAR_MS = 365 * 86_400_000
RUNS_PER_TRANSACTION = 200


def _words(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


_POOL: list[str] = []  # texts of 4,000 characters to cut from: a word per character is the fill's cost


def _text(rng: random.Random, chars: int) -> str:
    if not _POOL:
        _POOL.extend(_words(random.Random(i), 4000) for i in range(64))
    text = _POOL[rng.randrange(len(_POOL))]
    start = rng.randrange(0, 4000 - chars) if chars < 4000 else 0
    start = text.find(" ", start) + 1  # whole words
    return text[start : start + chars]


def _steps(rng: random.Random) -> int:
    """Model-and-tool rounds of one run (4 events each): ~100, ~1,000 or ~7,000 events."""
    roll = rng.random()
    if roll < 0.6:
        return rng.randint(15, 35)
    if roll < 0.9:
        return rng.randint(200, 300)
    return rng.randint(1500, 2000)


AGENT_BLOCK = 25  # a team's run: each agent takes 25 model-and-tool rounds, then hands off


def run_events(
    rng: random.Random,
    index: int,
    started_ms: float,
    seq: int = 0,
    steps: int | None = None,
    *,
    step0: int = 0,
    agents: tuple[str, ...] = (),
) -> tuple[str, str, list[dict[str, Any]]]:
    """One run's events, as an app's SDK would have sent them: (runId, app, events); `seq`: the last
    one its client used (a client numbers every event it makes, across its runs). `step0`: the first
    step's number (a run made in parts keeps its instance ids apart); `agents`: a team (the first is
    the root), their model steps and handoffs as docs/protocol.md ("Agents") names them."""
    app = APPS[index % len(APPS)]
    run_id = f"run-{index:06d}"
    model = rng.choice(MODELS)
    ts = started_ms
    events: list[dict[str, Any]] = []

    def event(type_: str, **fields: Any) -> None:
        nonlocal seq, ts
        seq += 1
        ts += rng.uniform(5, 400)
        events.append({"type": type_, "seq": seq, "ts": round(ts, 1), "runId": run_id, **fields})

    meta = {"threadId": f"thread-{rng.randrange(THREADS)}", "user": f"user-{rng.randrange(200)}"}
    event("run.started", name=app, app=app, nodeId=f"agent:{app}", instanceId=run_id, kind="agent", meta=meta)
    prompt = _text(rng, 2000) + (f" {RARE}" if index % 997 == 0 else "")
    fails = index % 20 == 0
    steps = _steps(rng) if steps is None else steps
    for step in range(step0, step0 + steps):
        llm = f"l{step}"
        team: dict[str, Any] = {}
        llm_node = "llm:chat"
        if agents:
            agent = agents[step // AGENT_BLOCK % len(agents)]
            team = {"agent": agent, "agentPath": [agents[0]] if agent == agents[0] else [agents[0], agent]}
            llm_node = "llm:step" if agent == agents[0] else f"llm:step@{agent}"
            if step % AGENT_BLOCK == 0 and step:
                source = agents[(step // AGENT_BLOCK - 1) % len(agents)]
                handoff = f"{source}->{agent}"
                event(
                    "node.started",
                    nodeId=f"handoff:{handoff}",
                    instanceId=f"h{step}",
                    kind="handoff",
                    name=handoff,
                    parentInstanceId=run_id,
                    agent=source,
                    agentPath=[agents[0]] if source == agents[0] else [agents[0], source],
                    attrs={"from": source, "to": agent},
                    input={"task": _text(rng, 300)},
                )
                event(
                    "node.finished",
                    nodeId=f"handoff:{handoff}",
                    instanceId=f"h{step}",
                    output={"result": _text(rng, 200)},
                    durationMs=round(rng.uniform(1, 20), 1),
                    heldMs=0.0,
                )
        event(
            "node.started",
            nodeId=llm_node,
            instanceId=llm,
            kind="llm",
            name=llm_node.split(":", 1)[1].split("@")[0],
            parentInstanceId=run_id,
            attrs={"model": model},
            **team,
            input={
                "model": model,
                "messages": [{"role": "user", "content": prompt[: rng.randint(1500, 2000)]}],
            },
        )
        event(
            "node.finished",
            nodeId=llm_node,
            instanceId=llm,
            output={"role": "assistant", "content": _text(rng, 500)},
            usage={"inputTokens": 500, "outputTokens": 120, "totalTokens": 620},
            durationMs=round(rng.uniform(300, 3000), 1),
            heldMs=0.0,
        )
        tool = rng.choice(TOOLS)
        node = f"tool:{tool}"
        event(
            "node.started",
            nodeId=node,
            instanceId=f"t{step}",
            kind="tool",
            name=tool,
            parentInstanceId=run_id,
            input={"query": _text(rng, 200)},
            **team,
        )
        if fails and step == steps - 1:
            event(
                "node.error",
                nodeId=node,
                instanceId=f"t{step}",
                error={"type": "TimeoutError", "message": "the backend did not answer in 30 s"},
                durationMs=30000.0,
            )
        else:
            event(
                "node.finished",
                nodeId=node,
                instanceId=f"t{step}",
                output={"result": _text(rng, 200)},
                durationMs=round(rng.uniform(5, 200), 1),
                heldMs=0.0,
            )
    if fails:
        event("run.finished", status="error", durationMs=ts - started_ms, error={"type": "TimeoutError"})
    else:
        event("run.finished", status="finished", durationMs=ts - started_ms)
    return run_id, app, events


FREE_FLOOR = 14 * 1024**3  # the fill stops before the disk has less than this free (a shared disk)


def fill(db: Path, runs: int, seed: int = 7, minutes: float | None = None) -> int:
    """Writes `runs` runs through the import door; returns the events stored. A file filled part way
    (stopped by `minutes`, the disk's floor or Ctrl-C: a transaction of 200 runs is all or nothing)
    goes on from its last run: each run draws from its own random stream, each client's seqs go on
    from what is stored."""
    import shutil

    from graphmind_server.store.importing import Import
    from graphmind_server.store.items import EventItem

    now = time.time() * 1000
    imp = Import(db)
    stored = 0
    last_seq: dict[str, int] = {}  # per client: the hub stores an event once per (clientId, seq)
    # The run after the last one stored (a prune may have deleted the oldest since).
    last = imp.conn.execute("SELECT MAX(id) FROM runs WHERE id GLOB 'run-[0-9]*'").fetchone()[0]
    began = int(last[4:]) + 1 if last else 0
    if began:
        print(f"  going on after the {began:,} runs stored", flush=True)
    started = time.monotonic()
    try:
        for first in range(began, runs, RUNS_PER_TRANSACTION):
            if minutes is not None and time.monotonic() - started > minutes * 60:
                print(f"  stopped after {minutes:g} min (--fill-minutes)", flush=True)
                break
            free = shutil.disk_usage(db.parent).free
            if free < FREE_FLOOR:
                print(f"  stopped: {free / 1024**3:.1f} GiB free on the disk", flush=True)
                break
            with imp.transaction():
                for index in range(first, min(runs, first + RUNS_PER_TRANSACTION)):
                    rng = random.Random(seed * 1_000_003 + index)
                    started_ms = now - YEAR_MS + YEAR_MS * index / runs
                    app = APPS[index % len(APPS)]
                    client = f"client-{app}-{index // 50}"  # an app process makes 10 runs
                    if client not in last_seq:
                        row = imp.conn.execute("SELECT MAX(seq) FROM events WHERE client_id = ?", (client,))
                        last_seq[client] = row.fetchone()[0] or 0
                    run_id, app, events = run_events(rng, index, started_ms, last_seq[client])
                    last_seq[client] = events[-1]["seq"]
                    items = [
                        EventItem(client, app, e, json.dumps(e, separators=(",", ":")), e["ts"])
                        for e in events
                    ]
                    for i in range(0, len(items), 2000):
                        stored += imp.write(items[i : i + 2000])
                    # The hub's clock: when it first stored the run (store/retention.py), a year ago to now.
                    imp.conn.execute("UPDATE runs SET received_at = ? WHERE id = ?", (started_ms, run_id))
            done = min(runs, first + RUNS_PER_TRANSACTION)
            rate = stored / max(time.monotonic() - started, 1e-9)
            print(
                f"  filled {done:,}/{runs:,} runs, {stored:,} events ({rate:,.0f} events/s; "
                f"load {os.getloadavg()[0]:.1f}; {time.strftime('%H:%M:%S')})",
                flush=True,
            )
    finally:
        imp.close()
    return stored


ONE_RUN_AGENTS = ("triage", "researcher", "writer")


def fill_one_run(db: Path, events: int) -> int:
    """One run of about `events` events (the million-event run the viewer is measured on): a team of
    three agents handing off every 25 rounds, each round a model step (a ~2 KB prompt, a ~500-character
    answer) and a tool call; made and written 50,000 events at a time (a transaction each); returns
    the events stored."""
    from graphmind_server.store.importing import Import
    from graphmind_server.store.items import EventItem

    rng = random.Random(11)
    # 4 events a round, 2 more per handoff (one every AGENT_BLOCK rounds), run.started and finished.
    steps_left = max(1, round((events - 2) / (4 + 2 / AGENT_BLOCK)))
    ts, seq, stored, step0 = time.time() * 1000 - 3_600_000, 0, 0, 0
    imp = Import(db)
    try:
        while steps_left:
            steps = min(steps_left, 12_500)
            steps_left -= steps
            _, app, part = run_events(rng, 1, ts, steps=steps, step0=step0, agents=ONE_RUN_AGENTS)
            # One run: its run.started first, its run.finished last, the seqs one sequence.
            part = part[(0 if not step0 else 1) : (None if not steps_left else -1)]
            step0 += steps
            for event in part:
                seq += 1
                event["seq"] = seq
            ts = part[-1]["ts"]
            with imp.transaction():
                items = [
                    EventItem("client-one-run", app, e, json.dumps(e, separators=(",", ":")), e["ts"])
                    for e in part
                ]
                for i in range(0, len(items), 2000):
                    stored += imp.write(items[i : i + 2000])
            print(f"  {stored:,} events", flush=True)
    finally:
        imp.close()
    return stored


# -- the reads ------------------------------------------------------------------------------------


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _timed(port: int, paths: list[str], repeat: int = 5) -> tuple[float, float, int]:
    """Median and max ms of fetching `paths` in turn (one "open"), over `repeat` tries; the last status."""
    times = []
    status = 0
    for _ in range(repeat):
        began = time.perf_counter()
        for path in paths:
            status, _ = _get(port, path)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), max(times), status


def _open_paths(port: int, run_id: str) -> list[str]:
    """What the viewer fetches to open a run: its summary, then every page of its events."""
    paths = [f"/api/runs/{quote(run_id)}"]
    after = 0
    while True:
        path = f"/api/runs/{quote(run_id)}/events?after={after}&limit=5000"
        paths.append(path)
        status, body = _get(port, path)
        if status != 200:
            raise SystemExit(f"year_of_runs: GET {path}: HTTP {status} {body[:200]!r}")
        after = json.loads(body)["next"]
        if after is None:
            return paths


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _line(what: str, target_ms: float, figures: tuple[float, float, int]) -> None:
    median, worst, status = figures
    mark = "ok" if worst < target_ms and status == 200 else "OVER"
    print(
        f"  {what:<46} median {median:7.1f} ms, max {worst:7.1f} ms (HTTP {status}; target < {target_ms:.0f} ms) {mark}"
    )


def reads(port: int, runs: int, trends: str | None) -> None:
    now = time.time() * 1000
    print("the runs list and its filters:")
    for what, path in [
        ("newest 50", "/api/runs?limit=50"),
        ("status=error", "/api/runs?limit=50&status=error"),
        ("app=travel-planner", "/api/runs?limit=50&app=travel-planner"),
        ("model=gemini-2.5-pro", "/api/runs?limit=50&model=gemini-2.5-pro"),
        ("tool=run_sql", "/api/runs?limit=50&tool=run_sql"),
        ("error=1", "/api/runs?limit=50&error=1"),
        ("kind=llm & app", "/api/runs?limit=50&kind=llm&app=code-review"),
        ("since: the last 30 days", f"/api/runs?limit=50&since={now - 30 * 86_400_000:.0f}"),
        (
            "a day 200 days ago",
            f"/api/runs?limit=50&since={now - 200 * 86_400_000:.0f}&until={now - 199 * 86_400_000:.0f}",
        ),
        ("q=refund (in every run)", "/api/runs?limit=50&q=refund"),
        (f"q={RARE} (in a few runs)", f"/api/runs?limit=50&q={RARE}"),
    ]:
        _line(what, 200, _timed(port, [path]))
    print("search:")
    _line("refund (everywhere)", 300, _timed(port, ["/api/search?q=refund"]))
    _line(f"{RARE} (rare)", 300, _timed(port, [f"/api/search?q={RARE}"]))
    _line("two words", 300, _timed(port, ["/api/search?q=invoice%20timeout"]))
    _line("within the longest run", 300, _timed(port, [f"/api/search?q=refund&run={quote(_longest(port))}"]))
    print("opening a run (its summary and every page of its events):")
    longest = _longest(port)
    rng = random.Random(3)
    _, body = _get(port, "/api/runs?limit=1000")
    listed = [r["id"] for r in json.loads(body)["runs"]]
    for run_id in [longest, *(rng.choice(listed) for _ in range(4))]:
        paths = _open_paths(port, run_id)
        _line(f"{run_id} ({len(paths) - 1} page(s))", 500, _timed(port, paths, repeat=3))
    if trends:
        status, _ = _get(port, trends)
        if status == 404:
            print(f"trends: GET {trends} is not on this hub (404): nothing timed")
        else:
            _line(f"trends: GET {trends}", 1000, _timed(port, [trends]))


_LONGEST: dict[int, str] = {}


def _longest(port: int) -> str:
    if port not in _LONGEST:
        _, body = _get(port, "/api/runs?limit=1000")
        listed = json.loads(body)["runs"]
        _LONGEST[port] = max(listed, key=lambda r: r["eventCount"])["id"]
    return _LONGEST[port]


# -- the prune while an app keeps sending -----------------------------------------------------------


def prune_under_ingest(
    db: Path, home: Path, runs: int, prune_runs: int | None = None, wait_s: float = 1800, ring: int = 5000
) -> None:
    import graphmind
    from graphmind_server.testing import HubProcess

    keep = max(1, runs // 2 if prune_runs is None else runs - prune_runs)
    os.environ["GRAPHMIND_HOME"] = str(home)
    hub = HubProcess(db, env={"GRAPHMIND_HOME": str(home), "GRAPHMIND_RETENTION": "off"}, start_timeout=600)
    try:
        # The app: a real client, attached, sending ~1,000 events/s through the restart. Its ring
        # (5,000 events by default, `--ring`) is what it has to ride out a hub that is not listening.
        client = graphmind.Client(
            app="during-prune", url=hub.ingest_url, retry_interval=0.2, buffer_size=ring
        )
        if not client.ready(30):
            raise SystemExit("year_of_runs: the app did not attach")
        stop = threading.Event()

        def app() -> None:
            work = client.wrap(lambda i: i, name="step")
            with client.run("during-prune"):
                while not stop.is_set():
                    for i in range(10):
                        work(i)
                    time.sleep(0.02)

        thread = threading.Thread(target=app)
        thread.start()
        time.sleep(2)
        hub.stop()
        began = time.monotonic()
        # --keep alone decides (a year of runs is all older than the default --days).
        hub.env = {
            "GRAPHMIND_HOME": str(home),
            "GRAPHMIND_KEEP_RUNS": str(keep),
            "GRAPHMIND_KEEP_DAYS": "36500",
        }
        hub.start(hub.port)
        listening = time.monotonic() - began
        deadline = time.monotonic() + wait_s
        while "pruned" not in hub.stderr and time.monotonic() < deadline:  # a big prune: in the background
            time.sleep(0.5)
        pruning = time.monotonic() - began
        done = "pruned" in hub.stderr
        time.sleep(2)
        stop.set()
        thread.join()
        client.dispose()  # flushes what is left
        stats = client.stats()
        made, dropped = stats["events"], stats["dropped"]
        time.sleep(1)  # the writer's last transaction
        _, body = _get(hub.port, "/api/runs?limit=1000&app=during-prune")
        stored = sum(r["eventCount"] for r in json.loads(body)["runs"])
        pruned = next((line for line in hub.stderr.splitlines() if "pruned" in line), "(nothing pruned)")
        # The reads the prune's deletes once slowed (the index's dead entries, store/index_merge.py).
        after = [
            ("after the prune: runs list q=refund", 200, _timed(hub.port, ["/api/runs?limit=50&q=refund"])),
            ("after the prune: search refund", 300, _timed(hub.port, ["/api/search?q=refund"])),
            (f"after the prune: search {RARE}", 300, _timed(hub.port, [f"/api/search?q={RARE}"])),
        ]
    finally:
        hub.stop()
    print(
        f"prune to the newest {keep:,} of {runs:,} runs at start-up, an app sending all along: the hub listened "
        f"again {listening:.1f} s after it was started, the prune "
        f"{'was done' if done else 'was still going (--prune-wait)'} after {pruning:.1f} s; "
        f"the app (ring {ring:,} events) made {made:,} events, the hub stored "
        f"{stored:,} ({made - stored:,} lost), the client counted {dropped} dropped\n  {pruned.strip()}"
    )
    for what, target, figures in after:
        _line(what, target, figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 20,000 runs (~20M events)")
    parser.add_argument("--db", type=Path, help="the database file (default: a temporary one)")
    parser.add_argument("--keep-db", action="store_true", help="keep the file (with --db)")
    parser.add_argument("--skip-prune", action="store_true", help="the reads only (the prune deletes runs)")
    parser.add_argument(
        "--fill",
        action="store_true",
        help="fill --db (going on from a file filled part way) and stop: no reads, no prune",
    )
    parser.add_argument("--fill-minutes", type=float, help="stop the fill after this long (a clean stop)")
    parser.add_argument("--skip-reads", action="store_true", help="the prune only (on a kept file)")
    parser.add_argument("--prune-runs", type=int, help="the prune deletes the oldest N runs (default: half)")
    parser.add_argument(
        "--prune-wait", type=float, default=1800, help="seconds to wait for the prune and its index clean-up"
    )
    parser.add_argument("--ring", type=int, default=5000, help="the sending app's ring (buffer_size), events")
    parser.add_argument(
        "--trends",
        nargs="?",
        const="/api/trends",
        default=None,
        help="also time this route (default /api/trends)",
    )
    parser.add_argument(
        "--one-run",
        type=int,
        metavar="EVENTS",
        help="instead: fill --db with one run of EVENTS events (e.g. 1000000) and stop",
    )
    args = parser.parse_args()
    if args.scale <= 0:
        raise SystemExit("year_of_runs: --scale must be above 0")
    if args.one_run is not None:
        if args.db is None or args.one_run < 1:
            raise SystemExit("year_of_runs: --one-run needs --db FILE and a number of events above 0")
        stored = fill_one_run(args.db, args.one_run)
        print(
            f"{stored:,} events in run-000001; open it: graphmind serve --db {args.db} (GRAPHMIND_RETENTION=off)"
        )
        return
    runs = max(1, round(20_000 * args.scale))
    if args.fill:
        if args.db is None:
            raise SystemExit("year_of_runs: --fill needs --db FILE")
        began = time.monotonic()
        stored = fill(args.db, runs, minutes=args.fill_minutes)
        print(
            f"  {stored:,} events stored in {time.monotonic() - began:.0f} s; {_count(args.db):,} in the file"
        )
        return

    from graphmind_server.testing import HubProcess

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "year.db"
        home = Path(tmp) / "home"
        if db.exists():
            print(f"reusing {db}")
        else:
            print(f"filling {db} with {runs:,} runs")
            began = time.monotonic()
            fill(db, runs, minutes=args.fill_minutes)
            print(f"  filled in {time.monotonic() - began:.0f} s")
        events_total = _count(db)
        runs = _count(db, "runs")  # a file filled before (and pruned since) has what it has
        size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
        print(
            f"database: {size / 1e6:,.0f} MB for {events_total:,} events: "
            f"{size / 1e6 / max(events_total / 1e6, 1e-9):,.0f} MB per million events"
        )
        env = {"GRAPHMIND_HOME": str(home), "GRAPHMIND_RETENTION": "off"}
        if not args.skip_reads:
            with HubProcess(db, env=env, start_timeout=600) as hub:
                assert hub.proc is not None
                print(f"hub RSS at start: {_rss_mb(hub.proc.pid):.0f} MB")
                reads(hub.port, runs, args.trends)
                print(f"hub RSS after the reads: {_rss_mb(hub.proc.pid):.0f} MB (target < 300 MB)")
        if not args.skip_prune:
            prune_under_ingest(db, home, runs, args.prune_runs, args.prune_wait, args.ring)
        if args.db and not args.keep_db:
            for p in db.parent.glob(db.name + "*"):
                p.unlink()
    print(f"load average {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")


def _count(db: Path, table: str = "events") -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


if __name__ == "__main__":
    sys.exit(main())
