"""A model step's input as counted parts: tokens, shares, warnings (pure; docs/context.md).

Counted with the model's tokenizer when one is available offline (context/tokenizer.py);
otherwise estimated, and scaled so the parts sum to the input tokens the reply reported.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from . import parts as parts_mod
from .limits import context_limit
from .parts import Part
from .tokenizer import CHARS_PER_TOKEN, Tokenizer, for_model

WINDOW_SHARE = 0.8  # the window above 80 % of the model's limit
PART_SHARE = 0.3  # one part above 30 % of the window
DUPLICATE_CHARS = 200  # the same text of at least this many characters in several parts


@dataclass
class Counted:
    part: Part
    tokens: int
    key: str


def _key(part: Part) -> str:
    """Stable across steps: kind, role and the part's content, not its position."""
    body = json.dumps(part.value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    digest = hashlib.sha1(body.encode("utf-8", "replace")).hexdigest()[:16]
    return f"{part.kind}:{part.role or '-'}:{digest}"


def count(part: Part, tokenizer: Tokenizer) -> int:
    # What the 512 KB cut left out is estimated (its text is not here): the count is of the full value.
    extra = (part.cut_bytes + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    return part.overhead + sum(tokenizer.count(t) for t in part.texts if t) + extra


def _scale(tokens: list[int], target: int) -> list[int]:
    """Proportional shares of `target` summing to it exactly (largest remainder)."""
    total = sum(tokens)
    if total <= 0 or not tokens:
        return tokens
    raw = [t * target / total for t in tokens]
    out = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True)
    for i in order[: target - sum(out)]:
        out[i] += 1
    return out


def count_parts(
    node_input: Any, tokenizer: Tokenizer, reported: int | None
) -> tuple[list[Counted], bool, int | None]:
    """(counted parts, estimated, scaledTo)."""
    found = parts_mod.split(node_input)
    if tokenizer.prime is not None:  # a large new input is counted on two threads (tokenizer.py)
        tokenizer.prime([t for p in found for t in p.texts if t])
    tokens = [count(p, tokenizer) for p in found]
    estimated = not tokenizer.exact or any(p.cut for p in found)
    scaled_to = None
    if not tokenizer.exact and reported and sum(tokens) > 0:
        tokens = _scale(tokens, reported)
        scaled_to = reported
    return [Counted(p, t, _key(p)) for p, t in zip(found, tokens, strict=True)], estimated, scaled_to


def _warnings(counted: list[Counted], ids: list[str], total: int, limit: int | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if limit and total > WINDOW_SHARE * limit:
        out.append(
            {
                "code": "window",
                "message": f"the input is {total:,} tokens, {total / limit:.0%} of the model's {limit:,}-token window",
                "parts": [],
            }
        )
    base, what = (limit, "window") if limit else (total, "input (the model's window is not known)")
    for pid, c in zip(ids, counted, strict=True):
        if base and c.tokens > PART_SHARE * base:
            out.append(
                {
                    "code": "part",
                    "message": f"{c.part.label} is {c.tokens:,} tokens, {c.tokens / base:.0%} of the {what}",
                    "parts": [pid],
                }
            )
    seen: dict[str, list[str]] = {}
    for pid, c in zip(ids, counted, strict=True):
        for text in c.part.texts:
            if len(text) >= DUPLICATE_CHARS:
                holders = seen.setdefault(hashlib.sha1(text.encode("utf-8", "replace")).hexdigest(), [])
                if pid not in holders:
                    holders.append(pid)
    for holders in seen.values():
        if len(holders) > 1:
            out.append(
                {
                    "code": "duplicate",
                    "message": f"the same long text is sent {len(holders)} times ({', '.join(holders)})",
                    "parts": holders,
                }
            )
    for pid, c in zip(ids, counted, strict=True):
        if c.part.cut:
            out.append(
                {
                    "code": "cut",
                    "message": f"{c.part.label} was cut by the 512 KB preview: its count is estimated for the "
                    "full value the app sent",
                    "parts": [pid],
                }
            )
    return out


def breakdown(
    node_input: Any, model: str | None, reported: int | None
) -> tuple[dict[str, Any], list[Counted]]:
    """The breakdown fields of the API answer (without run, node and diff), and the counted parts."""
    tokenizer = for_model(model)
    counted, estimated, scaled_to = count_parts(node_input, tokenizer, reported)
    total = sum(c.tokens for c in counted)
    limit = context_limit(model)
    ids = [f"p{i}" for i in range(len(counted))]
    body_parts = []
    for pid, c in zip(ids, counted, strict=True):
        p = c.part
        body_parts.append(
            {
                "id": pid,
                "key": c.key,
                "kind": p.kind,
                "role": p.role,
                "label": p.label,
                "path": p.path,
                "textPath": p.text_path,
                "tokens": c.tokens,
                "share": round(c.tokens / total, 4) if total else 0.0,
                "chars": sum(len(t) for t in parts_mod.shown(p)) + p.cut_bytes,
                "preview": parts_mod.preview(p),
                "cut": p.cut,
            }
        )
    out = {
        "model": model,
        "tokenizer": tokenizer.name,
        "estimated": estimated,
        "reportedInputTokens": reported,
        "scaledTo": scaled_to,
        "total": total,
        "contextLimit": limit,
        "windowShare": round(total / limit, 4) if limit else None,
        "parts": body_parts,
        "warnings": _warnings(counted, ids, total, limit),
    }
    return out, counted
