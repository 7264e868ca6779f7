"""A Silo-Bench episode: N agents, each holding one private shard of an instance, communicate for R
synchronous rounds by one protocol, then every agent answers.

Decision rounds 0..R: in rounds 0..R-1 every agent sends (messages, a broadcast, or store writes),
which reach others at the start of the next round; in round R, having read the last delivery, every
agent answers. With `oracle: true` one agent holds the whole instance generated for N agents and
answers at once (round 0): the single-agent cell matched to the N-agent cells of the same task, N
and seed, for RCC.

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

from hivebench.engine import media
from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.engine.block import GraphBlock
from hivebench.engine.media.exchange import Delivered, Entry, Outbox
from hivebench.suites.silobench.catalogue import BY_ID
from hivebench.suites.silobench.exchange import ShardTexts
from hivebench.suites.silobench.instances import instance
from hivebench.suites.silobench.network import Topology, block
from hivebench.suites.silobench.problems import Instance
from hivebench.suites.silobench.scoring import judge


@dataclass(frozen=True)
class SiloViews:
    """One round's local views of every agent of a block. Agent v may know: its id (v % n), n, R, the
    protocol, its neighbours (`block`), its own shard (`shard(v)`; the oracle: every shard), the
    task's public facts, what was delivered to it (`inbox` rows with receiver v; the store: `store`,
    as it stood at the end of the last round) and its own earlier rounds (`history`). The other
    shards and the answer are there for the record, not for the agent."""

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
    message_chars: int
    writes_per_round: int
    item_costs: np.ndarray  # (episodes, n): characters each owner's shard adds to a message (ShardTexts.costs)

    @property
    def horizon(self) -> int:
        return self.rounds + 1

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
    agent, each a JSON value where `given` holds (an agent without a valid answer gives none)."""

    outbox: Outbox | None = None
    answers: Sequence[Any] | None = None
    given: Sequence[bool] | None = None


class SiloTask:
    def __init__(self, params: dict[str, Any], population: int):
        self.params = params
        self.oracle = bool(params["oracle"])
        self.size = population  # the instance's N
        self.n = 1 if self.oracle else population  # agents per episode
        self.rounds = 0 if self.oracle else int(params["rounds"])
        self.t = 0

    def reset(self, seeds: Sequence[int]) -> None:
        self.instances = tuple(instance(self.params["task"], self.size, seed) for seed in seeds)
        self.block = block("complete" if self.oracle else self.params["topology"], self.n, seeds)
        self.texts = ShardTexts([inst.shards for inst in self.instances])
        p = self.params
        store = {"store_chars": p["store_chars"], "writes": p["writes_per_round"]} if p["protocol"] == "store" else {}
        self.medium = media.medium(p["protocol"])(self.block, self.texts, p["message_chars"], **store)
        self.inbox: Delivered = self.medium.deliver()
        self.history: list[Delivered] = []  # every earlier round's inbox
        self.answers: tuple[Sequence[Any], Sequence[bool]] | None = None
        self.t = 0

    @property
    def horizon(self) -> int:
        return self.rounds + 1

    @property
    def done(self) -> bool:
        return self.t >= self.horizon

    def observe(self) -> SiloViews:
        p, inbox = self.params, self.inbox
        return SiloViews(
            self.t,
            self.rounds,
            p["protocol"],
            p["topology"],
            self.oracle,
            self.block,
            self.instances,
            inbox,
            inbox.store,
            inbox.refused,
            tuple(self.history),
            p["message_chars"],
            p["writes_per_round"],
            self.texts.costs,
        )

    def step(self, actions: SiloActions) -> None:
        if self.t < self.rounds:
            if actions.outbox is None:
                raise ValueError(f"round {self.t}: expected messages")
            self.medium.send(self.t, actions.outbox)
            self.inbox = self.medium.deliver()
            self.history.append(self.inbox)
        else:
            agents = self.block.agents
            if (
                actions.answers is None
                or actions.given is None
                or len(actions.answers) != agents
                or len(actions.given) != agents
            ):
                raise ValueError(f"round {self.t}: expected an answer (or none) for each of {agents} agents")
            self.answers = (actions.answers, actions.given)
        self.t += 1

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): messages sent, their characters and deliveries received in
        the round that led to it; at the last state the answer (JSON), whether it is exact, its partial
        credit and why it is wrong. One row per message in the `messages` table. Summary: S (`exact`),
        success (S = 1), P (`partial`), density D and the counts."""
        assert self.answers is not None, "record() before the answers"
        answers, given = self.answers
        n, states = self.n, self.rounds + 2
        traffic = self.medium.traffic(self.rounds)
        step, agent = state_agent_columns(n, states)
        texts: dict[int, str] = {}  # an answer object's JSON, once (the flood's agents share theirs)
        records = []
        for s, inst in enumerate(self.instances):
            own = slice(s * n, (s + 1) * n)
            level = BY_ID[inst.task].level
            verdicts = [
                judge(answers[v], inst.answer if self.oracle else inst.expected(v % n), level, bool(given[v]))
                for v in range(own.start, own.stop)
            ]
            exact = np.array([v[0] for v in verdicts])
            partial = np.array([v[1] for v in verdicts])
            final = [self._json(answers[v], texts) if given[v] else None for v in range(own.start, own.stop)]

            def per_state(per_round: np.ndarray, own: slice = own) -> np.ndarray:
                column = np.zeros((states, n), dtype=np.int32)
                column[1 : self.rounds + 1] = per_round[:, own]
                return column.ravel()

            def last(values: list, kind: pa.DataType) -> pa.Array:
                return pa.array([None] * (n * (states - 1)) + values, kind)

            agents = {
                "step": step,
                "agent": agent,
                "sent": per_state(traffic["sent"]),
                "chars": per_state(traffic["chars"]),
                "received": per_state(traffic["received"]),
                "answer": last(final, pa.string()),
                "exact": last(exact.tolist(), pa.bool_()),
                "partial": last(partial.tolist(), pa.float64()),
                "reason": last([v[2] for v in verdicts], pa.string()),
            }
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
                "answered": int(sum(given[own])),
                "messages": counts["messages"],
                "density": counts["messages"] / (n * (n - 1)) if n > 1 else math.nan,
                **counts,  # messages keeps its place; deliveries, characters, cut and refused follow
            }
            records.append(EpisodeRecord(agents, summary, self.medium.tables(s)))
        return records

    @staticmethod
    def _json(answer: Any, texts: dict[int, str]) -> str:
        if id(answer) not in texts:
            texts[id(answer)] = json.dumps(answer)
        return texts[id(answer)]
