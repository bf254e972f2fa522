"""Wheel smoke for graphmind-litellm: instrument LiteLLM and make one call detached, with no network
(`mock_response`: LiteLLM answers itself), with GraphmindLogger installed as well."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else LiteLLM fetches its cost map at import

import litellm

import graphmind
from graphmind_litellm import GraphmindLogger, __version__, instrument_litellm, uninstrument_litellm

session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
original = litellm.completion
assert instrument_litellm(session=session)
assert instrument_litellm(session=session)  # twice is harmless
litellm.callbacks = [GraphmindLogger(session=session)]  # with both: one call is one node
messages = [{"role": "user", "content": "hi"}]
reply = litellm.completion(model="openai/gpt-4o-mini", messages=messages, mock_response="Hello from LiteLLM")
assert reply.choices[0].message.content == "Hello from LiteLLM", reply
uninstrument_litellm()
assert litellm.completion is original
assert session.stats()["events"] >= 2
session.dispose()
print(f"graphmind-litellm {__version__} smoke ok")
