"""What an export removes: values under secret-looking keys (the one list, used by ``graphmind record``).

The four "recording less" switches, which keep values from ever leaving the app, are options of
``graphmind.configure``; this module is the rule applied afterwards, to what was recorded.
"""

from __future__ import annotations

from ._events.redaction import PLACEHOLDER, SECRET_KEY_SUFFIXES, SECRET_KEYS, is_secret_key, strip_secret_keys

__all__ = ["PLACEHOLDER", "SECRET_KEYS", "SECRET_KEY_SUFFIXES", "is_secret_key", "strip_secret_keys"]
