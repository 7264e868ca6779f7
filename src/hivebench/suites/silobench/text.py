"""Silo-Bench as an LLM agent reads it. The system message states the rules (n agents, the protocol,
R rounds, the task and its answer format), the same for every agent of an episode; each round's user
message holds the agent's id, its neighbours, its shard, what reached it this round (messages, or the
store as it stood at the end of the last round) and its last K rounds.

In rounds 0..R-1 its reply's field is {"messages": {id: text}} (p2p), {"broadcast": text} or
{"writes": {key: text}} (store); in round R {"answer": <the task's answer>} (the LLM agent adds its
notes). The answer is any JSON value: one of the wrong type or size is scored wrong with the reason
recorded. Without a valid reply an agent sends nothing, or gives no answer.

The differences from the reference (the suite's DIFFERENCES) that the view carries out:
- `submission: any_round`: every reply of rounds 0..R-1 also has "answer" (null: not yet); an agent
  that answers is not asked again (`live`).
- `received: all`: with the LLM method's `history: K` (K >= 1) the prompt also lists what reached the
  agent before its last K rounds. (With `history: full` the chat holds every round already; the view
  is given a window of 0 then, as with `history: 0`, and adds nothing.)
- `store_view: calls`: the prompt does not show the store; a reply's "list" (true: its keys) and
  "read" (keys) are answered in the next round's prompt, from the store as it stood at the end of the
  round they were made in.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from hivebench.engine.media.exchange import Delivered, Entry, Outbox
from hivebench.suites.silobench.exchange import KEY_CHARS
from hivebench.suites.silobench.instances import statement
from hivebench.suites.silobench.task import Call, SiloActions, SiloViews

PROTOCOLS = {
    "p2p": "Each round you may send one message to each of your neighbours, at most {chars} characters each.",
    "broadcast": (
        "Each round you may broadcast one message, at most {chars} characters, that all your neighbours receive."
    ),
    "store": (
        "All agents share one key-value store. Each round you may write up to {writes} keys (keys of at most "
        f"{KEY_CHARS} characters, values of at most {{chars}}); a later write of a key replaces it. Every agent "
        "reads the whole store as it stood at the end of the previous round."
    ),
}
# `store_view: calls`: the store's rule, read by calls
STORE_CALLS = (
    "All agents share one key-value store. Each round you may write up to {writes} keys (keys of at most "
    f"{KEY_CHARS} characters, values of at most {{chars}}); a later write of a key replaces it. You do not see "
    'the store itself: in a round\'s reply, "list": true asks for its keys and "read" names the keys whose values '
    "you want; both are answered at the start of the next round, from the store as it stood at the end of the "
    "round you asked in."
)
TOPOLOGIES = {
    "complete": "Every other agent is your neighbour.",
    "regular3": "You have three neighbours; the others only hear you through them.",
}
SYSTEM = (
    "You are one of {n} agents, with ids 0 to {last}, working on one task together. Each agent holds a private "
    "part of the data, and no one sees another's part unless it is sent. {rules}\n"
    "Task: {task}\n"
    "There are {rounds} rounds of communication; what is sent in a round arrives at the start of the next. "
    "{answering}"
)
# When the answers come, by `submission`
ANSWERING = {
    "end": "After the last round every agent must give the answer itself: {answer}.",
    "any_round": (
        'Every agent must give the answer itself: {answer}. An agent may give it in any round, in "answer" '
        "(null: not yet); once it has, it sends nothing more and is not asked again. After the last round every "
        "agent that has not answered must."
    ),
}
ORACLE = "You hold all of the data of a task yourself.\nTask: {task}\nGive the answer: {answer}."
# A reply's fields as the prompt shows them, by protocol
REPLIES = {
    "p2p": '"messages": {"<agent id>": "<message>", ...}',
    "broadcast": '"broadcast": "<message, or empty>"',
    "store": '"writes": {"<key>": "<value>", ...}',
}
CALLS_REPLY = ', "list": <true or false>, "read": ["<key>", ...]'
EARLY_REPLY = ', "answer": <your answer, or null to answer later>'


def received_lines(views: SiloViews, delivered: Delivered, agent: int) -> list[str]:
    texts = delivered.outbox.text or []
    return [
        f"  from agent {delivered.sender[i] % views.block.n}: {texts[delivered.message[i]]}"
        for i in np.flatnonzero(delivered.receiver == agent)
    ]


def call_lines(views: SiloViews, t: int, agent: int) -> list[str]:
    """The answers to an agent's store calls of round t, from the store as it stood at the end of it."""
    call = views.calls[t][agent] if 0 <= t < len(views.calls) and views.calls[t] else None
    if call is None:
        return []
    store = views.history[t].store[agent // views.block.n]
    lines = [f"  keys: {', '.join(map(repr, store)) or 'none'}"] if call.listed else []
    return lines + [entry_line(key, store[key]) if key in store else f"  {key!r}: no such key" for key in call.read]


def entry_line(key: str, e: Entry) -> str:
    return f"  {key!r} (agent {e.writer}, round {e.step + 1}): {e.text}"


def arrived(views: SiloViews, t: int, agent: int) -> list[str]:
    """What reached an agent at the start of round t (sent, or the answers to its calls, in round t - 1)."""
    if t == 0:
        return []
    return call_lines(views, t - 1, agent) if views.by_calls else received_lines(views, views.history[t - 1], agent)


def sent_lines(views: SiloViews, outbox: Outbox, agent: int) -> list[str]:
    lines = []
    texts, keys = outbox.text or [""] * len(outbox), outbox.keys or [""] * len(outbox)
    for i in np.flatnonzero(outbox.sender == agent).tolist():
        text = texts[i]
        if views.protocol == "p2p":
            lines.append(f"  to agent {outbox.receiver[i] % views.block.n}: {text}")
        elif views.protocol == "store":
            lines.append(f"  wrote {keys[i]!r}: {text}")
        else:
            lines.append(f"  broadcast: {text}")
    return lines


class SiloView:
    """The LLM agent's reading of Silo-Bench observations (see hivebench.engine.api.TextView)."""

    def agents(self, views: SiloViews) -> int:
        return views.block.agents

    def live(self, views: SiloViews) -> np.ndarray:
        return views.active  # who has not answered yet (every episode of a block has the same R)

    def answering(self, views: SiloViews) -> np.ndarray:
        return views.active & views.answering

    def reply_schema(self, views: SiloViews, agent: int) -> dict[str, Any]:
        answer = statement(views.instance(agent), views.oracle)[1]
        if views.answering:
            return {"answer": {"description": answer}}
        schema = self._sending(views, agent)
        if views.by_calls:
            key = {"type": "string", "minLength": 1, "maxLength": KEY_CHARS}
            schema |= {"list": {"type": "boolean"}, "read": {"type": "array", "items": key, "uniqueItems": True}}
        if views.early:
            schema["answer"] = {"description": f"{answer}; null: not yet"}  # never null as an answer
        return schema

    @staticmethod
    def _sending(views: SiloViews, agent: int) -> dict[str, Any]:
        text = {"type": "string"}  # a longer text is cut to the cap and counted, not refused
        if views.protocol == "p2p":
            ids = [
                str(u % views.block.n)
                for u in views.block.graphs[agent // views.block.n].neighbours(agent % views.block.n)
            ]
            return {
                "messages": {"type": "object", "properties": dict.fromkeys(ids, text), "additionalProperties": False}
            }
        if views.protocol == "broadcast":
            return {"broadcast": text}
        return {
            "writes": {
                "type": "object",
                "maxProperties": views.writes_per_round,
                "propertyNames": {"minLength": 1, "maxLength": KEY_CHARS},
                "additionalProperties": text,
            }
        }

    def reply_format(self, views: SiloViews, agent: int) -> str:
        if views.answering:
            return '"answer": <your answer>'
        return REPLIES[views.protocol] + (CALLS_REPLY if views.by_calls else "") + (EARLY_REPLY if views.early else "")

    def system(self, views: SiloViews, agent: int) -> str:
        task, answer = statement(views.instance(agent), views.oracle)
        if views.oracle:
            return ORACLE.format(task=task, answer=answer)
        n = views.block.n
        rule = STORE_CALLS if views.by_calls else PROTOCOLS[views.protocol]
        protocol = rule.format(chars=views.message_chars, writes=views.writes_per_round)
        rules = (
            protocol if views.protocol == "store" else f"{TOPOLOGIES[views.topology]} {protocol}"
        )  # the store reaches everyone
        answering = ANSWERING[views.settings["submission"]].format(answer=answer)
        return SYSTEM.format(n=n, last=n - 1, rules=rules, task=task, rounds=views.rounds, answering=answering)

    def turn(self, views: SiloViews, agent: int, window: int) -> str:
        shard = json.dumps(views.shard(agent))
        if views.oracle:
            return f"The data, one part per agent of the task:\n{shard}"
        n = views.block.n
        lines = [f"You are agent {agent % n}."]
        if views.protocol != "store":
            neighbours = ", ".join(str(u) for u in views.block.graphs[agent // n].neighbours(agent % n).tolist())
            lines[0] += f" Your neighbours: {neighbours}."
        lines += [f"Round {views.step + 1} of {views.rounds + 1}.", f"Your data: {shard}"]
        if window and views.settings["received"] == "all":
            lines += self._before(views, agent, window)
        history = []
        for t in range(max(0, views.step - window), views.step):
            sent = sent_lines(views, views.sent[t], agent) or ["  nothing"]
            if views.protocol == "store" and not views.by_calls:
                history += [f"Round {t + 1}: you wrote", *sent]
            else:
                got, did = ("read", "wrote") if views.by_calls else ("received", "sent")
                history += [
                    f"Round {t + 1}: you {got}",
                    *(arrived(views, t, agent) or ["  nothing"]),
                    f"and {did}",
                    *sent,
                ]
        if history:
            lines += [f"Your earlier rounds (the last {min(window, views.step)}):", *history]
        if views.by_calls:
            lines += ["Your store calls of last round:", *(arrived(views, views.step, agent) or ["  none"])]
        elif views.protocol == "store":
            store = views.store[agent // n]
            lines += [
                "The store:",
                *([entry_line(key, e) for key, e in store.items()] or ["  empty"]),
            ]
            refused = [key for writer, key in views.refused if writer == agent]
            if refused:
                lines.append(
                    f"The store was full: it refused your last round's writes of {', '.join(map(repr, refused))}."
                )
        else:
            lines += ["Messages this round:", *(received_lines(views, views.inbox, agent) or ["  none"])]
        left = views.rounds - views.step
        lines.append(
            "Communication is over."
            if views.answering
            else f"{left} round{'s' if left > 1 else ''} of communication left, this one included."
        )
        return "\n".join(lines)

    @staticmethod
    def _before(views: SiloViews, agent: int, window: int) -> list[str]:
        """`received: all`: what reached the agent before its last `window` rounds, by round."""
        lines = []
        for t in range(1, views.step - window):
            got = arrived(views, t, agent)
            lines += [f"Round {t + 1}: you {'read' if views.by_calls else 'received'}", *got] if got else []
        return [f"Before your last {window} rounds:", *lines] if lines else []

    def actions(self, views: SiloViews, replies: list[dict[str, Any] | None]) -> SiloActions:
        """Messages, broadcasts or writes from the agents' valid replies (empty texts are not sent), with
        their store calls and early answers where the settings ask for them, or in round R their
        answers."""
        if views.answering:
            return SiloActions(
                answers=[None if r is None else r["answer"] for r in replies], given=[r is not None for r in replies]
            )
        n = views.block.n
        sender, receiver, texts, keys = [], [], [], []
        for v, reply in enumerate(replies):
            if reply is None:
                continue
            if views.protocol == "p2p":
                items = [(str(k), t) for k, t in reply["messages"].items()]
            elif views.protocol == "broadcast":
                items = [("", reply["broadcast"])]
            else:
                items = list(reply["writes"].items())
            for target, text in items:
                if text:
                    sender.append(v)
                    receiver.append(v - v % n + int(target) if views.protocol == "p2p" else -1)
                    texts.append(text)
                    keys.append(target)
        store = views.protocol == "store"
        outbox = Outbox(
            np.array(sender, dtype=np.int64),
            np.array(receiver, dtype=np.int64),
            text=texts,
            keys=keys if store else None,
        )
        calls = [None if r is None else Call(r["list"], tuple(r["read"])) for r in replies] if views.by_calls else None
        if not views.early:
            return SiloActions(outbox=outbox, calls=calls)
        answers = [None if r is None else r["answer"] for r in replies]
        return SiloActions(outbox, answers, [a is not None for a in answers], calls)
