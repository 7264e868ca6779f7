"""The coin agent: random replies within each agent's reply schema, drawn from the block's streams."""

from __future__ import annotations

from typing import Any

import numpy as np
from jsonschema import Draft202012Validator

from hivebench.engine.api import Policy, TextView
from hivebench.seeding import Streams


def drawn(schema: dict[str, Any], u: float) -> Any:
    """A value of a property's schema chosen by the number u in [0, 1), or None where the schema is
    not one this agent draws from."""
    if "enum" in schema:
        return schema["enum"][int(u * len(schema["enum"]))]
    if schema.get("type") == "integer" and "minimum" in schema and "maximum" in schema:
        return schema["minimum"] + int(u * (schema["maximum"] - schema["minimum"] + 1))
    if schema.get("type") == "string":
        return ""
    if schema.get("type") == "object":
        return {}
    return None


class CoinAgent(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams, view: TextView):
        self.p = float(params["p"])
        self.rng = rng
        self.view = view
        self.answered = np.zeros(len(rng), dtype=np.int64)

    def decide(self, observation: Any) -> Any:
        total = self.view.agents(observation)
        n = total // len(self.rng)
        draws = self.rng.random((total, 2))  # whether to reply, and the reply: two per agent a round
        replies: list[dict[str, Any] | None] = [None] * total
        for v in np.flatnonzero(self.view.live(observation)).tolist():
            if draws[v, 0] >= self.p:
                continue
            properties = self.view.reply_schema(observation, v)
            reply = {name: drawn(schema, draws[v, 1]) for name, schema in properties.items()}
            schema = {"type": "object", "properties": properties, "required": list(properties)}
            if Draft202012Validator(schema).is_valid(reply):
                replies[v] = reply
                self.answered[v // n] += 1
        return self.view.actions(observation, replies)

    def summary(self, episode: int) -> dict[str, Any]:
        return {"coin_replies": int(self.answered[episode])}
