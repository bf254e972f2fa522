"""The langchain-core versions this package is tested against (nox: the newest and the previous line)."""

SUPPORTED_RANGE = "langchain-core >=0.3.0, <2"
