"""The scaffold every adapter patches with: one hook row (`Hook`) and one record of what applying rows
did (`Patches`), so that instrumenting twice is once and undo puts back exactly what was there.

    HOOKS = (
        Hook("chat.completions", "_post", wrap_post, "openai>=2,<4", "openai/_resource.py:18 SyncAPIResource.__init__"),
    )
    state = Patches()
    state.apply(client, HOOKS, state)   # each row: resolve(client, target).attr = wrap(original, state)
    state.undo()                        # every attribute back as it was, in reverse order

A patch goes on the object the row names: an instance (its own `__dict__` shadows the class's
method, so another instance of the class is untouched), a module or a class (a process-wide patch,
e.g. `litellm.completion`). Undo restores what that object's own namespace held before: the very
value, or nothing at all when the attribute came from its class, so the class's own method shows
through again. See docs/adapters.md, section 1 ("the scaffold").
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._session import enabled_for, engine_for

if TYPE_CHECKING:
    from .._api.client import Client
    from .._node.engine import Engine

__all__ = ["Hook", "Patches", "hook_moved", "instrument_once", "items_of", "resolve", "uninstrument_once"]

C = TypeVar("C")
T = TypeVar("T")

_ABSENT: Any = object()  # the object's own namespace did not hold the attribute
# Every replacement a Patches installed: a row never wraps a wrapper of ours again (a module
# instrumented twice, an instance whose dict was copied with ours in it).
_WRAPPERS: weakref.WeakSet[Any] = weakref.WeakSet()


@dataclass(frozen=True)
class Hook(Generic[C]):
    """One row of an adapter's hook table: which attribute of which object is replaced, by what, for
    which framework versions, and where upstream the hook stands."""

    target: str  # attribute path from the object instrumented to the one patched ("": that object)
    attr: str  # the attribute replaced there
    wrap: Callable[[Any, C], Any]  # (the original value, the adapter's context) -> the replacement
    supported: str  # the framework versions this row was read in and is tested against ("openai>=2,<4")
    upstream: str  # the upstream file:line (and function) the hook depends on, and why it is enough
    applies: Callable[[Any], bool] | None = None  # (the patched object) -> patch it? Default: always
    optional: bool = False  # a missing (or None) attribute skips the row instead of raising AttributeError
    # Non-empty: the patched object is shared by several instrumented ones (an HTTP client that copies
    # share): one wrapper is installed, counted under this key in its namespace, and removed when the
    # last Patches that counts on it is undone.
    shared: str = ""


def resolve(obj: Any, dotted: str) -> Any:
    """`obj.<a>.<b>`: the object an attribute path names ("" is `obj` itself)."""
    for part in dotted.split(".") if dotted else ():
        obj = getattr(obj, part)
    return obj


def _assign(obj: Any, name: str, value: Any) -> None:
    if isinstance(obj, type | ModuleType):
        setattr(obj, name, value)
    else:
        # Into the instance's own __dict__ even when its class refuses unknown attributes (pydantic
        # models: LangChain's and LlamaIndex's tools and models).
        object.__setattr__(obj, name, value)


def _remove(obj: Any, name: str) -> None:
    if isinstance(obj, type | ModuleType):
        if name in vars(obj):
            delattr(obj, name)
    else:
        vars(obj).pop(name, None)


def _restore(obj: Any, name: str, previous: Any) -> None:
    if previous is _ABSENT:
        _remove(obj, name)  # the class's (or a module __getattr__'s) own value shows through again
    else:
        _assign(obj, name, previous)


def _remember(value: Any) -> None:
    try:
        _WRAPPERS.add(value)
    except TypeError:  # not weak-referenceable: still undone by its Patches, just not recognised
        pass


def _forget(value: Any) -> None:
    try:
        _WRAPPERS.discard(value)
    except TypeError:
        pass


def is_wrapper(value: Any) -> bool:
    """True for a replacement a Patches installed and still keeps."""
    try:
        return value in _WRAPPERS
    except TypeError:
        return False


@dataclass(eq=False)
class _Shared:
    previous: Any  # what the shared object's own namespace held before the first patch
    wrapper: Any
    count: int = 0


@dataclass(eq=False)
class Patches:
    """What instrumenting did, so `undo` can undo exactly that. `session`: the GraphMind client the
    wrappers report to (None: the default client, looked up per call). Subclass it to carry more of
    the adapter's context (whether the client is async, ...): pass it to `apply` and the wrappers
    receive it."""

    session: Client | None = None
    # (object, attribute, what its own namespace held before or _ABSENT, the value set, shared key)
    patched: list[tuple[Any, str, Any, Any, str]] = field(default_factory=list, init=False, repr=False)
    _kept_on: Any = field(default=None, init=False, repr=False)  # the object `keep` put it on

    def engine(self) -> Engine:
        """The engine of `session`, asked per call: `graphmind.configure()` may replace the default client."""
        return engine_for(self.session)

    @property
    def active(self) -> bool:
        """Something is patched (and not undone)."""
        return bool(self.patched)

    def holds(self, obj: Any, name: str) -> bool:
        """This Patches patched `obj.name` and the attribute still holds that patch, itself or inside
        a wrapper someone put on top of it (`__wrapped__`). A module reloaded since holds it no more
        (`importlib.reload` runs the module again in the same namespace, binding its functions to
        fresh originals: litellm's own conftest does it once per test module), so applying again
        patches again instead of trusting a stale record."""
        for o, n, _previous, value, _shared in self.patched:
            if o is obj and n == name:
                current = vars(obj).get(name, _ABSENT)
                for _ in range(32):  # a __wrapped__ chain is short; a cyclic one must not hang us
                    if current is value:
                        return True
                    current = getattr(current, "__wrapped__", None)
                    if current is None:
                        break
        return False

    def set(self, obj: Any, name: str, value: Any) -> None:
        """`obj.name = value`, remembered so `undo` puts back what `obj`'s own namespace held."""
        previous = vars(obj).get(name, _ABSENT)
        _assign(obj, name, value)
        _remember(value)
        self.patched.append((obj, name, previous, value, ""))

    def apply(self, root: Any, hooks: Iterable[Hook[C]], context: C) -> None:
        """Each row on the object it names under `root`. A row this Patches applied already, or whose
        attribute is already one of our wrappers, is left as it is (applying twice is applying once).
        When a row fails, what this call patched is undone and the error raised."""
        done = len(self.patched)
        try:
            for hook in hooks:
                self._apply(root, hook, context)
        except BaseException:
            self._undo_from(done)
            raise

    def _apply(self, root: Any, hook: Hook[C], context: C) -> None:
        owner = resolve(root, hook.target)
        if self.holds(owner, hook.attr) or (hook.applies is not None and not hook.applies(owner)):
            return
        held = vars(owner).get(hook.shared) if hook.shared else None
        if isinstance(held, _Shared):  # another instrumented object installed it: count on it too
            held.count += 1
            self.patched.append((owner, hook.attr, held.previous, held.wrapper, hook.shared))
            return
        original = getattr(owner, hook.attr, None) if hook.optional else getattr(owner, hook.attr)
        if (original is None and hook.optional) or is_wrapper(original):
            return
        wrapper = hook.wrap(original, context)
        if not hook.shared:
            self.set(owner, hook.attr, wrapper)
            return
        held = _Shared(vars(owner).get(hook.attr, _ABSENT), wrapper, count=1)
        _assign(owner, hook.shared, held)
        _assign(owner, hook.attr, wrapper)
        _remember(wrapper)
        self.patched.append((owner, hook.attr, held.previous, wrapper, hook.shared))

    def undo(self) -> None:
        """Every patch undone, the last first. Where the attribute no longer holds our wrapper
        (someone patched it after us), theirs stays."""
        self._undo_from(0)

    def _undo_from(self, start: int) -> None:
        while len(self.patched) > start:
            obj, name, previous, value, shared = self.patched.pop()
            if shared:
                held = vars(obj).get(shared)
                if not isinstance(held, _Shared):
                    continue
                held.count -= 1
                if held.count > 0:
                    continue
                _remove(obj, shared)
            if vars(obj).get(name, _ABSENT) is value:
                _restore(obj, name, previous)
            _forget(value)

    # ---- kept on the instrumented object --------------------------------------------------------
    @classmethod
    def of(cls, obj: Any, mark: str) -> Patches | None:
        """The Patches kept on `obj` under `mark`, or None when it is not instrumented."""
        state = vars(obj).get(mark)
        return state if isinstance(state, Patches) else None

    def keep(self, obj: Any, mark: str) -> None:
        """Keeps this Patches in `obj`'s own namespace under `mark` (`of`, `uninstrument_once`)."""
        self._kept_on = obj
        _assign(obj, mark, self)

    def undo_copy(self, copy: Any) -> None:
        """Undoes on `copy` what its namespace took over from the object this Patches was kept on
        (a shallow copy, e.g. pydantic's `model_copy()`, carries the mark and the wrappers): the
        original stays instrumented."""
        for obj, name, previous, value, shared in reversed(self.patched):
            if obj is self._kept_on and not shared and vars(copy).get(name, _ABSENT) is value:
                _restore(copy, name, previous)


def instrument_once(
    obj: T,
    mark: str,
    session: Client | None,
    apply: Callable[[T], Patches],
    hook_moved: Callable[[AttributeError], tuple[str, str]] | None = None,
) -> T:
    """Instruments `obj` once: `apply(obj)` patches it and its Patches is kept under `mark` in its
    own namespace; a second call does nothing. A disabled session changes nothing at all (not even
    the mark). With `hook_moved`, a hook the installed framework no longer has (`AttributeError`
    from `apply`) warns once with `hook_moved(exc)` (message, key) and leaves `obj` uninstrumented."""
    if Patches.of(obj, mark) is not None:
        return obj
    if not enabled_for(session):
        # Disabled (the default session under GRAPHMIND_DISABLED=1 too): the object stays exactly as
        # it was, zero overhead (environment page: the adapter is the identity). No default client is
        # built here: the wrappers ask for it per call (`Patches.engine`).
        return obj
    try:
        state = apply(obj)
    except AttributeError as exc:
        if hook_moved is None:
            raise
        message, key = hook_moved(exc)
        engine_for(session).warn(message, key=key)
        return obj
    state.keep(obj, mark)
    return obj


def uninstrument_once(obj: T, mark: str, undo: Callable[[Any], None] | None = None) -> T:
    """Undoes `instrument_once`: the Patches kept under `mark` undone (`undo(state)` when given) and
    the mark removed. An object that is not instrumented is returned unchanged."""
    state = Patches.of(obj, mark)
    if state is not None:
        _remove(obj, mark)
        if state._kept_on is obj or state._kept_on is None:
            (undo or Patches.undo)(state)
        else:  # a copy of an instrumented object: only the copy is undone
            state.undo_copy(obj)
    return obj


def hook_moved(
    distribution: str, adapter: str, adapter_version: str, supported: str, what: str = "client"
) -> Callable[[AttributeError], tuple[str, str]]:
    """The `hook_moved` of `instrument_once` for an adapter: the one warning (and its rate-limit key)
    when the installed framework lacks a hook the adapter's table names."""

    def message(exc: AttributeError) -> tuple[str, str]:
        from importlib import metadata

        return (
            f"[graphmind] {distribution} {metadata.version(distribution)} no longer has a hook {adapter} "
            f"{adapter_version} uses ({exc}); the {what} runs uninstrumented: install a supported "
            f"{distribution} ({supported}) or upgrade {adapter}.",
            f"{distribution}-hooks",
        )

    return message


def items_of(value: Any, item_type: type, not_a_collection: str, not_an_item: str) -> list[Any]:
    """The items of `value`: one `item_type`, or a list, tuple or dict (its values) of them, as a list
    (`gate_tools(tools)`). Anything else raises TypeError with the message given, `{type}` in it
    replaced by the offending value's type name."""
    if isinstance(value, item_type):
        items = [value]
    elif isinstance(value, Mapping):
        items = list(value.values())
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise TypeError(not_a_collection.format(type=type(value).__name__))
    for item in items:
        if not isinstance(item, item_type):
            raise TypeError(not_an_item.format(type=type(item).__name__))
    return items
