"""The loop hold: the same tool, with the same arguments, called again and again in one run.

Every watched call (tool calls by default) is fingerprinted at its start. "In a row" is per line
of execution: within a run, the run; for calls outside any run (the implicit run), the calling
thread or asyncio / trio task, so unrelated requests of one process never form a streak. Any other
watched call in between on the same line starts the count again; unwatched calls (LLM steps) do not.
When the streak reaches the threshold the call is held at its before gate if a debugger is
attached and the mode is ``pause``; otherwise one warning is logged per streak. The rules and
messages are the environment page's "Loop hold" section.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._base import forksafe
from .._events.jsonsafe import to_jsonable
from .._events.mask import mask_value
from .._events.redaction import PLACEHOLDER
from .exec_lines import line_of_execution
from .fingerprint import (
    DEFAULT_IGNORE_KEYS,
    digest_of,
    fingerprint,
    flat_copy,
    flat_owned,
    same_flat,
    text_function,
)

__all__ = [
    "LoopGuard",
    "LoopGuardConfig",
    "LoopHit",
    "fingerprint",
    "loop_warning",
    "resolve_loop_guard_config",
]

DEFAULT_THRESHOLD = 3
DEFAULT_KINDS = ("tool",)
MODES = ("pause", "warn", "off")
_OFF_SPELLINGS = ("0", "false", "none")
_OPTION_KEYS = {
    "threshold": "threshold",
    "mode": "mode",
    "allow_nodes": "allow_nodes",
    "allowNodes": "allow_nodes",
    "ignore_keys": "ignore_keys",
    "ignoreKeys": "ignore_keys",
    "kinds": "kinds",
}
MAX_TRACKED_RUNS = 1024


# ---- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LoopGuardConfig:
    threshold: int = DEFAULT_THRESHOLD
    mode: str = "pause"  # "pause" | "warn" | "off"
    allow_nodes: tuple[str, ...] = ()
    ignore_keys: tuple[str, ...] = DEFAULT_IGNORE_KEYS
    kinds: tuple[str, ...] = DEFAULT_KINDS
    # Where `mode` came from ("default", "env", "option"): the warning names the knob that set it.
    mode_origin: str = field(default="default", compare=False)

    @property
    def enabled(self) -> bool:
        return self.threshold > 0 and self.mode != "off"

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "mode": self.mode,
            "allow_nodes": list(self.allow_nodes),
            "ignore_keys": list(self.ignore_keys),
            "kinds": list(self.kinds),
            "enabled": self.enabled,
        }


def _env_threshold(raw: str | None) -> int | None:
    """A whole number >= 0; anything else falls back to the default (None: not set)."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    return int(text) if text.isascii() and text.isdigit() else DEFAULT_THRESHOLD


def _env_mode(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    text = raw.strip().lower()
    if text in MODES:
        return text
    return "off" if text in _OFF_SPELLINGS else "pause"  # unknown values fall back to pause


def _split(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _option_threshold(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ValueError(f"loop_guard threshold={value!r} is not a whole number >= 0 (0 turns the loop hold off)")


def _option_mode(value: Any) -> str:
    if value is False:
        return "off"
    if isinstance(value, str):
        text = value.strip().lower()
        if text in MODES:
            return text
        if text in _OFF_SPELLINGS:
            return "off"
    raise ValueError(f"loop_guard mode={value!r} is not one of 'pause', 'warn' or 'off'")


def _option_names(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return _split(value)
    if isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
        if all(isinstance(item, str) for item in items):
            return tuple(str(item).strip() for item in items if str(item).strip())
    raise ValueError(f"loop_guard {name}={value!r} must be a list of strings")


def resolve_loop_guard_config(
    option: Mapping[str, Any] | bool | None, environ: Mapping[str, str]
) -> LoopGuardConfig:
    """For each field: the option, else the environment variable, else the default.

    Raises ValueError (one line) for an option it cannot read; environment values never raise.
    """
    threshold = _env_threshold(environ.get("GRAPHMIND_LOOP_THRESHOLD"))
    mode = _env_mode(environ.get("GRAPHMIND_ON_LOOP"))
    allow_raw = environ.get("GRAPHMIND_LOOP_ALLOW")
    values: dict[str, Any] = {
        "threshold": DEFAULT_THRESHOLD if threshold is None else threshold,
        "mode": mode or "pause",
        "mode_origin": "default" if mode is None else "env",
    }
    if allow_raw is not None:
        values["allow_nodes"] = _split(allow_raw)
    if option is None or option is True:
        return LoopGuardConfig(**values)
    if option is False:
        return LoopGuardConfig(**{**values, "mode": "off", "mode_origin": "option"})
    if not isinstance(option, Mapping):
        raise ValueError(
            f"loop_guard={option!r} must be False, True, None or a dict such as {{'threshold': 5}}"
        )
    for key, value in option.items():
        name = _OPTION_KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            known = ", ".join(sorted(set(_OPTION_KEYS.values())))
            raise ValueError(f"loop_guard has no option {key!r} (known: {known})")
        if value is None:
            continue  # None means "not set": the environment or the default applies
        if name == "threshold":
            values["threshold"] = _option_threshold(value)
        elif name == "mode":
            values["mode"] = _option_mode(value)
            values["mode_origin"] = "option"
        else:
            values[name] = _option_names(name, value)
    return LoopGuardConfig(**values)


# ---- the guard -------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoopHit:
    repeats: int
    first_seq: int
    last_seq: int
    fingerprint: str
    # Retry at the loop hold (docs/protocol.md, "Gates"): the held call runs as the first call of a
    # new streak, so the next identical call does not hold at once.
    restart: Callable[[], None] = field(default=lambda: None, compare=False, repr=False)

    def as_wire(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "firstSeq": self.first_seq,
            "lastSeq": self.last_seq,
            "fingerprint": self.fingerprint,
        }


@dataclass(slots=True)
class _Streak:
    node_id: str
    # hash() and length of the canonical text, not the text (arguments can be megabytes) nor its
    # sha256 (computed only when a call is held: the wire's fingerprint); or, for flat arguments
    # of short scalars, a copy of them (`flat_copy`: compared without an encode, same answer).
    key: tuple[int, int] | dict[str, Any]
    count: int
    first_seq: int
    warned: bool = False


def cannot_hold() -> bool:
    """The `attached` a call no gate can reach passes (a provider-executed tool): never held, so
    its streak is warned about, with the reason that fits (`loop_warning`)."""
    return False


def loop_warning(
    name: str, node_id: str, repeats: int, config: LoopGuardConfig, *, ungated: bool = False
) -> str:
    """The one line logged per streak that is not held. Names the tool, never its arguments."""
    if ungated:
        why = "it ran on the provider's side, where no gate can hold it"
    elif config.mode == "warn":
        knob = 'loop_guard={"mode": "warn"}' if config.mode_origin == "option" else "GRAPHMIND_ON_LOOP=warn"
        why = f"{knob}, so it is not being held"
    else:
        why = "no debugger is attached to hold it (start `graphmind` to pause it there)"
    return (
        f"[graphmind] possible loop: {name} ({node_id}) was called {repeats}× in a row with identical "
        f'arguments; {why}. Polling on purpose? add it to loop_guard={{"allow_nodes": [...]}} or '
        "GRAPHMIND_LOOP_ALLOW; GRAPHMIND_ON_LOOP=off silences this"
    )


def _always(value: bool) -> Callable[[], bool]:
    return lambda: value


class LoopGuard:
    """Counts identical watched calls in a row, per run (per thread / task outside any run). Thread-safe; never raises."""

    def __init__(
        self, config: LoopGuardConfig, warn: Callable[[str], None], mask: re.Pattern[str] | None = None
    ) -> None:
        self.config = config
        self._warn = warn
        # `mask=`: a hold's fingerprint digests the arguments as events show them (masked): a digest of
        # a short secret (a PIN) is reversed by hashing guesses. Streaks compare the real arguments.
        self._mask = mask
        self._ignore = frozenset(config.ignore_keys)
        self._text = text_function(self._ignore)  # canonical_text with the ignore set's lookups done
        self._kinds = frozenset(config.kinds)
        self._allow = frozenset(config.allow_nodes)
        # The config is frozen: its fields are read once, not per call.
        self._enabled = config.enabled
        self._threshold = config.threshold
        self._pause = config.mode == "pause"
        self._lock = forksafe.lock()
        # run id (with the line of execution for the implicit run) -> its current streak; the
        # oldest are forgotten past MAX_TRACKED_RUNS.
        self._streaks: OrderedDict[Hashable, _Streak] = OrderedDict()

    def observe(
        self,
        *,
        run_id: str,
        node_id: str,
        kind: str,
        name: str,
        args: Any,
        seq: int,
        attached: bool,
        hide_fingerprint: bool,
        implicit: bool = False,
        line: Hashable | None = None,
    ) -> LoopHit | None:
        """`implicit`: the call is outside any run, so its streak is `line`'s (an adapter that knows
        where one framework-level call begins names it) or else the calling thread's or task's."""
        if not self._enabled or kind not in self._kinds:
            return None  # unwatched calls neither count nor break a streak
        return self.watch(
            run_id, node_id, name, args, seq, _always(attached), hide_fingerprint, implicit, line
        )

    def watch(
        self,
        run_id: str,
        node_id: str,
        name: str,
        args: Any,
        seq: int,
        attached: Callable[[], bool],
        hide_fingerprint: bool,
        implicit: bool,
        line: Hashable | None,
        owned: bool = False,
        flat: bool = False,
    ) -> LoopHit | None:
        """`observe` for a call the engine already knows is watched (the guard on, a watched kind),
        with positional arguments; `attached` is asked only when the streak reaches the threshold.
        `owned`: `args` is the node's owned input (`NodeSpec.owned`): kept as it is when flat.
        `flat`: its describer measured it flat already (`NodeSpec.input_chars`): not walked again."""
        text: str | None = None
        key: tuple[int, int] | dict[str, Any] | None
        try:
            # flat_copy walks the app's dict in Python: another thread changing it meanwhile raises
            # "dictionary changed size during iteration"; a guard must never break the call it watches
            if flat and self._ignore.isdisjoint(args):
                key = args
            else:
                key = flat_owned(args, self._ignore) if owned else flat_copy(args, self._ignore)
            if key is None:
                text = self._text(args)
                key = (hash(text), len(text))
        except Exception:
            return None
        # outside any run the streak is the line's / thread's / task's
        line = (run_id, line_of_execution() if line is None else line) if implicit else run_id
        streaks = self._streaks
        lock = self._lock
        lock.acquire()  # not `with`: that builds two bound methods per call (a hot path)
        try:
            streak = streaks.get(line)
            if streak is None:
                streak = streaks[line] = _Streak(node_id, key, 1, seq)
                if len(streaks) > MAX_TRACKED_RUNS:
                    streaks.popitem(last=False)
            else:
                old = streak.key
                if streak.node_id == node_id and (
                    # two flat copies that differ (a tool called again with other arguments): no call
                    (old == key and same_flat(old, key))
                    if type(old) is dict and type(key) is dict
                    else self._same(old, key)
                ):
                    streak.count += 1
                else:  # a new streak on this line: the line's record starts over (no new object)
                    streak.node_id, streak.key, streak.count, streak.first_seq = node_id, key, 1, seq
                    streak.warned = False
                streaks.move_to_end(line)
            repeats = streak.count
            if repeats < self._threshold or node_id in self._allow or name in self._allow:
                return None
            if self._pause and attached():
                return LoopHit(
                    repeats,
                    streak.first_seq,
                    seq,
                    PLACEHOLDER if hide_fingerprint else self._digest(args, text),
                    functools.partial(self._restart, line, streak, node_id, key, streak.first_seq, seq),
                )
            if streak.warned:
                return None
            streak.warned = True
        finally:
            lock.release()
        with contextlib.suppress(Exception):
            self._warn(loop_warning(name, node_id, repeats, self.config, ungated=attached is cannot_hold))
        return None

    def _digest(self, args: Any, text: str | None) -> str:
        masked = None if self._mask is None else self._text(mask_value(to_jsonable(args), self._mask))
        return digest_of(masked or (self._text(args) if text is None else text))

    def _same(self, a: tuple[int, int] | dict[str, Any], b: tuple[int, int] | dict[str, Any]) -> bool:
        """Whether two streak keys stand for the same canonical text (a flat copy against a text's
        key: the copy's text, computed now, is the one its call had: its values are immutable)."""
        if type(a) is dict:
            if type(b) is dict:
                return same_flat(a, b)
            text = self._text(a)
            return (hash(text), len(text)) == b
        if type(b) is dict:
            text = self._text(b)
            return a == (hash(text), len(text))
        return a == b

    def _restart(
        self, line: Hashable, streak: _Streak, node_id: str, key: Any, first_seq: int, seq: int
    ) -> None:
        """The held call (node.started `seq`) becomes the first of a new streak on its line; a
        streak that another call already replaced is left alone. The record is reused in place
        when a line's streak starts over, so "the same streak" is its identity and its start."""
        with self._lock:
            if (
                self._streaks.get(line) is streak
                and streak.node_id == node_id
                and streak.key == key
                and streak.first_seq == first_seq
            ):
                streak.count = 1
                streak.first_seq = seq
                streak.warned = False

    def forget_run(self, run_id: str) -> None:
        """Drop a finished run's streak (optional: old runs are evicted anyway)."""
        with self._lock:
            self._streaks.pop(run_id, None)  # the implicit run's per-line streaks age out instead
