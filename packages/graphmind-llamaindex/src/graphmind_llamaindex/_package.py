"""The llama-index-core versions this package is tested against (nox: the newest and the previous line)."""

SUPPORTED_RANGE = "llama-index-core >=0.13, <0.15"
