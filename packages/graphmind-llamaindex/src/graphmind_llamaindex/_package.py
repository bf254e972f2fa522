"""The llama-index-core versions this package is tested against (nox: the newest and the previous line)."""

SUPPORTED_RANGE = "llama-index-core >=0.14.5, <0.15"
