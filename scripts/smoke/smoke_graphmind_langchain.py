"""Wheel smoke for graphmind-langchain: a real @tool gated, the callback handler attached, detached."""

from langchain_core.tools import tool

import graphmind
from graphmind_langchain import GraphmindCallbackHandler, __version__, gate_tools, ungate_tools

graphmind.configure(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)


@tool
def search(query: str) -> str:
    """Search the docs."""
    return f"results for {query}"


gated = gate_tools(search)
assert gated.invoke({"query": "x"}, config={"callbacks": [GraphmindCallbackHandler()]}) == "results for x"
ungate_tools(gated)
assert search.invoke({"query": "y"}) == "results for y"
assert graphmind.stats()["events"] >= 2
graphmind.dispose()
print(f"graphmind-langchain {__version__} smoke ok")
