"""A Silo-Bench episode: N agents, each holding one private shard of an instance, communicate for R
synchronous rounds by one protocol, then every agent answers.

Decision rounds 0..R: in rounds 0..R-1 every agent sends (messages, a broadcast, or store writes),
which reach others at the start of the next round; in round R, having read the last delivery, every
agent answers. With `submission: any_round` (the reference's) an agent may also answer in any round
0..R-1, after which it sends nothing more and is not asked again (what it sent in that round still
goes out); an episode ends once all its agents have answered. With `oracle: true` one agent holds the
whole instance generated for N agents and answers at once (round 0): the single-agent cell matched
to the N-agent cells of the same task, N and seed, for RCC.

A job block plays its episodes side by side (agent v of episode s is agent s * n + v), all with the
same R.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench import compat
from hivebench.engine import media
from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.engine.block import GraphBlock
from hivebench.engine.media import sent_as_recorded
from hivebench.engine.media.exchange import Delivered, Entry, Outbox
from hivebench.suites.silobench import DIFFERENCES, behaviour
from hivebench.suites.silobench.catalogue import BY_ID
from hivebench.suites.silobench.exchange import ShardTexts
from hivebench.suites.silobench.instances import changed, instance, relabelled
from hivebench.suites.silobench.network import Topology, block
from hivebench.suites.silobench.problems import Instance
from hivebench.suites.silobench.scoring import judge


@dataclass(frozen=True)
class Call:
    """An agent's calls on the store in one round (`store_view: calls`): whether it asked for the keys,
    and the keys it read; answered at the start of the next round."""

    listed: bool
    read: tuple[str, ...]


@dataclass(frozen=True)
class SiloViews:
    """One round's local views of every agent of a block. Agent v may know: its id (v % n), n, R, the
    protocol, its neighbours (`block`), its own shard (`shard(v)`; the oracle: every shard), the
    task's public facts, what was delivered to it (`inbox` rows with receiver v; the store: `store`,
    as it stood at the end of the last round) and its own earlier rounds (`history`, `calls`). The
    other shards and the answer are there for the record, not for the agent."""

    step: int  # decision round, 0..R
    rounds: int  # R
    protocol: str
    topology: str
    oracle: bool
    block: GraphBlock[Topology]
    instances: tuple[Instance, ...]
    inbox: Delivered  # delivered at the start of this round (sent in round step - 1)
    store: list[dict[str, Entry]]  # per episode, the store as every agent reads it this round
    refused: tuple[tuple[int, str], ...]  # (agent, key) of the store writes refused last round (full)
    history: tuple[Delivered, ...]  # every earlier round's messages, as delivered
    sent: tuple[Outbox, ...]  # every earlier round's messages, as sent (the same unless a perturbation changes them)
    message_chars: int
    writes_per_round: int
    item_costs: np.ndarray  # (episodes, n): characters each owner's shard adds to a message (ShardTexts.costs)
    settings: dict[str, str]  # every difference from the reference (DIFFERENCES) as the cell sets it
    active: np.ndarray  # (agents,) bool: who has not answered yet (and so still decides)
    calls: tuple[tuple[Call | None, ...], ...]  # every earlier round's store calls, per agent (or none)
    # The late-counterevidence intervention (`change_at`), for the methods, not the agents: its round (-1:
    # none); from it on, per episode the owner whose shard changed and the instances as they were before
    intervention: int = -1
    changed: np.ndarray | None = None
    previous: tuple[Instance, ...] | None = None

    @property
    def horizon(self) -> int:
        return self.rounds + 1

    @property
    def early(self) -> bool:
        """An agent may answer in this communication round (`submission: any_round`)."""
        return self.settings["submission"] == "any_round" and not self.answering

    @property
    def by_calls(self) -> bool:
        """An LLM agent lists and reads the store by calls instead of seeing it whole."""
        return self.protocol == "store" and self.settings["store_view"] == "calls"

    @property
    def answering(self) -> bool:
        return self.step == self.rounds

    def instance(self, agent: int) -> Instance:
        return self.instances[agent // self.block.n]

    def shard(self, agent: int) -> Any:
        inst = self.instance(agent)
        return list(inst.shards) if self.oracle else inst.shards[agent % self.block.n]


@dataclass(frozen=True)
class SiloActions:
    """One round's actions of a block's agents: what they send, or (round R) their answers, one per
    agent, each a JSON value where `given` holds (an agent without a valid answer gives none). With
    `submission: any_round` a communication round may carry answers too: those `given` are final.
    `calls`: each agent's calls on the store (`store_view: calls`), or None."""

    outbox: Outbox | None = None
    answers: Sequence[Any] | None = None
    given: Sequence[bool] | None = None
    calls: Sequence[Call | None] | None = None


class SiloTask:
    relabelling: np.ndarray | None = None  # see hivebench.engine.api.Task
    edge_image = None  # nothing draws per edge
    indexed_text = ("answer", "text")  # an answer may name agents; a message's text names its shards' owners

    def __init__(self, params: dict[str, Any], population: int):
        self.params = params
        self.oracle = bool(params["oracle"])
        self.size = population  # the instance's N
        self.n = 1 if self.oracle else population  # agents per episode
        self.rounds = 0 if self.oracle else int(params["rounds"])
        self.settings = compat.settings(params, DIFFERENCES)
        self.change_at = int(params.get("change_at", -1))
        self.t = 0

    def reset(self, seeds: Sequence[int]) -> None:
        self.instances = tuple(instance(self.params["task"], self.size, seed) for seed in seeds)
        self.before = self.instances  # as the episodes start (they end with `instances`)
        self.changed = np.full(len(seeds), -1, dtype=np.int64)
        if self.change_at >= 0:
            pairs = [changed(inst, seed) for inst, seed in zip(self.instances, seeds)]
            self.changed = np.array([owner for owner, _ in pairs], dtype=np.int64)
            self.instances = tuple(inst for _, inst in pairs)
        if self.relabelling is not None:
            self.instances = tuple(relabelled(inst, self.relabelling) for inst in self.instances)
            self.before = tuple(relabelled(inst, self.relabelling) for inst in self.before)
            self.changed = np.where(self.changed >= 0, self.relabelling[np.maximum(self.changed, 0)], -1)
        self.block = block("complete" if self.oracle else self.params["topology"], self.n, seeds, self.relabelling)
        self.texts = ShardTexts([inst.shards for inst in self.before])  # a changed shard's size: its first text's
        p = self.params
        store = {"store_chars": p["store_chars"], "writes": p["writes_per_round"]} if p["protocol"] == "store" else {}
        self.medium = media.medium(p["protocol"])(self.block, self.texts, p["message_chars"], **store)
        self._sent_on = self.medium
        self.inbox: Delivered = self.medium.deliver()
        self.history: list[Delivered] = []  # every earlier round's inbox
        self.sent: list[Outbox] = []  # and its messages as sent (a medium wrapped around the task's may lose some)
        self.calls: list[tuple[Call | None, ...]] = []  # every earlier round's store calls
        agents = self.block.agents
        self.answers: list[Any] = [None] * agents
        self.given = np.zeros(agents, dtype=bool)
        self.submitted = np.full(agents, -1, dtype=np.int64)  # the round each agent answered in (-1: not yet)
        self.t = 0

    @property
    def horizon(self) -> int:
        return self.rounds + 1

    @property
    def done(self) -> bool:
        return self.t >= self.horizon or bool((self.submitted >= 0).all())

    def observe(self) -> SiloViews:
        p, inbox = self.params, self.inbox
        after = 0 <= self.change_at <= self.t
        return SiloViews(
            self.t,
            self.rounds,
            p["protocol"],
            p["topology"],
            self.oracle,
            self.block,
            self.instances if after or self.change_at < 0 else self.before,
            inbox,
            inbox.store,
            inbox.refused,
            tuple(self.history),
            tuple(self.sent),
            p["message_chars"],
            p["writes_per_round"],
            self.texts.costs,
            self.settings,
            self.submitted < 0,
            tuple(self.calls),
            self.change_at,
            self.changed if after else None,
            self.before if after else None,
        )

    def step(self, actions: SiloActions) -> None:
        """Apply a round's actions; those of agents that have answered already are ignored."""
        active = self.submitted < 0
        if self.t < self.rounds:
            if actions.outbox is None:
                raise ValueError(f"round {self.t}: expected messages")
            outbox = actions.outbox
            if not active.all():
                outbox = outbox.take(np.flatnonzero(active[outbox.sender]))
            self.medium.send(self.t, outbox)
            self.inbox = self.medium.deliver()
            self.history.append(self.inbox)
            self.sent.append(sent_as_recorded(self._sent_on, self.inbox.outbox))
            self.calls.append(() if actions.calls is None else tuple(actions.calls))
            if self.settings["submission"] == "any_round" and actions.answers is not None:
                given = self._given(actions)
                self._answered(actions, given, active & given)
        else:
            self._answered(actions, self._given(actions), active)
        self.t += 1

    def _given(self, actions: SiloActions) -> np.ndarray:
        """Which agents give an answer (checked: one entry per agent)."""
        agents = self.block.agents
        if (
            actions.answers is None
            or actions.given is None
            or len(actions.answers) != agents
            or len(actions.given) != agents
        ):
            raise ValueError(f"round {self.t}: expected an answer (or none) for each of {agents} agents")
        return np.asarray(actions.given, dtype=bool)

    def _answered(self, actions: SiloActions, given: np.ndarray, who: np.ndarray) -> None:
        """The answers of agents `who` (given or not) are final: they answered in this round."""
        assert actions.answers is not None
        for v in np.flatnonzero(who).tolist():
            self.answers[v] = actions.answers[v]
        self.given[who] = given[who]
        self.submitted[who] = self.t

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): messages sent, their characters and deliveries received in
        the round that led to it; at the last state the answer (JSON), whether it is exact, its partial
        credit and why it is wrong. One row per message in the `messages` table. Summary: S (`exact`),
        success (S = 1), P (`partial`), density D and the counts. An episode's states run to the round
        after its last agent answered; with `submission: any_round` each agent's row also says the
        round it answered in (`submitted`), and the summary the communication rounds the episode used
        (`rounds_used`) and how many agents answered before round R."""
        assert (self.submitted >= 0).all(), "record() before the answers"
        answers, given, n = self.answers, self.given, self.n
        traffic = self.medium.traffic(self.rounds)
        early, label = self.settings["submission"] == "any_round", behaviour(self.params)
        texts: dict[int, str] = {}  # an answer object's JSON, once (the flood's agents share theirs)
        records = []
        for s, inst in enumerate(self.instances):
            own = slice(s * n, (s + 1) * n)
            last = int(self.submitted[own].max())  # the episode's last decision round
            used, states = min(last + 1, self.rounds), last + 2  # communication rounds played; states
            step, agent = state_agent_columns(n, states)
            level = BY_ID[inst.task].level
            verdicts = [
                judge(answers[v], inst.answer if self.oracle else inst.expected(v % n), level, bool(given[v]))
                for v in range(own.start, own.stop)
            ]
            exact = np.array([v[0] for v in verdicts])
            partial = np.array([v[1] for v in verdicts])
            final = [self._json(answers[v], texts) if given[v] else None for v in range(own.start, own.stop)]

            def per_state(
                per_round: np.ndarray, own: slice = own, used: int = used, states: int = states
            ) -> np.ndarray:
                column = np.zeros((states, n), dtype=np.int32)
                column[1 : used + 1] = per_round[:used, own]
                return column.ravel()

            def final_state(values: list, kind: pa.DataType, states: int = states) -> pa.Array:
                return pa.array([None] * (n * (states - 1)) + values, kind)

            agents = {
                "step": step,
                "agent": agent,
                "sent": per_state(traffic["sent"]),
                "chars": per_state(traffic["chars"]),
                "received": per_state(traffic["received"]),
                "answer": final_state(final, pa.string()),
                "exact": final_state(exact.tolist(), pa.bool_()),
                "partial": final_state(partial.tolist(), pa.float64()),
                "reason": final_state([v[2] for v in verdicts], pa.string()),
            }
            if early:
                agents["submitted"] = final_state(self.submitted[own].tolist(), pa.int32())
            counts = self.medium.counts(s)
            summary = {
                "silo_task": inst.task,
                "level": level,
                "protocol": "none" if self.oracle else self.params["protocol"],
                "topology": "none" if self.oracle else self.params["topology"],
                "oracle": self.oracle,
                "size": self.size,
                "rounds": self.rounds,
                "diameter": self.block.graphs[s].diameter,
                "exact": float(exact.mean()),
                "success": float(exact.all()),
                "partial": float(partial.mean()),
                "answered": int(given[own].sum()),
                "messages": counts["messages"],
                "density": counts["messages"] / (n * (n - 1)) if n > 1 else math.nan,
                **counts,  # messages keeps its place; deliveries, characters, cut and refused follow
            }
            if early:
                summary |= {"rounds_used": used, "answered_early": int((self.submitted[own] < self.rounds).sum())}
            if self.change_at >= 0:  # the new data's answers, and the old data's
                old = self.before[s]
                stale = [
                    judge(answers[v], old.expected(v % n), level, bool(given[v]))[0] for v in range(own.start, own.stop)
                ]
                summary |= {"recovery": float(exact.mean()), "stale_answers": float(np.mean(stale))}
            if label != "hivebench":
                summary["compat"] = label
            records.append(EpisodeRecord(agents, summary, self.medium.tables(s)))
        return records

    @staticmethod
    def _json(answer: Any, texts: dict[int, str]) -> str:
        if id(answer) not in texts:
            texts[id(answer)] = json.dumps(answer)
        return texts[id(answer)]
