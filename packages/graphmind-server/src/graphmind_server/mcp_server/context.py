"""The last model input's context breakdown, for explain_run: Context X-ray's own reading of a
node (the function its route uses), or, where that is not installed, an estimate (explain.py)."""

from __future__ import annotations

from .explain import ContextReader, fallback_context


def context_reader() -> ContextReader:
    return fallback_context
