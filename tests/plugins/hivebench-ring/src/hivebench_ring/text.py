"""The ring as an LLM agent (or any method that reads text) sees it."""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench_ring.task import RingViews


class RingView:
    def agents(self, views: RingViews) -> int:
        return len(views.bits)

    def live(self, views: RingViews) -> np.ndarray:
        return np.ones(len(views.bits), dtype=bool)

    def reply_schema(self, views: RingViews, agent: int) -> dict[str, Any]:
        return {"bit": {"enum": [0, 1]}}

    def reply_format(self, views: RingViews, agent: int) -> str:
        return '"bit": <0 or 1>'

    def system(self, views: RingViews, agent: int) -> str:
        return f"You are one of {views.n} agents on a ring, each holding a bit. Together, end on one bit."

    def turn(self, views: RingViews, agent: int, window: int) -> str:
        first = agent - agent % views.n
        left, right = (first + (agent - first + d) % views.n for d in (-1, 1))
        bits = views.bits
        round_ = f"Round {views.step + 1} of {views.horizon}."
        return f"{round_} Your bit: {bits[agent]}; your neighbours': {bits[left]}, {bits[right]}."

    def actions(self, views: RingViews, replies: list[dict[str, Any] | None]) -> np.ndarray:
        bits = views.bits.copy()  # without a valid reply an agent keeps its bit
        for agent, reply in enumerate(replies):
            if reply is not None:
                bits[agent] = reply["bit"]
        return bits
