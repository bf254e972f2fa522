"""Context X-ray: how long the hub takes to break down a large model input (docs/context.md).

A 200-message, ~120k-token tool loop (OpenAI chat shape, gpt-4o: the o200k_base tokenizer when it is
found offline) is split, counted and checked for warnings, as `GET /api/runs/{id}/nodes/{nodeId}/context`
does. Target: under 100 ms. Best and median of 15 runs after the tokenizer's first load (once per
hub), wall clock and process CPU, twice: cold (every text new to the hub) and the next step of the same agent with its diff
(the texts it shares with the step before are counted once).

    uv run python bench/context.py
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from graphmind_server.context.breakdown import breakdown
from graphmind_server.context.diff import step_diff
from graphmind_server.context.tokenizer import for_model

TARGET_MS = 100.0
MODEL = "gpt-4o"
WORDS = ["museum", "river", "ticket", "opening", "hours", "Cairo", "Luxor", "temple", "guide", "sunset"]


def _text(seed: int, words: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] + str((i + seed) % 997) for i in range(words))


def conversation(messages: int = 200, tokens: int = 120_000, seed: int = 0) -> dict[str, Any]:
    per = tokens // messages  # a word and its number are about two tokens
    # `_text` repeats every 9,970 seeds (10 words x 997 numbers) and a conversation takes ~100 of them:
    # 200 apart keeps the texts of 49 conversations distinct, so "cold" finds nothing counted before.
    base = seed * 200
    out: list[dict[str, Any]] = [
        {"role": "system", "content": _text(base, per // 2)},
        {"role": "user", "content": _text(base + 1, per // 2)},
    ]
    i = 0
    while len(out) < messages:
        call = {"id": f"c{i}", "name": "look", "arguments": '{"q": "x"}'}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": _text(base + i + 2, per)})
        i += 1
    return {"model": MODEL, "messages": out, "tools": ["look"]}


def next_step(current: dict[str, Any], previous: dict[str, Any]) -> None:
    counted = breakdown(current, MODEL, None)[1]
    before = breakdown(previous, MODEL, None)[1]
    step_diff(counted, before, {"nodeId": "llm:step", "instanceId": "s1"})


def _time(fn: Callable[[int], Any]) -> tuple[list[float], list[float]]:
    """Wall-clock and process CPU milliseconds of 15 samples (on a busy machine the gap is the wait)."""
    samples, cpu = [], []
    for i in range(15):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return samples, cpu


def main() -> None:
    tokenizer = for_model(MODEL)
    tokenizer.count("warm up " * 20)
    fresh = [conversation(seed=s + 1) for s in range(15)]  # a new conversation per sample: nothing remembered
    cold = _time(lambda i: breakdown(fresh[i], MODEL, None))
    current = conversation(seed=99)
    previous = {**current, "messages": current["messages"][:-2]}
    breakdown(previous, MODEL, None)  # the step before was looked at first, as the viewer walks steps
    warm = _time(lambda _i: next_step(current, previous))
    total = breakdown(current, MODEL, None)[0]["total"]
    print(f"tokenizer: {tokenizer.name}; {len(current['messages'])} messages, {total:,} tokens")
    for name, (samples, cpu) in (("cold (all text new)", cold), ("next step + diff", warm)):
        median = statistics.median(samples)
        print(
            f"{name:20} best {min(samples):6.1f} ms, median {median:6.1f} ms: "
            f"{median / TARGET_MS:.2f}x the {TARGET_MS:.0f} ms target (process CPU median "
            f"{statistics.median(cpu):.1f} ms)"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
