"""Wheel smoke for graphmind-anthropic: instrument a real Anthropic client against the loopback fake, detached."""

from anthropic import Anthropic

import graphmind
from graphmind_anthropic import __version__, instrument_anthropic, uninstrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic

session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
with FakeAnthropic() as fake:
    fake.script(["Hello from the fake model"])
    client = instrument_anthropic(
        Anthropic(base_url=fake.base_url, api_key="smoke", max_retries=0), session=session
    )
    assert instrument_anthropic(client, session=session) is client  # twice is harmless
    reply = client.messages.create(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.content[0].text == "Hello from the fake model", reply
    assert fake.request_count == 1
    uninstrument_anthropic(client)
    client.close()
assert session.stats()["events"] >= 2
session.dispose()
print(f"graphmind-anthropic {__version__} smoke ok")
