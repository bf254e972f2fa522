"""The hub's SQLite store: one writer thread, reads on their own connections."""

from .schema import SCHEMA_VERSION, StoreError
from .store import Store

__all__ = ["SCHEMA_VERSION", "Store", "StoreError"]
