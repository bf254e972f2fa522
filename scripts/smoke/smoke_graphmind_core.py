"""Wheel smoke for graphmind-core: imports, wraps a call, runs detached (no hub), disabled is identity."""

import asyncio

import graphmind

client = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)


@client.tool
def add(a: int, b: int) -> int:
    return a + b


@client.tool
async def aadd(a: int, b: int) -> int:
    return a + b


with client.run("smoke") as run:
    assert add(2, 3) == 5
    assert asyncio.run(aadd(1, 1)) == 2
assert client.ready(0.2) is False
assert client.stats()["events"] >= 6
client.dispose()


def f() -> int:
    return 1


assert graphmind.Client(enabled=False).wrap(f) is f
print(f"graphmind-core {graphmind.__version__} smoke ok")
