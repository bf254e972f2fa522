"""Wheel smoke for graphmind-openai: instrument a real OpenAI client against the loopback fake, detached."""

from openai import OpenAI

import graphmind
from graphmind_openai import __version__, instrument_openai, uninstrument_openai
from graphmind_openai.testing import FakeOpenAI

session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
with FakeOpenAI() as fake:
    fake.script(["Hello from the fake model"])
    client = instrument_openai(
        OpenAI(base_url=fake.base_url, api_key="smoke", max_retries=0), session=session
    )
    assert instrument_openai(client, session=session) is client  # twice is harmless
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "Hello from the fake model", reply
    assert fake.request_count == 1
    uninstrument_openai(client)
assert session.stats()["events"] >= 2
session.dispose()
print(f"graphmind-openai {__version__} smoke ok")
