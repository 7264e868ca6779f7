"""LoopBench as an LLM agent reads it: the system message states the task, the same for every agent
of an episode (so a local model pre-fills it once); each round's user message holds the agent's id,
its own and its neighbours' colours and the last K rounds of its local history (with full history the
earlier rounds are the chat's earlier turns). Its reply's field is the colour (the LLM agent adds its
notes). An agent without a valid reply keeps its colour. Ids are within the agent's episode (0..n-1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.suites.loopbench.task import ColoringViews

SYSTEM = (
    "You are one of {n} agents. Each agent controls one node of a graph and every round "
    "picks one of {c} colours, numbered 0 to {top}. All agents choose at the same time and cannot talk "
    "to each other. An edge whose two nodes have the same colour is a conflict; together the agents "
    "should reach as few conflicts as possible and stay there. You see only your own colour, your "
    "neighbours' colours and your own history."
)


def history_lines(views: ColoringViews, agent: int, window: int) -> list[str]:
    """The last `window` rounds, oldest first: this agent's colour, then its neighbours' as it heard
    them (the paper's H_t(v))."""
    first = max(0, views.step - window)
    return [
        f"{'start' if t == 0 else f'after round {t}'}: you {views.history[t, agent]}, neighbours "
        + " ".join(str(c) for c in views.neighbor_colors(agent, t))
        for t in range(first, views.step)
    ]


def user_prompt(views: ColoringViews, agent: int, window: int) -> str:
    """Terse on purpose: a local model pre-fills every token of it, every round, for every agent."""
    neighbours = zip(views.neighbors_of(agent), views.neighbor_colors(agent))
    lines = [
        f"You are agent {agent % views.n}. Round {views.step + 1} of {views.horizon}.",
        f"Now: you {views.colors[agent]}; "
        + ", ".join(f"agent {u % views.n}: {color}" for u, color in neighbours)
        + f" ({int(views.own_conflicts[agent])} conflict with you).",
    ]
    history = history_lines(views, agent, window)
    if history:
        lines.append("Earlier (oldest first): " + "; ".join(history) + ".")
    return "\n".join(lines)


class ColoringView:
    """The LLM agent's reading of LoopBench observations (see hivebench.engine.api.TextView)."""

    def agents(self, views: ColoringViews) -> int:
        return len(views.colors)

    def live(self, views: ColoringViews) -> np.ndarray:
        return np.ones(len(views.colors), dtype=bool)  # a block's episodes share the horizon

    def reply_schema(self, views: ColoringViews, agent: int) -> dict[str, Any]:
        return {"color": {"type": "integer", "minimum": 0, "maximum": views.num_colors - 1}}

    def reply_format(self, views: ColoringViews, agent: int) -> str:
        return f'"color": <an integer from 0 to {views.num_colors - 1}>'

    def system(self, views: ColoringViews, agent: int) -> str:
        c = views.num_colors
        return SYSTEM.format(n=views.n, c=c, top=c - 1)

    def turn(self, views: ColoringViews, agent: int, window: int) -> str:
        return user_prompt(views, agent, window)

    def actions(self, views: ColoringViews, replies: list[dict[str, Any] | None]) -> np.ndarray:
        """Each agent's colour; one without a valid reply keeps its colour (the fallback)."""
        colors = views.colors.copy()
        if replies.count(None) == len(replies):  # everyone's fallback (a perturbation's idle agents): no loop
            return colors
        for v, reply in enumerate(replies):
            if reply is not None:
                colors[v] = reply["color"]
        return colors
