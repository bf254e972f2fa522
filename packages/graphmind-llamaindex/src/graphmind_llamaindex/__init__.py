"""GraphMind for LlamaIndex: an instrumentation handler that sees every call, and gates that can change them.

from graphmind_llamaindex import gate_llm, gate_tools, instrument_llamaindex

instrument_llamaindex()
agent = FunctionAgent(tools=gate_tools(tools), llm=gate_llm(llm))
"""

from ._dispatcher import instrument_llamaindex, uninstrument_llamaindex
from ._gating import gate_llm, gate_tools, ungate_llm, ungate_tools
from ._version import SUPPORTED, SUPPORTED_RANGE, __version__

__all__ = [
    "SUPPORTED",
    "SUPPORTED_RANGE",
    "__version__",
    "gate_llm",
    "gate_tools",
    "instrument_llamaindex",
    "ungate_llm",
    "ungate_tools",
    "uninstrument_llamaindex",
]
