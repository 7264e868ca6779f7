"""AgentsNet as an LLM agent reads it. The system message states the rules as the AgentsNet
reference prompt does (n, R, synchronous rounds, the problem), the same for every agent of an episode
(so a local model pre-fills it once); each round's user message holds the agent's name and its
neighbours' names, the messages delivered to it and its last K rounds (with full history the earlier
rounds are the chat's earlier turns). In rounds 0..R-1 its reply's field is {"messages": {neighbour:
text}}, in round R {"answer": one of its options} (the LLM agent adds its notes). Without a valid
reply an agent sends nothing, or gives no answer (which scores as an invalid answer)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.media import Outbox
from hivebench.suites.agentsnet.task import NetActions, NetViews

TASKS = {
    "coloring": (
        "Your task is to partition yourselves into groups such that agents who are neighbours are never in the "
        "same group.",
        "state which group you assign yourself to. There are exactly {k} groups: Group 1, ..., Group {k}. Any two "
        "agents who are neighbours must be in different groups.",
    ),
    "vertex_cover": (
        "Your task is to select, among all agents, a group of coordinators such that whenever two agents "
        "communicate at least one of them is a coordinator, and every coordinator has at least one neighbour "
        "who is not a coordinator.",
        "state whether you are a coordinator ('Yes' or 'No').",
    ),
    "matching": (
        "Your task is to build groups of two agents each who can communicate with each other.",
        "name the one neighbour you build a group with, or 'None' if all your neighbours are already in other "
        "groups. Every agent is in at most one group, and the two members of a group must name each other.",
    ),
    "leader_election": (
        "Your task is to elect a single leader together.",
        "state whether you are the leader ('Yes' or 'No'). Exactly one agent must say 'Yes'.",
    ),
    "consensus": (
        "Your goal is to agree on a single value, 0 or 1, with all the other agents.",
        "state the value you agreed on ('0' or '1'). All agents must give the same value.",
    ),
}
SYSTEM = (
    "You are one of {n} agents. Each agent has a unique name and can only exchange messages with its "
    "neighbours. You cannot see or reach anyone else unless your neighbours relay it. {short}\n"
    "The process is synchronous: in each of {rounds} rounds every agent sends its messages at the same time and "
    "reads its neighbours' messages at the start of the next round. You may send one message to each neighbour "
    "per round (at most {chars} characters each), or leave a neighbour out. After the last round you must {long}"
)


def inbox_lines(views: NetViews, outbox: Outbox, agent: int) -> list[str]:
    """The messages `outbox` delivered to `agent`, as `Name: text` lines."""
    mine = np.flatnonzero(outbox.receiver == agent)
    texts = outbox.texts()
    return [f"  {views.block.names[outbox.sender[i]]}: {texts[int(i)].as_py()}" for i in mine]


def sent_lines(views: NetViews, outbox: Outbox, agent: int) -> list[str]:
    mine = np.flatnonzero(outbox.sender == agent)
    texts = outbox.texts()
    return [f"  to {views.block.names[outbox.receiver[i]]}: {texts[int(i)].as_py()}" for i in mine]


class NetView:
    """The LLM agent's reading of AgentsNet observations (see hivebench.engine.api.TextView)."""

    def agents(self, views: NetViews) -> int:
        return views.block.agents

    def live(self, views: NetViews) -> np.ndarray:
        return views.agent_rounds >= views.step

    def reply_schema(self, views: NetViews, agent: int) -> dict[str, Any]:
        """Its own options, or messages to its own neighbours by name, each within the size cap."""
        if views.final(agent):
            return {"answer": {"enum": views.options(agent)}}
        names = [views.block.names[u] for u in views.block.neighbours(agent)]
        text = {"type": "string", "maxLength": views.message_chars}
        return {"messages": {"type": "object", "properties": dict.fromkeys(names, text), "additionalProperties": False}}

    def reply_format(self, views: NetViews, agent: int) -> str:
        if views.final(agent):
            return f'"answer": <one of {", ".join(repr(o) for o in views.options(agent))}>'
        return '"messages": {"<neighbour name>": "<message>", ...}'

    def system(self, views: NetViews, agent: int) -> str:
        short, long = TASKS[views.problem]
        k = views.block.graph(agent).max_degree + 1
        return SYSTEM.format(
            n=views.block.n,
            short=short,
            rounds=int(views.agent_rounds[agent]),
            chars=views.message_chars,
            long=long.format(k=k),
        )

    def turn(self, views: NetViews, agent: int, window: int) -> str:
        block, rounds = views.block, int(views.agent_rounds[agent])
        neighbours = ", ".join(block.names[u] for u in block.neighbours(agent))
        lines = [
            f"You are {block.names[agent]}; your neighbours are {neighbours}.",
            f"Round {views.step + 1} of {rounds + 1}.",
        ]
        first = max(0, views.step - window)
        history = []
        for t in range(first, views.step):
            received = inbox_lines(views, views.sent[t - 1], agent) if t > 0 else []
            history += [
                f"Round {t + 1}: you received",
                *(received or ["  nothing"]),
                "and sent",
                *(sent_lines(views, views.sent[t], agent) or ["  nothing"]),
            ]
        if history:
            lines += [f"Your earlier rounds (the last {min(window, views.step)}):", *history]
        received = inbox_lines(views, views.inbox, agent)
        lines += ["Messages from your neighbours this round:", *(received or ["  none"])]
        left = rounds - views.step
        lines.append(
            "Message passing is over."
            if views.final(agent)
            else f"{left} round{'s' if left > 1 else ''} of messages left, this one included."
        )
        return "\n".join(lines)

    def actions(self, views: NetViews, replies: list[dict[str, Any] | None]) -> NetActions:
        """Messages from the agents still sending, answers from those in their episode's round R."""
        answers = [None if r is None or not views.final(v) else r["answer"] for v, r in enumerate(replies)]
        sender, receiver, texts = [], [], []
        for v, reply in enumerate(replies):
            index = {views.block.names[u]: u for u in views.block.neighbours(v)}
            for name, text in (reply or {}).get("messages", {}).items():
                sender.append(v)
                receiver.append(index[name])
                texts.append(text)
        outbox = Outbox(
            np.array(sender, dtype=np.int64), np.array(receiver, dtype=np.int64), pa.array(texts, pa.string())
        )
        return NetActions(outbox=outbox, answers=answers if views.answering.any() else None)
