"""Checks that a framework hook still stands, for an adapter's `tests/test_hooks_upstream.py`: the
installed version is inside the range a row was read in, the patched attribute is where the row
says, and the upstream source still makes the call the hook depends on. Each fails loudly, naming
the row's `upstream` place and what to do (docs/adapters.md, "The scaffold").

    def test_every_row_is_in_its_range_and_present() -> None:
        assert_hooks_stand(HOOKS, OpenAI(api_key="k"))

    def test_the_sdk_still_sends_through_send_request() -> None:
        assert_in_source(OpenAI.request, "self._send_request(", hook=SEND)
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
from collections.abc import Iterable
from typing import Any

from ..adapter import Hook, resolve

__all__ = ["assert_hooks_stand", "assert_in_source", "assert_supported", "split_requirement"]

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)")


def split_requirement(supported: str) -> tuple[str, str]:
    """`"openai>=2,<4"` -> `("openai", ">=2,<4")`: the distribution and its version specifier."""
    match = _NAME.fullmatch(supported)
    if match is None or not match.group(2):
        raise ValueError(
            f"a supported range names a distribution and its versions, e.g. 'openai>=2,<4': got {supported!r}"
        )
    return match.group(1), match.group(2).replace(" ", "")


def assert_supported(supported: str) -> str:
    """Asserts the installed distribution `supported` names (`"litellm>=1.108,!=1.107.0,<2"`) is one
    of the versions it allows; returns the installed version."""
    from packaging.specifiers import SpecifierSet  # pytest's own dependency: present wherever tests run

    name, spec = split_requirement(supported)
    version = importlib.metadata.version(name)
    assert SpecifierSet(spec).contains(version, prereleases=True), (
        f"{name} {version} is outside {supported}: read the adapter's hook table against its sources, "
        "then widen the range"
    )
    return version


def _where(hook: Hook[Any] | None) -> str:
    if hook is None:
        return ""
    name, _ = split_requirement(hook.supported)
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "not installed"
    return f" (the hook at {hook.upstream}, read for {hook.supported}; installed: {version})"


def assert_in_source(obj: Any, *snippets: str, hook: Hook[Any] | None = None) -> str:
    """Asserts the source of `obj` (a function, method, class or module upstream) still holds each of
    `snippets`, e.g. the call a hook depends on; returns that source for further checks."""
    source = inspect.getsource(obj)
    missing = [s for s in snippets if s not in source]
    name = getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))
    assert not missing, f"{name} no longer contains {missing}{_where(hook)}"
    return source


def assert_hooks_stand(hooks: Iterable[Hook[Any]], root: Any = None) -> None:
    """Every row's range holds the installed version; with `root` (an object as the adapter is
    given it), every row's attribute is where the row says (an `optional` row may be missing)."""
    for hook in hooks:
        assert_supported(hook.supported)
        if root is None:
            continue
        try:
            owner = resolve(root, hook.target)
        except AttributeError as exc:
            raise AssertionError(
                f"{hook.target!r} is gone from {type(root).__name__}: {exc}{_where(hook)}"
            ) from None
        if not hook.optional:
            assert callable(getattr(owner, hook.attr, None)), (
                f"{type(owner).__name__}.{hook.attr} is gone or not callable{_where(hook)}"
            )
