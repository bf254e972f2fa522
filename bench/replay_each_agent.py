"""The agent bench/replay_each.py records and replays: a refund agent on the OpenAI SDK (the
provider is $FAKE_OPENAI_URL, a loopback fake) that takes its ticket from a tool, looks the order
up, checks the refund policy and signs its reply: 3 model calls and 4 tool calls a run.

At recording time $TICKETS (a JSON list) holds one ticket a run; a replay has no queue and runs
one run, its ticket answered from the recording. Prints each run's signed answer.
"""

from __future__ import annotations

import json
import os
from typing import Any

from openai import OpenAI

import graphmind
from graphmind_openai import instrument_openai

gm = graphmind.configure(app="refund-bench")
SYSTEM = "You handle refund tickets. Look the order up, check the policy, then answer."
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("lookup_order", "check_policy")
]
QUEUE: list[dict[str, Any]] = json.loads(os.environ.get("TICKETS") or "[{}]")


@gm.tool
def next_ticket() -> dict[str, Any]:
    return QUEUE.pop(0)


@gm.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "status": "delivered", "paid": 40 + len(order_id)}


@gm.tool
def check_policy(order_id: str, reason: str) -> dict[str, Any]:
    return {"order_id": order_id, "refund": "full" if "broken" in reason else "store credit"}


@gm.tool
def sign_reply(text: str) -> str:
    return f"{text} -- Support"


IMPLS: dict[str, Any] = {"lookup_order": lookup_order, "check_policy": check_policy}


def answer(client: OpenAI) -> None:
    with gm.run("refund"):
        ticket = next_ticket()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{ticket['order_id']}: {ticket['text']}"},
        ]
        for _ in range(6):
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            message = reply.choices[0].message
            if not message.tool_calls:
                print(sign_reply(message.content or ""))
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                with gm.tool_call(call.id):
                    result = IMPLS[call.function.name](**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})


def main() -> None:
    client = instrument_openai(OpenAI(base_url=os.environ["FAKE_OPENAI_URL"], api_key="test", max_retries=0))
    for _ in range(len(QUEUE)):
        answer(client)


if __name__ == "__main__":
    main()
