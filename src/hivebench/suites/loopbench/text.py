"""LoopBench as an LLM agent reads it: each agent's prompt holds the task, its id, its own and its
neighbours' colours, its local history (all earlier rounds, as in the paper, or the last K) and the
notes it wrote last round; it replies {color, notes}. An agent without a valid reply keeps its colour.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.models import Message
from hivebench.suites.loopbench.task import ColoringViews

SYSTEM = (
    "You are agent {agent}, one of {n} agents. Each agent controls one node of a graph and every round "
    "picks one of {c} colours, numbered 0 to {top}. All agents choose at the same time and cannot talk "
    "to each other. An edge whose two nodes have the same colour is a conflict; together the agents "
    "should reach as few conflicts as possible and stay there. You see only your own colour, your "
    "neighbours' colours and your own history. You also keep private notes: whatever you write in "
    "\"notes\" is shown to you, and only you, next round. Use them to record what you observe and the "
    "strategy you follow."
)
REPLY = (
    'Reply with only a JSON object: {{"color": <an integer from 0 to {top}>, "notes": "<your private '
    'notes for next round, at most {chars} characters>"}}'
)


def history_lines(views: ColoringViews, agent: int, window: int | None) -> list[str]:
    """Earlier rounds, oldest first: this agent's colour, then its neighbours' (the paper's H_t(v))."""
    neighbours = views.neighbors_of(agent)
    first = 0 if window is None else max(0, views.step - window)
    return [
        f"  {'start' if t == 0 else f'after round {t}'}: you {views.history[t, agent]}; neighbours "
        + ", ".join(str(views.history[t, u]) for u in neighbours)
        for t in range(first, views.step)
    ]


def user_prompt(views: ColoringViews, agent: int, notes: str, window: int | None, chars: int) -> str:
    neighbours = views.neighbors_of(agent)
    lines = [
        f"Round {views.step + 1} of {views.horizon}.",
        f"Your colour now: {views.colors[agent]}.",
        "Your neighbours' colours now: "
        + ", ".join(f"agent {u}: {views.colors[u]}" for u in neighbours)
        + f" ({int(views.own_conflicts[agent])} of them conflict with you).",
    ]
    history = history_lines(views, agent, window)
    if history:
        label = "all earlier rounds" if window is None else f"the last {len(history)} rounds"
        lines += [f"History ({label}, oldest first):", *history]
    lines += ["Your notes from last round:", notes if notes else "(none yet)", "", REPLY.format(top=views.num_colors - 1, chars=chars)]
    return "\n".join(lines)


class ColoringView:
    """The LLM agent's reading of LoopBench observations (see hivebench.agents.llm.TextView)."""

    def agents(self, views: ColoringViews) -> int:
        return len(views.colors)

    def reply_schema(self, views: ColoringViews, agent: int) -> dict[str, Any]:
        return {"color": {"type": "integer", "minimum": 0, "maximum": views.num_colors - 1}}

    def messages(self, views: ColoringViews, agent: int, notes: str, window: int | None, chars: int) -> tuple[Message, ...]:
        """The task as the system message, the agent's local view as the user's."""
        n, c = len(views.colors), views.num_colors
        return (
            {"role": "system", "content": SYSTEM.format(agent=agent, n=n, c=c, top=c - 1)},
            {"role": "user", "content": user_prompt(views, agent, notes, window, chars)},
        )

    def actions(self, views: ColoringViews, replies: list[dict[str, Any] | None]) -> np.ndarray:
        """Each agent's colour; one without a valid reply keeps its colour (the fallback)."""
        colors = views.colors.copy()
        for v, reply in enumerate(replies):
            if reply is not None:
                colors[v] = reply["color"]
        return colors
