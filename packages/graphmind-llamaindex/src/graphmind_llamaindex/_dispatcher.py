"""instrument_llamaindex / uninstrument_llamaindex: one span handler and one event handler on the root dispatcher.

Every LlamaIndex dispatcher propagates to the root one (llama_index_instrumentation/__init__.py,
get_dispatcher: a new dispatcher's parent is "root" unless its dotted parent exists; Dispatcher
span_enter / event walk `c = c.parent` while `propagate`), so handlers there see every span and
event. The two handlers are thin pydantic shells (the dispatcher's lists are typed) around one
`Observer`; they override the dispatcher-facing methods directly, so no span object is built.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index_instrumentation.span import BaseSpan
from pydantic import PrivateAttr

import graphmind
from graphmind.adapter import enabled_for

from . import _links as links
from ._handler import Observer


class GraphmindSpanHandler(BaseSpanHandler[BaseSpan]):
    _observer: Observer = PrivateAttr()

    def __init__(self, observer: Observer) -> None:
        super().__init__()
        self._observer = observer
        # The observer's own methods go straight into the instance, where the dispatcher's
        # `h.span_enter(...)` finds them first: one call per span instead of two.
        for name in ("span_enter", "span_exit", "span_drop"):
            object.__setattr__(self, name, getattr(observer, name))

    @classmethod
    def class_name(cls) -> str:
        return "GraphmindSpanHandler"

    def span_enter(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        parent_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._observer.span_enter(id_, bound_args, instance, parent_id, tags)

    def span_exit(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        result: Any = None,
        **kwargs: Any,
    ) -> None:
        self._observer.span_exit(id_, bound_args, instance, result)

    def span_drop(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        self._observer.span_drop(id_, bound_args, instance, err)

    # The abstract span-object hooks: never reached, since the three methods above replace the
    # base class's, which are their only callers.
    def new_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        parent_span_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        return None

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        result: Any = None,
        **kwargs: Any,
    ) -> None:
        return None

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        return None


class GraphmindEventHandler(BaseEventHandler):
    _observer: Observer = PrivateAttr()

    def __init__(self, observer: Observer) -> None:
        super().__init__()
        self._observer = observer
        object.__setattr__(self, "handle", observer.handle)  # as for the span handler: one call per event

    @classmethod
    def class_name(cls) -> str:
        return "GraphmindEventHandler"

    def handle(self, event: Any, **kwargs: Any) -> None:
        self._observer.handle(event, **kwargs)


_lock = threading.Lock()
_installed: list[tuple[GraphmindSpanHandler, GraphmindEventHandler]] = []


def instrument_llamaindex(session: graphmind.Client | None = None) -> bool:
    """Observes every LlamaIndex agent, workflow step, retriever, query engine, LLM and tool call.

    `session`: a `graphmind.Client` (default: `graphmind.get_client()`, looked up per call).
    Returns True when the handlers are installed (a second call does nothing); False when GraphMind
    is disabled, and then nothing is added.
    """
    if not enabled_for(session):  # builds no client: the default one is looked up per call
        return False
    with _lock:
        if _installed:
            return True
        observer = Observer(session)
        pair = (GraphmindSpanHandler(observer), GraphmindEventHandler(observer))
        root = get_dispatcher()
        root.add_span_handler(pair[0])
        root.add_event_handler(pair[1])
        links.set_handler(observer)
        _installed.append(pair)
    return True


def uninstrument_llamaindex() -> None:
    """Removes the handlers: the root dispatcher's lists hold what they held before."""
    with _lock:
        if not _installed:
            return
        spans, events = _installed.pop()
        root = get_dispatcher()
        if spans in root.span_handlers:
            root.span_handlers.remove(spans)
        if events in root.event_handlers:
            root.event_handlers.remove(events)
        links.set_handler(None)
