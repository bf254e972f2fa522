"""Wheel smoke for graphmind-google-genai: instrument a client against the loopback fake Gemini API
(the wheel's own testing module), run a plain call, a stream and an automatic function call
detached, with no network; undo it and run it bare."""

from google import genai
from google.genai import _extra_utils, types

import graphmind
from graphmind_google_genai import __version__, instrument_google_genai, uninstrument_google_genai
from graphmind_google_genai.testing import FakeGemini

calls: list[str] = []


def search(q: str) -> str:
    """Searches."""
    calls.append(q)
    return f"results for {q}"


with FakeGemini(chunks=3) as fake:
    client = genai.Client(api_key="k", http_options=fake.http_options())
    session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    own = dict(vars(client.models))
    invoke = _extra_utils.invoke_function_from_dict_args
    assert instrument_google_genai(client, session=session) is client
    assert instrument_google_genai(client, session=session) is client  # twice is harmless
    fake.script(
        ["hello there", "one two three", FakeGemini.function_call("search", {"q": "cats"}), "saw cats"]
    )
    assert client.models.generate_content(model="gemini-2.5-flash", contents="hi").text == "hello there"
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert "".join(c.text or "" for c in chunks) == "one two three" and len(chunks) == 3
    config = types.GenerateContentConfig(tools=[search])
    assert (
        client.models.generate_content(model="gemini-2.5-flash", contents="go", config=config).text
        == "saw cats"
    )
    assert calls == ["cats"]
    events = session.stats()["events"]
    assert events >= 10, session.stats()  # four steps and the tool: started and finished
    uninstrument_google_genai(client)
    assert dict(vars(client.models)) == own and _extra_utils.invoke_function_from_dict_args is invoke
    assert client.models.generate_content(model="gemini-2.5-flash", contents="hi").text == "ok"
    session.dispose()
    client.close()
print(f"graphmind-google-genai {__version__} smoke ok")
