"""Wheel smoke for graphmind-litellm: instrument LiteLLM and make one call detached, with no network
(`mock_response`: LiteLLM answers itself), plus one injected reply built into LiteLLM's own type."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else LiteLLM fetches its cost map at import

import litellm  # noqa: E402

import graphmind  # noqa: E402
from graphmind_litellm import GraphmindLogger, __version__, instrument_litellm, uninstrument_litellm  # noqa: E402
from graphmind_litellm._inject import model_response  # noqa: E402

session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
original = litellm.completion
assert instrument_litellm(session=session)
assert instrument_litellm(session=session)  # twice is harmless
litellm.callbacks = [GraphmindLogger(session=session)]  # with both: one call is one node
messages = [{"role": "user", "content": "hi"}]
reply = litellm.completion(model="openai/gpt-4o-mini", messages=messages, mock_response="Hello from LiteLLM")
assert reply.choices[0].message.content == "Hello from LiteLLM", reply
built = model_response({"content": None, "tool_calls": [{"name": "search", "arguments": {"q": "cairo"}}]})
assert isinstance(built, litellm.ModelResponse) and built.choices[0].message.tool_calls[0].function.name == "search"
uninstrument_litellm()
assert litellm.completion is original
assert session.stats()["events"] >= 2
session.dispose()
print(f"graphmind-litellm {__version__} smoke ok")
