"""Wheel smoke for graphmind-llamaindex: a real FunctionTool and a scripted LLM gated, the handler installed, detached."""

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.tools import FunctionTool

import graphmind
from graphmind_llamaindex import (
    __version__,
    gate_llm,
    gate_tools,
    instrument_llamaindex,
    ungate_llm,
    ungate_tools,
    uninstrument_llamaindex,
)
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM

graphmind.configure(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)


def search(query: str) -> str:
    """Search the docs."""
    return f"results for {query}"


assert instrument_llamaindex() is True
tool = gate_tools(FunctionTool.from_defaults(search))
llm = gate_llm(ScriptedFunctionCallingLLM(["hello"]))
assert tool.call(query="x").content == "results for x"
assert llm.chat([ChatMessage(role="user", content="hi")]).message.content == "hello"
ungate_tools(tool)
ungate_llm(llm)
uninstrument_llamaindex()
assert graphmind.stats()["events"] >= 4
graphmind.dispose()
print(f"graphmind-llamaindex {__version__} smoke ok")
