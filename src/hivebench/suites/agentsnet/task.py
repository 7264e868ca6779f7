"""An AgentsNet episode: named agents on a graph exchange messages with their neighbours for R
synchronous rounds, then each gives a final answer to the instance's problem.

Decision rounds 0..R: in rounds 0..R-1 every agent sends its messages (delivered at the start of the
next round); in round R, having read the last delivery, every agent answers. That is R deliveries and
R + 1 decisions per agent, as in the reference code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.api import EpisodeRecord
from hivebench.engine.media import NeighbourMessages, Outbox
from hivebench.suites.agentsnet import problems
from hivebench.suites.agentsnet.graphs import Instance, instance


@dataclass(frozen=True)
class NetViews:
    """One round's local views of all agents. Agent v may know: its name `graph.names[v]`, its
    neighbours and their names (`graph.neighbours(v)`), n, R, its answer options, the messages
    delivered to it (`inbox` rows with receiver v) and its own earlier rounds (`sent`). The graph
    beyond its neighbours is there for the record, not for the agent."""

    step: int  # decision round, 0..R
    horizon: int  # R + 1 decisions
    rounds: int  # R message rounds
    problem: str
    message_chars: int  # the size cap of one message
    graph: Instance
    inbox: Outbox  # delivered at the start of this round (sent in round step - 1)
    sent: tuple[Outbox, ...]  # every earlier round's messages, as delivered

    @property
    def final(self) -> bool:
        return self.step == self.rounds

    def options(self, agent: int) -> list[str]:
        return problems.options(self.problem, self.graph, agent)


@dataclass(frozen=True)
class NetActions:
    """One round's actions: messages in rounds 0..R-1, every agent's answer (None: no valid answer)
    in round R."""

    outbox: Outbox | None = None
    answers: Sequence[str | None] | None = None


def instance_seed(params: dict[str, Any], seed: int) -> int:
    """The graph a cell plays on: its own seed's, or with `instances: K` one of K per (family, n)."""
    return seed if params["instances"] is None else seed % params["instances"]


class NetTask:
    def __init__(self, params: dict[str, Any], population: int):
        self.params = params
        self.problem = params["problem"]
        self.n = population
        self.t = 0

    def reset(self, seed: int) -> None:
        self.graph = instance(self.params["family"], self.n, instance_seed(self.params, seed))
        rounds = self.params["rounds"]
        self.rounds = problems.paper_rounds(self.problem, self.n, self.graph.diameter) if rounds == "paper" else rounds
        self.medium = NeighbourMessages(self.graph.indptr, self.graph.indices, self.params["message_chars"])
        self.sent: list[Outbox] = []
        self.answers: list[str | None] = [None] * self.n
        self.t = 0

    @property
    def horizon(self) -> int:
        return self.rounds + 1

    @property
    def done(self) -> bool:
        return self.t > self.rounds

    def observe(self) -> NetViews:
        inbox = self.sent[-1] if self.sent else Outbox.empty()
        return NetViews(self.t, self.horizon, self.rounds, self.problem, self.params["message_chars"], self.graph, inbox, tuple(self.sent))

    def step(self, actions: NetActions) -> None:
        if self.t < self.rounds:
            if actions.outbox is None:
                raise ValueError(f"round {self.t}: expected messages (answers come in round {self.rounds})")
            self.sent.append(self.medium.send(self.t, actions.outbox))
        else:
            if actions.answers is None or len(actions.answers) != self.n:
                raise ValueError(f"round {self.t}: expected {self.n} answers")
            self.answers = list(actions.answers)
        self.t += 1

    def record(self) -> EpisodeRecord:
        """Per (state, agent): messages sent and received in the round that led to it, and the answer
        (state R + 1); one row per message in the `messages` table; score and solved flag."""
        states, n = self.horizon + 1, self.n
        sent = np.zeros((states, n), dtype=np.int32)
        received = np.zeros((states, n), dtype=np.int32)
        for t, outbox in enumerate(self.sent):
            sent[t + 1] = np.bincount(outbox.sender, minlength=n)
            received[t + 1] = np.bincount(outbox.receiver, minlength=n)
        answers: list[str | None] = [None] * (n * (states - 1)) + self.answers
        agents = {
            "step": np.repeat(np.arange(states, dtype=np.int32), n),
            "agent": np.tile(np.arange(n, dtype=np.int32), states),
            "name": pa.array(list(self.graph.names) * states, pa.string()),
            "sent": sent.ravel(),
            "received": received.ravel(),
            "answer": pa.array(answers, pa.string()),
        }
        messages = self.medium.table()
        valid = problems.valid(self.problem, self.graph, self.answers)
        score = problems.score(self.problem, self.graph, self.answers, valid)
        summary = {
            "problem": self.problem,
            "family": self.params["family"],
            "score": score,
            "solved": float(score == 1.0),
            "rounds": self.rounds,
            "diameter": self.graph.diameter,
            "max_degree": self.graph.max_degree,
            "edges": len(self.graph.edges),
            "valid_answers": sum(valid),
            "messages": messages.num_rows,
            "message_chars": int(pc.sum(messages.column("size")).as_py() or 0),
            "truncated_messages": self.medium.truncated,
        }
        return EpisodeRecord(agents, summary, {"messages": messages})
