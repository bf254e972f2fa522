"""GraphMind for LangChain and LangGraph: a callback handler that sees every run, and gates that can change it.

from graphmind_langchain import GraphmindCallbackHandler, gate_model, gate_tools

agent.invoke(inputs, config={"callbacks": [GraphmindCallbackHandler()]})
"""

from ._gating import gate_model, gate_tools, ungate_model, ungate_tools
from ._handler import GraphmindCallbackHandler
from ._version import SUPPORTED, SUPPORTED_RANGE, __version__

__all__ = [
    "SUPPORTED",
    "SUPPORTED_RANGE",
    "GraphmindCallbackHandler",
    "__version__",
    "gate_model",
    "gate_tools",
    "ungate_model",
    "ungate_tools",
]
