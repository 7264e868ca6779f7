"""Classical AgentsNet baselines under the same message rules as the LLM agents, vectorised over the
directed edges of the graph.

`distributed` runs, for each problem, a textbook synchronous message-passing algorithm that solves it
given enough rounds; `random` answers uniformly at random and sends nothing. Every agent acts on its
own state and the messages delivered to it; all agents send to all neighbours every round (position
e of the CSR adjacency carries the message from agent src[e] to agent indices[e]).

- leader election: flood the greatest name; the agent whose own name it is says Yes. Solved once the
  rounds cover the diameter (the paper's R = 2 * diameter + 1 always does).
- consensus: every agent draws a bit; flood (name, bit) and adopt the bit of the greatest name seen.
- coloring: randomised (Delta + 1)-colouring; an agent tries a random colour not taken by a settled
  neighbour and settles on it when no neighbour tried or holds the same colour.
- vertex cover: Luby's maximal independent set (an undecided agent with the highest random priority
  among its undecided neighbours joins; the neighbours of a member leave); the agents outside it say
  Yes: the complement of a maximal independent set is a minimal vertex cover.
- matching: a free agent with free neighbours proposes to one of them at random (probability 1/2) or
  listens; a listener accepts one proposal at random and is matched; the proposer learns it next round.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.media import Outbox
from hivebench.seeding import uniform_among
from hivebench.suites.agentsnet import problems
from hivebench.suites.agentsnet.graphs import Instance
from hivebench.suites.agentsnet.task import NetActions, NetViews


class Edges:
    """The directed edges of an instance in CSR order, and the maps the algorithms reduce over."""

    def __init__(self, graph: Instance):
        self.n = graph.n
        self.indptr = graph.indptr
        self.src = np.repeat(np.arange(graph.n), graph.degrees)  # position e: from src[e] ...
        self.dst = graph.indices  # ... to dst[e]
        # rev[e]: the position of the opposite direction, so that incoming(payload)[e] is what
        # dst[e] sent to src[e]: each agent's inbox, laid out over its own CSR row.
        order = np.lexsort((self.src, self.dst))
        self.rev = np.empty_like(order)
        self.rev[order] = np.arange(len(order))
        self.starts = graph.indptr[:-1]

    def incoming(self, payload: np.ndarray) -> np.ndarray:
        return payload[self.rev]

    def row_max(self, values: np.ndarray) -> np.ndarray:
        """Per agent, the largest value over its CSR row (every agent of a connected graph has one)."""
        return np.maximum.reduceat(values, self.starts)

    def row_any(self, flags: np.ndarray) -> np.ndarray:
        return np.logical_or.reduceat(flags, self.starts)

    def outbox(self, payload: np.ndarray, render: Callable[[np.ndarray], pa.StringArray]) -> Outbox:
        return Outbox(self.src, self.dst, payload=payload, render=render)


def _words(*parts: pa.Array | str) -> pa.StringArray:
    return pc.binary_join_element_wise(*parts, " ")


class Flooding:
    """Leader election and consensus: every agent floods the greatest (name, bit) it has seen."""

    def __init__(self, views: NetViews, rng: np.random.Generator):
        graph = views.graph
        self.edges = Edges(graph)
        order = np.argsort(np.array(graph.names))  # names compare as strings; ranks are their order
        self.rank = np.empty(graph.n, dtype=np.int64)
        self.rank[order] = np.arange(graph.n)
        self.sorted_names = pa.array(np.array(graph.names)[order])
        self.best = self.rank * 2 + rng.integers(2, size=graph.n)  # (rank of a name, its bit)

    def render(self, payload: np.ndarray) -> pa.StringArray:
        return _words(pc.take(self.sorted_names, pa.array(payload // 2)), pc.cast(pa.array(payload % 2), pa.string()))

    def act(self, views: NetViews, problem: str) -> NetActions:
        if views.step > 0:
            self.best = np.maximum(self.best, self.edges.row_max(self.edges.incoming(views.inbox.payload)))
        if not views.final:
            return NetActions(outbox=self.edges.outbox(self.best[self.edges.src], self.render))
        if problem == "leader_election":
            return NetActions(answers=np.where(self.best // 2 == self.rank, problems.YES, problems.NO).tolist())
        return NetActions(answers=(self.best % 2).astype(str).tolist())


class Coloring:
    """Randomised (Delta + 1)-colouring; payload: colour * 2 + settled."""

    def __init__(self, views: NetViews, rng: np.random.Generator):
        self.edges = Edges(views.graph)
        self.rng = rng
        self.colors = views.graph.max_degree + 1
        self.color = rng.integers(self.colors, size=views.graph.n)
        self.settled = np.zeros(views.graph.n, dtype=bool)

    def render(self, payload: np.ndarray) -> pa.StringArray:
        state = pc.take(pa.array(["try", "settled"]), pa.array(payload % 2))
        return _words(state, "Group", pc.cast(pa.array(payload // 2 + 1), pa.string()))

    def act(self, views: NetViews, problem: str) -> NetActions:
        e = self.edges
        if views.step > 0:
            heard = e.incoming(views.inbox.payload)
            clash = e.row_any(heard // 2 == self.color[e.src])
            self.settled |= ~clash
            # colours settled neighbours hold are out; a free colour exists (degree < Delta + 1)
            taken = np.zeros((e.n, self.colors), dtype=bool)
            settled_heard = heard % 2 == 1
            taken[e.src[settled_heard], heard[settled_heard] // 2] = True
            redraw = uniform_among(~taken, self.rng)
            self.color = np.where(self.settled, self.color, redraw)
        if not views.final:
            return NetActions(outbox=e.outbox((self.color * 2 + self.settled)[e.src], self.render))
        return NetActions(answers=[f"Group {c + 1}" for c in self.color])


UNDECIDED, MEMBER, OUT = 0, 1, 2
STATES = pa.array(["undecided", "in", "out"])


class IndependentSet:
    """Luby's maximal independent set; vertex cover = the agents outside it. Payload: (state, priority)."""

    def __init__(self, views: NetViews, rng: np.random.Generator):
        self.edges = Edges(views.graph)
        self.rng = rng
        self.state = np.zeros(views.graph.n, dtype=np.int64)
        self.priority = self.draw()

    def draw(self) -> np.ndarray:
        # distinct priorities: a random draw, the agent's index breaking ties
        return self.rng.integers(2**20, size=self.edges.n) * self.edges.n + np.arange(self.edges.n)

    def render(self, payload: np.ndarray) -> pa.StringArray:
        return _words(pc.take(STATES, pa.array(payload[:, 0])), pc.cast(pa.array(payload[:, 1]), pa.string()))

    def act(self, views: NetViews, problem: str) -> NetActions:
        e = self.edges
        if views.step > 0:
            heard = e.incoming(views.inbox.payload)
            undecided = self.state == UNDECIDED
            beside_member = e.row_any(heard[:, 0] == MEMBER)
            rival = np.where(heard[:, 0] == UNDECIDED, heard[:, 1], -1)
            highest = self.priority > e.row_max(rival)
            self.state = np.where(undecided & beside_member, OUT, np.where(undecided & highest, MEMBER, self.state))
            self.priority = self.draw()
        if not views.final:
            payload = np.stack([self.state[e.src], self.priority[e.src]], axis=1)
            return NetActions(outbox=e.outbox(payload, self.render))
        return NetActions(answers=np.where(self.state == MEMBER, problems.NO, problems.YES).tolist())


FREE, MATCHED, PROPOSE, ACCEPT = 0, 1, 2, 3
SIGNALS = pa.array(["free", "matched", "propose", "accept"])


class Matching:
    """Randomised proposals; payload per directed edge: what the sender tells that neighbour.

    A proposal sent in round t is read in round t + 1, where a listening neighbour may accept it (and
    is matched at once); the acceptance is read in round t + 2, where the proposer is matched. A
    proposer waits (neither accepts nor proposes) in round t + 1."""

    def __init__(self, views: NetViews, rng: np.random.Generator):
        self.edges = Edges(views.graph)
        self.rng = rng
        self.names = views.graph.names
        self.partner = np.full(views.graph.n, -1)
        self.proposal = np.full(views.graph.n, -1)  # the CSR position of an agent's open proposal
        self.proposed_in = np.full(views.graph.n, -9)  # the round it was sent in

    def render(self, payload: np.ndarray) -> pa.StringArray:
        return pc.take(SIGNALS, pa.array(payload))

    def act(self, views: NetViews, problem: str) -> NetActions:
        e, t = self.edges, views.step
        signal = np.full(len(e.src), FREE)
        heard = e.incoming(views.inbox.payload) if t > 0 else np.full(len(e.src), FREE)
        answered = self.proposed_in == t - 2  # the reply to these proposals arrives now
        accepted = answered & (heard[np.maximum(self.proposal, 0)] == ACCEPT)
        self.partner[accepted] = e.dst[self.proposal[accepted]]
        self.proposal[answered] = -1
        waiting = self.proposed_in == t - 1
        if views.final:
            return NetActions(answers=[self.names[p] if p >= 0 else problems.NONE for p in self.partner])
        listening = (self.partner < 0) & ~waiting
        choice = self._one_per_row((heard == PROPOSE) & listening[e.src])
        self.partner[e.src[choice]] = e.dst[choice]
        signal[choice] = ACCEPT
        # the rest propose with probability 1/2, to one neighbour that was still free last round
        free = (self.partner < 0) & ~waiting & (self.rng.random(e.n) < 0.5)
        choice = self._one_per_row(free[e.src] & (heard != MATCHED) & (heard != ACCEPT))
        self.proposal[e.src[choice]] = choice
        self.proposed_in[e.src[choice]] = t
        signal[choice] = PROPOSE
        signal[(self.partner >= 0)[e.src] & (signal == FREE)] = MATCHED
        return NetActions(outbox=e.outbox(signal, self.render))

    def _one_per_row(self, mask: np.ndarray) -> np.ndarray:
        """CSR positions: in each row with a True entry, one of them uniformly at random."""
        keys = np.where(mask, self.rng.random(len(mask)), -1.0)
        best = self.edges.row_max(keys)
        return np.flatnonzero(mask & (keys == best[self.edges.src]))


PROTOCOLS: dict[str, type] = {
    "leader_election": Flooding,
    "consensus": Flooding,
    "coloring": Coloring,
    "vertex_cover": IndependentSet,
    "matching": Matching,
}


class DistributedAlgorithm:
    """The problem's distributed algorithm, built on the first round (when the instance is known)."""

    def __init__(self, params: dict[str, Any], rng: np.random.Generator):
        self.rng = rng
        self.protocol: Any = None

    def decide(self, views: NetViews) -> NetActions:
        if self.protocol is None:
            self.protocol = PROTOCOLS[views.problem](views, self.rng)
        return self.protocol.act(views, views.problem)


class RandomAnswers:
    """Sends nothing; answers uniformly at random among its options."""

    def __init__(self, params: dict[str, Any], rng: np.random.Generator):
        self.rng = rng

    def decide(self, views: NetViews) -> NetActions:
        if not views.final:
            return NetActions(outbox=Outbox.empty())
        options = [views.options(v) for v in range(views.graph.n)]
        picks = self.rng.random(views.graph.n)
        return NetActions(answers=[o[int(p * len(o))] for o, p in zip(options, picks)])
