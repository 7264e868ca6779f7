"""AgentsNet as an LLM agent reads it. The system message states the rules as the AgentsNet
reference prompt does (n, R, synchronous rounds, the problem), the same for every agent of an episode
(so a local model pre-fills it once); each round's user message holds the agent's name and its
neighbours' names, the messages delivered to it and its last K rounds (with full history the earlier
rounds are the chat's earlier turns). In rounds 0..R-1 its reply's field is {"messages": {neighbour:
text}}, in round R {"answer": one of its options} (the LLM agent adds its notes). Without a valid
reply an agent sends nothing, or gives no answer (which scores as an invalid answer).

`NetReference` is the AgentsNet reference code's own prompt protocol (LiteralMessagePassing.py, with
chain of thought, as published): its prompts verbatim, each agent's whole chat kept, and its parsers
of the messages (a JSON object) and of the `### Final Answer ###` block."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.media import Outbox
from hivebench.suites.agentsnet.names import name_pool
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
    "per round{cap}, or leave a neighbour out. After the last round you must {long}"
)


def delivered(views: NetViews, outbox: Outbox, agent: int) -> dict[str, str]:
    """The messages `outbox` delivered to `agent`, by their sender's name."""
    mine = np.flatnonzero(outbox.receiver == agent)
    texts = outbox.texts()
    return {views.block.names[outbox.sender[i]]: texts[int(i)].as_py() for i in mine}


def inbox_lines(views: NetViews, outbox: Outbox, agent: int) -> list[str]:
    """The messages `outbox` delivered to `agent`, as `Name: text` lines."""
    return [f"  {name}: {text}" for name, text in delivered(views, outbox, agent).items()]


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

    def answering(self, views: NetViews) -> np.ndarray:
        return views.answering

    def reply_schema(self, views: NetViews, agent: int) -> dict[str, Any]:
        """Its own options, or messages to its own neighbours by name, each within the size cap."""
        if views.final(agent):
            return {"answer": {"enum": views.options(agent)}}
        names = [views.block.names[u] for u in views.block.neighbours(agent)]
        cap = {} if views.message_chars is None else {"maxLength": views.message_chars}  # None: uncapped
        text = {"type": "string", **cap}
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
            cap="" if views.message_chars is None else f" (at most {views.message_chars} characters each)",
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
            received = inbox_lines(views, views.delivered[t - 1], agent) if t > 0 else []
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
        if replies.count(None) == len(replies):  # everyone's fallback (a perturbation's idle agents): no loop
            return NetActions(outbox=Outbox.empty(), answers=[None] * len(replies) if views.answering.any() else None)
        answers = [None if r is None or not views.final(v) else r["answer"] for v, r in enumerate(replies)]
        sender, receiver, texts = [], [], []
        for v, reply in enumerate(replies):
            messages = (reply or {}).get("messages")
            if not messages:  # a fallback (or a silent agent) sends nothing
                continue
            index = {views.block.names[u]: u for u in views.block.neighbours(v)}
            for name, text in messages.items():
                sender.append(v)
                receiver.append(index[name])
                texts.append(text)
        outbox = Outbox(
            np.array(sender, dtype=np.int64), np.array(receiver, dtype=np.int64), pa.array(texts, pa.string())
        )
        return NetActions(outbox=outbox, answers=answers if views.answering.any() else None)

    def reference(self, quirks: bool) -> NetReference:
        return NetReference(quirks)


# The reference's prompts (floriangroetschla/AgentsNet, LiteralMessagePassing.py), verbatim: per
# problem its short and long descriptions and its question for the answer.
REFERENCE_TASKS = {
    "coloring": (
        "Your task is to partition yourselves into groups such that agents who are neighbors are never in the "
        "same group.",
        "You will be requested to state which group you assign yourself to. There are exactly {k} groups "
        "available: Group 1,...,Group {k}. You should assign yourself to exactly one of these groups. The final "
        "result should be such that any two agents who are neighbors are in different groups. In particular, you "
        "should assign yourself to a group that is different from all of your neighbors' groups. ",
        "Which group do you assign yourself to?",
    ),
    "vertex_cover": (
        "Your task is to select, among all agents, a group of coordinators\nsuch that whenever two agents "
        "communicate at least one of them is a coordinator. The group of coordinators\nshould be selected such "
        "that every coordinator has at least one neighbor who is not a coordinator.\n",
        "You will be requested to state whether you are a coordinator. The response should either be 'Yes' or 'No'. ",
        "Are you a coordinator?",
    ),
    "matching": (
        "Your task is to find build groups of two agents each which can communicate with each other.",
        "You will be requested to name one of your neighbors that you build a group with or 'None' if all your "
        "neighbors are already assigned to other groups and cannot be in a group with you.In the end, every agent "
        "should only be in at most one group and agents in the same group have to name each other as the second "
        "group member consistently.",
        "Please answer with the name of the neighbor you build a group with or 'None' if all your neighbors are "
        "already assigned to other groups.",
    ),
    "leader_election": (
        "Your task is to collaboratively solve the problem of electing a single leader.",
        "You will be requested to state whether or not you are the leader. The response should either be 'Yes' or "
        "'No'. The final result should be such that exactly one agent responds with 'Yes' and all others say 'No' "
        "as there should be exactly one leader.",
        "Are you the leader?",
    ),
    "consensus": (
        "Your goal is to agree on a single value with the other agents. The possible values that you can decide "
        "on are either 0 or 1.",
        "After the last round, each agent must decide on a single value.",
        "Please answer with the value you agreed on.",
    ),
}
REFERENCE_SYSTEM = (
    "You are an agent that is connected with other agents (your neighbors), who you communicate with. Your "
    "neighbors can in turn communicate with their neighbors and so forth. {short}\n"
    "The rules are as follows:\n"
    "1. There are {n} agents in total. Everybody has a unique name. Your name is {name}.\n"
    "2. You can only communicate with your immediate neighbors ({neighbours}). You cannot see or directly "
    "communicate with anyone else, unless information is relayed by intermediate agents.\n"
    "3. You can exchange text-based messages with your neighbors in rounds. In each round, you will first "
    "receive the last messages sent by your neighbors and then be asked to generate your response messages "
    "which your neighbors receive in the next round. This process repeats for {rounds} rounds of message "
    "passing. Importantly, the process is synchronous: Every agent decides on which messages to send at the "
    "same time and sees the messages from other agents only in the next round.\n"
    "4. Everybody (including you) decides what to share or request from neighbors. In every round, think "
    "step-by-step about the next set of messages you want to send. Output a JSON string that contains your "
    "response messages.\n"
    "5. The messages you send to your neighbors are formatted as JSON. For example, if your neighbors are Alan "
    "and Bob, your output should look as follows: \n"
    "```\n"
    "{{\n"
    '    "Alan": "Message that will be sent to Alan.",\n'
    '    "Bob": "Message that will be sent to Bob.",\n'
    "}}\n"
    "```\n"
    "It is not mandatory to send a message to every neighbor in every round. If you do not want to send a "
    "message to a particular neighbor, you may omit their name from the JSON.\n"
    "6. After {rounds} message passes, you have to solve the following task: {long}"
)
REFERENCE_COT = "Elaborate your chain of thought step-by-step first, then output the messages for your neighbors."
REFERENCE_FIRST = (
    f"What are the first messages you want to send to your neighbors? {REFERENCE_COT} Output your messages in "
    "JSON format as specified earlier."
)
REFERENCE_ANSWER = (
    "\n\nElaborate your chain of thought step-by-step first, then answer the following: {question} Format your "
    "answer as follows: '### Final Answer ###', followed by your final answer. Don't use any text for your final "
    "answer except one of these valid options: {options}"
)
# The reference's messages asking again (fallback_json_request, fallback_answer_request)
REFERENCE_AGAIN = (
    "Your messages could not be parsed into JSON. Please check your response and try again.",
    "Your answer could not be parsed. Please check your answer and try again.",
)


def final_answer(text: str, options: list[str], quirks: bool) -> str | None:
    """The reference's `parse_answer`: the first `### Final Answer ###` followed, after white space, by
    one of the options. With quirks the options are tried in their order, so a prefix wins ("Group 1" is
    read from "Group 10", "Yes" from "Yesterday"); without, the longest option that ends a word."""
    if quirks:
        pattern = "|".join(map(re.escape, options))
    else:
        pattern = "|".join(map(re.escape, sorted(options, key=len, reverse=True))) + r")(?!\w"
    found = re.search(rf"### Final Answer ###\s*({pattern})", text)
    return found.group(1) if found else None


def json_messages(text: str, names: set[str], quirks: bool) -> dict[str, str] | None:
    """The reference's `parse_messages`: the first JSON object of texts by name (the names in `names`)
    that starts at a `{` of the reply. With quirks, as the reference reads it: every escaped line
    break (backslash, n) turned into a line break first (inside a JSON string that makes the object
    invalid), and each span from a `{` to the reply's last `}` tried whole (so a `}` after the object
    hides it); without, the object that starts there, whatever follows it."""
    if quirks:
        text = text.replace("\\n", "\n")
    end = text.rfind("}") + 1
    for start in [i for i, c in enumerate(text) if c == "{"]:
        try:
            value = json.loads(text[start:end]) if quirks else json.JSONDecoder().raw_decode(text, start)[0]
        except json.JSONDecodeError:
            continue
        if all(name in names for name in value) and all(isinstance(t, str) for t in value.values()):
            return value
    return None


def reference_turn(views: NetViews, agent: int) -> str:
    """The reference's user message of this round (`bootstrap_ask_for_first_messages`, then
    `message_passing`): the messages delivered, the neighbours that sent none, what to do next."""
    if views.step == 0:
        return REFERENCE_FIRST
    block, left = views.block, int(views.agent_rounds[agent]) - views.step
    neighbours = [block.names[u] for u in block.neighbours(agent)]
    received = delivered(views, views.inbox, agent)
    if left:
        text = "These are the messages from your neighbors:\n\n"
    else:
        text = "Message passing has finished, here are the last messages you got from your neighbors:\n\n"
    text += "".join(f"Message from {name}:\n\n{received[name]}\n\n" for name in neighbours if name in received)
    silent = [name for name in neighbours if name not in received]
    if silent:
        text += f"The following neighbors did not send you a messages in this round: {', '.join(silent)}\n\n"
    if not left:
        question = REFERENCE_TASKS[views.problem][2]
        return text + REFERENCE_ANSWER.format(question=question, options=", ".join(views.options(agent)))
    text += (
        f"{REFERENCE_COT} Output your messages in JSON format as specified earlier. You have {left} rounds of "
        f"communication left before you need to decide. Your neighbors are: {', '.join(neighbours)} "
    )
    return text + ("These are the last messages that your neighbors will receive from you." if left == 1 else "")


class NetReference:
    """The AgentsNet reference's prompt protocol for a block's agents (hivebench.engine.api.
    ReferenceProtocol): a system message per agent (its name, its neighbours, the rules, the task), one
    user message a round, and every agent's whole chat kept, its replies and repairs included (the
    reference's thread memory). Messages are read from the first JSON object of texts by name (the
    reference takes any name of its list and delivers to neighbours only: the others are dropped), the
    answer from the `### Final Answer ###` block."""

    grows = True

    def __init__(self, quirks: bool):
        self.quirks = quirks
        self.chats: dict[int, list[dict[str, str]]] = {}  # every agent's chat so far

    def chat(self, views: NetViews, agent: int) -> tuple[dict[str, str], ...]:
        if agent not in self.chats:
            short, long, _ = REFERENCE_TASKS[views.problem]
            block = views.block
            system = REFERENCE_SYSTEM.format(
                short=short,
                n=block.n,
                name=block.names[agent],
                neighbours=", ".join(block.names[u] for u in block.neighbours(agent)),
                rounds=int(views.agent_rounds[agent]),
                long=long.format(k=block.graph(agent).max_degree + 1),
            )
            self.chats[agent] = [{"role": "system", "content": system}]
        self.chats[agent].append({"role": "user", "content": reference_turn(views, agent)})
        return tuple(self.chats[agent])

    def parse(self, views: NetViews, agent: int, text: str) -> tuple[dict[str, Any] | None, str | None]:
        if views.final(agent):
            answer = final_answer(text, views.options(agent), self.quirks)
            if answer is None:
                return None, "no '### Final Answer ###' followed by one of the valid options"
            return {"answer": answer}, None
        neighbours = {views.block.names[u] for u in views.block.neighbours(agent)}
        messages = json_messages(text, set(name_pool(views.block.n)) if self.quirks else neighbours, self.quirks)
        if messages is None:
            return None, "no JSON object of messages by neighbour name"
        return {"messages": {name: t for name, t in messages.items() if name in neighbours}}, None

    def again(self, views: NetViews, agent: int, error: str) -> str:
        return REFERENCE_AGAIN[bool(views.final(agent))]

    def replied(
        self, views: NetViews, agent: int, turns: tuple[dict[str, str], ...], reply: dict[str, Any] | None
    ) -> None:
        self.chats[agent].extend(turns)
