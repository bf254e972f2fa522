"""Which tokenizer counts a model's input, found offline only (docs/context.md, "Tokenizers").

Never a download at run time: tiktoken fetches an encoding file on first use unless it is in its
cache, so the file is looked for first (the same places tiktoken reads, then the copy LiteLLM ships)
and the encoding is built from it here. tiktoken and tokenizers are optional
(`graphmind-server[tokens]`); without them, or without a file, counts are estimated.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_ENCODINGS_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"

# The pieces of tiktoken's own constructors (tiktoken_ext/openai_public.py, `cl100k_base` and
# `o200k_base`), repeated because calling them would fetch the file when it is not cached.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_SPECIAL = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
_PATTERNS = {"cl100k_base": _CL100K_PAT, "o200k_base": _O200K_PAT}

# Model name prefixes (after any `provider/`) and the encoding their tokenizer is; longest wins.
_OPENAI_FAMILIES = {
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35": "cl100k_base",
    "text-embedding-3": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
}
CHARS_PER_TOKEN = 4  # the estimate without any tokenizer: about four characters a token in English


@dataclass(frozen=True)
class Tokenizer:
    """`count(text)` -> tokens; `name` is what the breakdown shows; `exact`: it is this model's own
    tokenizer (False: its counts are proportions, scaled to the reported total when there is one).
    `encode`/`decode` are set for a real tokenizer (truncation by tokens). `prime(texts)`, when set,
    counts the texts of one input ahead, together (the counts `count` then returns)."""

    name: str
    exact: bool
    count: Callable[[str], int]
    encode: Callable[[str], list[int]] | None = None
    decode: Callable[[list[int]], str] | None = None
    prime: Callable[[list[str]], None] | None = None


PARALLEL_CHARS = 200_000
"""New text in one input from which `_CountCache.prime` counts on two threads (~10 ms of BPE)."""


class _CountCache:
    """Counts remembered by (length, hash) of the text, not the text itself (bounded memory): the
    steps of one agent resend the same messages, so a step's breakdown after the one before it
    counts only what is new. Oldest out first past `size` entries."""

    def __init__(self, count: Callable[[str], int], size: int = 50_000) -> None:
        self._count = count
        self._size = size
        self._seen: dict[tuple[int, int], int] = {}

    def __call__(self, text: str) -> int:
        if len(text) < 64:  # short texts cost less to count than to remember
            return self._count(text)
        key = (len(text), hash(text))
        found = self._seen.get(key)
        if found is None:
            found = self._count(text)
            self._remember(key, found)
        return found

    def _remember(self, key: tuple[int, int], tokens: int) -> None:
        self._seen[key] = tokens
        if len(self._seen) > self._size:
            self._seen.pop(next(iter(self._seen)), None)  # another reader thread may have taken it

    def prime(self, texts: list[str]) -> None:
        """Counts an input's new long texts on two threads when there are `PARALLEL_CHARS` of them:
        tiktoken's BPE releases the GIL, so a large cold input (a 120k-token conversation: ~20 ms of
        BPE) is counted in about half the time, and on a busy machine gets two shares of the CPU.
        Below that, `count` counts each text when it is asked."""
        new: dict[tuple[int, int], str] = {}
        for text in texts:
            if len(text) >= 64:
                key = (len(text), hash(text))
                if key not in self._seen:
                    new[key] = text
        chars = sum(k[0] for k in new)
        if chars < PARALLEL_CHARS:
            return
        items = list(new.items())
        half, cut = 0, 0
        while cut < len(items) and half < chars // 2:
            half += items[cut][0][0]
            cut += 1
        theirs: list[int] = []
        other = threading.Thread(
            target=lambda: theirs.extend(self._count(t) for _k, t in items[:cut]),
            name="graphmind-tokens",
            daemon=True,
        )
        other.start()
        try:
            mine = [self._count(t) for _k, t in items[cut:]]
        finally:
            other.join()
        # `theirs` is short only if its thread failed: `count` then counts the rest one by one.
        counted = [*zip(items[: len(theirs)], theirs, strict=True), *zip(items[cut:], mine, strict=True)]
        for (key, _t), tokens in counted:
            self._remember(key, tokens)


def _estimate(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


ESTIMATE = Tokenizer(f"estimated (characters / {CHARS_PER_TOKEN})", False, _estimate)


def _search_dirs() -> list[Path]:
    dirs = [os.environ.get("TIKTOKEN_CACHE_DIR"), os.environ.get("DATA_GYM_CACHE_DIR")]
    out = [Path(d) for d in dirs if d]
    out.append(Path(tempfile.gettempdir()) / "data-gym-cache")  # tiktoken's default cache
    # LiteLLM ships both encodings (litellm/litellm_core_utils/tokenizers/, named as tiktoken's
    # cache names them); find_spec locates the package without importing it.
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        out.append(Path(location) / "litellm_core_utils" / "tokenizers")
    return out


def encoding_file(name: str) -> Path | None:
    """The local file of a tiktoken encoding, or None (then nothing would work offline)."""
    key = hashlib.sha1(_ENCODINGS_URL.format(name).encode()).hexdigest()
    for folder in _search_dirs():
        candidate = folder / key
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=4)
def _tiktoken(name: str) -> Tokenizer | None:
    if name not in _PATTERNS or importlib.util.find_spec("tiktoken") is None:
        return None
    path = encoding_file(name)
    if path is None:
        return None
    import tiktoken  # optional: graphmind-server[tokens]

    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(
        name=name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens=_SPECIAL[name]
    )

    def count(text: str) -> int:
        return len(enc.encode_ordinary(text))

    cache = _CountCache(count)
    return Tokenizer(name, True, cache, enc.encode_ordinary, enc.decode, cache.prime)


def _hf_tokenizer(path: Path, name: str) -> Tokenizer:
    from tokenizers import Tokenizer as HfTokenizer  # optional: graphmind-server[tokens]

    tok = HfTokenizer.from_file(str(path))

    def encode(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False).ids)

    def decode(ids: list[int]) -> str:
        return str(tok.decode(ids))

    return Tokenizer(name, False, _CountCache(lambda text: len(encode(text))), encode, decode)


@functools.lru_cache(maxsize=1)
def _anthropic() -> Tokenizer | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or importlib.util.find_spec("tokenizers") is None:
        return None
    for location in spec.submodule_search_locations or []:
        path = Path(location) / "litellm_core_utils" / "tokenizers" / "anthropic_tokenizer.json"
        if path.is_file():
            # Anthropic's older published tokenizer: newer Claude models count differently, so its
            # counts are proportions (estimated), scaled to the input tokens the reply reports.
            return _hf_tokenizer(path, "anthropic_tokenizer.json (approximate)")
    return None


def family_encoding(model: str | None) -> str | None:
    """The tiktoken encoding of an OpenAI model name, or None."""
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    best = None
    for prefix in _OPENAI_FAMILIES:
        if name.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return _OPENAI_FAMILIES[best] if best is not None else None


def for_model(model: str | None) -> Tokenizer:
    """The best offline tokenizer for a model: its own (exact), else an approximation, else chars/4."""
    encoding = family_encoding(model)
    if encoding is not None:
        found = _tiktoken(encoding)
        if found is not None:
            return found
    name = (model or "").lower()
    if "claude" in name:
        found = _anthropic()
        if found is not None:
            return found
    # Another model's tokenizer still splits text closer to real tokens than characters / 4 do.
    other = _tiktoken("o200k_base")
    if other is not None:
        return Tokenizer(
            "estimated (o200k_base proportions)", False, other.count, other.encode, other.decode, other.prime
        )
    return ESTIMATE
