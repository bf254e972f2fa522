"""The demo's world: a travel assistant's three tools and a scripted model that drives them.

The model is a plain function of the conversation (OpenAI chat-completions shapes in and out), so
the demo needs no API key and no network, and every scenario plays the same way each time.
"""

from __future__ import annotations

import json
from typing import Any

FLIGHTS = [
    {"id": "TP-544", "from": "LIS", "to": "BER", "date": "2026-12-12", "price_eur": 189, "departs": "07:40"},
    {"id": "LH-1173", "from": "LIS", "to": "BER", "date": "2026-12-12", "price_eur": 246, "departs": "11:05"},
]
BUDGET_EUR = 300
PROMPT = "Book me the cheapest flight from Lisbon to Berlin on 2026-12-12. My budget is 300 EUR."


class BudgetServiceDown(RuntimeError):
    pass


class TravelTools:
    """The real work the agent does. `fail_budget_once` makes check_budget fail on its first call."""

    def __init__(self, fail_budget_once: bool = False) -> None:
        self.fail_budget_once = fail_budget_once
        self.calls: list[str] = []

    def search_flights(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        self.calls.append("search_flights")
        return [f for f in FLIGHTS if f["date"] == date]

    def check_budget(self, amount_eur: float) -> dict[str, Any]:
        self.calls.append("check_budget")
        if self.fail_budget_once:
            self.fail_budget_once = False
            raise BudgetServiceDown("budget service timed out (503)")
        return {"within_budget": amount_eur <= BUDGET_EUR, "remaining_eur": BUDGET_EUR - amount_eur}

    def book(self, flight_id: str) -> dict[str, Any]:
        self.calls.append("book")
        return {"confirmation": "GM-4471", "flight_id": flight_id, "status": "booked"}

    def as_dict(self) -> dict[str, Any]:
        return {"search_flights": self.search_flights, "check_budget": self.check_budget, "book": self.book}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Search flights between two airports on a date.",
            "parameters": {
                "type": "object",
                "properties": {
                    "origin": {"type": "string"},
                    "destination": {"type": "string"},
                    "date": {"type": "string"},
                },
                "required": ["origin", "destination", "date"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "check_budget",
            "description": "Check that an amount fits the traveller's budget.",
            "parameters": {
                "type": "object",
                "properties": {"amount_eur": {"type": "number"}},
                "required": ["amount_eur"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book",
            "description": "Book a flight by id.",
            "parameters": {
                "type": "object",
                "properties": {"flight_id": {"type": "string"}},
                "required": ["flight_id"],
            },
        },
    },
]

SEARCH_ARGS = {"origin": "LIS", "destination": "BER", "date": "2026-12-12"}


def _tool_call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": None,
        "tool_calls": [{"id": f"call_{n}_{name}", "name": name, "arguments": json.dumps(args)}],
    }


def scripted_reply(messages: list[dict[str, Any]], loop: bool = False) -> Any:
    """The next reply, decided from the conversation so far (graphmind_openai.testing.FakeOpenAI's
    reply shapes: a string is the assistant's text, a dict with `tool_calls` calls tools).

    search -> check the budget of the cheapest -> book it -> say so. A failed budget check is tried
    again; with `loop` the model is "stuck" and searches three times before moving on.
    """
    tool_results = [m for m in messages if m.get("role") == "tool"]
    names = [m.get("name") or _name_of(messages, m.get("tool_call_id")) for m in tool_results]
    n = len(tool_results) + 1
    searches = names.count("search_flights")
    if searches == 0 or (loop and searches < 3):
        return _tool_call(n, "search_flights", SEARCH_ARGS)
    last = tool_results[-1]
    last_name = names[-1]
    if last_name == "search_flights":
        flights = _json(last.get("content")) or FLIGHTS
        cheapest = (
            min(flights, key=lambda f: f.get("price_eur", 10**9))
            if isinstance(flights, list) and flights
            else FLIGHTS[0]
        )
        return _tool_call(n, "check_budget", {"amount_eur": cheapest.get("price_eur", 189)})
    if last_name == "check_budget":
        result = _json(last.get("content"))
        if not isinstance(result, dict) or "within_budget" not in result:
            return _tool_call(n, "check_budget", {"amount_eur": 189})
        if not result.get("within_budget"):
            return "The cheapest flight is over your budget, so I did not book it."
        return _tool_call(n, "book", {"flight_id": "TP-544"})
    booked = _json(last.get("content"))
    if isinstance(booked, dict) and booked.get("confirmation"):
        return f"Booked {booked.get('flight_id', 'your flight')}: Lisbon → Berlin on 2026-12-12, confirmation {booked['confirmation']}."
    return f"I did not book anything: the booking step answered {last.get('content')!r}."


def _name_of(messages: list[dict[str, Any]], call_id: Any) -> str | None:
    for message in messages:
        for call in message.get("tool_calls") or []:
            if call.get("id") == call_id:
                return str(call["function"]["name"])
    return None


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None
