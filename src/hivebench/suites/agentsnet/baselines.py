"""Classical AgentsNet baselines under the same message rules as the LLM agents, vectorised over the
directed edges of a block's graph (the episodes' graphs side by side).

`distributed` runs, for each problem, a textbook synchronous message-passing algorithm that solves it
given enough rounds; `random` answers uniformly at random and sends nothing. Every agent acts on its
own state and the messages delivered to it; all agents send to all neighbours every round: the same
message to each (a broadcast: flooding, colouring, the independent set) or one per neighbour
(matching; position e of the CSR adjacency carries the message from agent src[e] to agent
indices[e]). A message's text is a code into a list of texts built once per block. Every random
draw is per episode (`Streams`).

- leader election: flood the greatest name; the agent whose own name it is says Yes. Solved once the
  rounds cover the diameter (the paper's R = 2 * diameter + 1 always does). It draws nothing.
- consensus: every agent draws a bit; flood (name, bit) and adopt the bit of the greatest name seen.
- coloring: randomised (Delta + 1)-colouring; an agent tries a random colour not taken by a settled
  neighbour and settles on it when no neighbour tried or holds the same colour.
- vertex cover: Luby's maximal independent set (an undecided agent whose fresh random priority, ties
  broken by index, is the highest among its undecided neighbours joins; the neighbours of a member
  leave); the agents outside it say Yes: the complement of a maximal independent set is a minimal
  vertex cover.
- matching: a free agent with free neighbours proposes to one of them at random (probability 1/2) or
  listens; a listener accepts one proposal at random and is matched; the proposer learns it next round.
"""

from __future__ import annotations

from functools import cache, cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.api import Policy
from hivebench.engine.media import Outbox
from hivebench.seeding import Streams
from hivebench.suites.agentsnet import problems
from hivebench.suites.agentsnet.graphs import Block, Instance
from hivebench.suites.agentsnet.task import NetActions, NetViews


class Edges:
    """The directed edges of a block in CSR order, and the maps the algorithms reduce over."""

    def __init__(self, block: Block):
        self.n = block.agents
        self.indptr = block.indptr
        self.src = block.src  # position e: from src[e] ...
        self.dst = block.indices  # ... to dst[e]
        self.split = [int(g.indptr[-1]) for g in block.graphs]  # directed edges per episode

    @cached_property
    def rev(self) -> np.ndarray:
        """rev[e]: the position of the opposite direction, so that a per-edge payload taken at rev is
        what dst[e] sent to src[e]: each agent's inbox, laid out over its own CSR row."""
        order = np.lexsort((self.src, self.dst))
        rev = np.empty_like(order)
        rev[order] = np.arange(len(order))
        return rev

    def received(self, inbox: Outbox, missing: int) -> np.ndarray:
        """Per position e, the payload dst[e] sent src[e] in the round just ended; `missing` where none
        arrived (a perturbed medium loses, delays or reorders messages, a silent agent sends none:
        hivebench.perturb), the latest where several did."""
        if not len(inbox.sender):  # nothing arrived: every agent was silent (asleep, or its decision late)
            return np.full(len(self.src), missing)
        assert inbox.payload is not None
        if inbox.sender is self.src and inbox.receiver is self.dst:  # this policy's own outbox, whole
            # (np.take gathers faster than indexing)
            return np.take(inbox.payload, self.dst if inbox.per_sender else self.rev, axis=0)
        rows = inbox.take(np.arange(len(inbox.sender)))  # one row per message
        heard = np.full(len(self.src), missing, dtype=inbox.payload.dtype)
        # found at its own edge's position (in sender order, the keys searched for come sorted, several
        # times faster to find), heard at the opposite direction's
        sent = np.searchsorted(self.keys, rows.sender.astype(np.int64) * self.n + rows.receiver)
        heard[self.rev[sent]] = rows.payload
        return heard

    @cached_property
    def keys(self) -> np.ndarray:
        """src[e] * n + dst[e], ascending (CSR order)."""
        return self.src.astype(np.int64) * self.n + self.dst

    def row_max(self, values: np.ndarray) -> np.ndarray:
        """Per agent, the largest value over its CSR row (every agent of a connected graph has one).
        (`ufunc.at` beats `reduceat` over many short rows.)"""
        lowest = -np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).min
        out = np.full(self.n, lowest, dtype=values.dtype)
        np.maximum.at(out, self.src, values)
        return out

    def row_any(self, flags: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        np.logical_or.at(out, self.src, flags)
        return out

    def outbox(self, payload: np.ndarray, codes: np.ndarray, dictionary: pa.StringArray) -> Outbox:
        """One message per directed edge (position e: from src[e] to dst[e])."""
        return Outbox(self.src, self.dst, payload=payload, codes=codes, dictionary=dictionary)

    def broadcast(self, values: np.ndarray, dictionary: pa.StringArray) -> Outbox:
        """Every agent sends each neighbour the same message: `values[v]`, also its text's code."""
        return Outbox(self.src, self.dst, payload=values, codes=values, dictionary=dictionary, per_sender=True)


def _words(*parts: pa.Array | str) -> pa.StringArray:
    return pc.binary_join_element_wise(*parts, " ")


def _pick(options: list[str], choice: np.ndarray) -> pa.StringArray:
    """Per agent, `options[choice[v]]`."""
    return pa.array(options).take(pa.array(choice.astype(np.int32)))


def _answers(views: NetViews, compute: Any) -> Any:
    """The block's answers (`compute()`, one per agent) in a round where some episode asks for them."""
    return compute() if views.answering.any() else None


@cache  # instances are built once per (family, n, seed); so are their texts
def _flooding_texts(graph: Instance, bits: bool) -> tuple[np.ndarray, pa.StringArray]:
    """Each agent's rank among the names (names compare as strings) and the texts of the messages:
    the name of rank r (code r), or with `bits` the name and a bit (code r * 2 + bit)."""
    order = np.argsort(np.array(graph.names))
    rank = np.empty(graph.n, dtype=np.int64)
    rank[order] = np.arange(graph.n)
    names = np.array(graph.names)[order]
    if not bits:
        return rank, pa.array(names)
    return rank, _words(pa.array(np.repeat(names, 2)), pc.cast(pa.array(np.tile([0, 1], graph.n)), pa.string()))


class Flooding:
    """Leader election: every agent floods the greatest name it has seen, and says Yes if it is its
    own. Consensus: every agent draws a bit and floods the greatest (name, bit), adopting its bit."""

    def __init__(self, views: NetViews, rng: Streams):
        block = views.block
        self.edges = Edges(block)
        self.bits = views.problem == "consensus"
        texts = [_flooding_texts(g, self.bits) for g in block.graphs]
        # ranks of different episodes never meet: offset them so one code space serves the block
        self.rank = np.concatenate([rank + s * block.n for s, (rank, _) in enumerate(texts)])
        self.texts = pa.concat_arrays([t for _, t in texts])
        self.best = self.rank * 2 + rng.integers(0, 2, (block.agents,)) if self.bits else self.rank

    def act(self, views: NetViews) -> NetActions:
        if views.step > 0:
            self.best = np.maximum(self.best, self.edges.row_max(self.edges.received(views.inbox, -1)))
        if self.bits:
            answers = _answers(views, lambda: _pick(["0", "1"], self.best % 2))
        else:
            answers = _answers(views, lambda: _pick([problems.NO, problems.YES], self.best == self.rank))
        return NetActions(outbox=self.edges.broadcast(self.best, self.texts), answers=answers)


@cache
def _coloring_texts(colors: int) -> pa.StringArray:
    """Texts of colour * 2 + settled."""
    state = pa.array(["try", "settled"] * colors)
    return _words(state, pa.array(np.repeat(problems.groups(colors), 2)))


class Coloring:
    """Randomised (Delta + 1)-colouring; payload: colour * 2 + settled."""

    def __init__(self, views: NetViews, rng: Streams):
        block = views.block
        self.edges = Edges(block)
        self.rng = rng
        self.colors = np.repeat([g.max_degree + 1 for g in block.graphs], block.n)  # per agent
        self.texts = _coloring_texts(int(self.colors.max()))
        self.color = self.pick(np.ones((block.agents, int(self.colors.max())), dtype=bool))
        self.settled = np.zeros(block.agents, dtype=bool)

    def pick(self, free: np.ndarray) -> np.ndarray:
        """Per agent, a colour uniformly at random among the free ones of its episode's Delta + 1."""
        free = free & (np.arange(free.shape[1]) < self.colors[:, None])
        k = np.floor(self.rng.random((len(free),)) * free.sum(axis=1))
        return np.argmax(np.cumsum(free, axis=1) > k[:, None], axis=1)

    def act(self, views: NetViews) -> NetActions:
        e = self.edges
        if views.step > 0:
            heard = e.received(views.inbox, -2)  # no colour (-2 // 2 = -1), not settled
            clash = e.row_any(heard // 2 == self.color[e.src])
            self.settled |= ~clash
            # colours settled neighbours hold are out; a free colour exists (degree < Delta + 1)
            taken = np.zeros((e.n, len(self.texts) // 2), dtype=bool)
            settled_heard = heard % 2 == 1
            taken[e.src[settled_heard], heard[settled_heard] // 2] = True
            self.color = np.where(self.settled, self.color, self.pick(~taken))
        answers = _answers(views, lambda: _pick(problems.groups(len(self.texts) // 2), self.color))
        return NetActions(outbox=e.broadcast(self.color * 2 + self.settled, self.texts), answers=answers)


UNDECIDED, MEMBER, OUT = 0, 1, 2


@cache
def _independent_set_texts(n: int) -> pa.StringArray:
    """Texts of state * n + priority."""
    states = pa.array(np.repeat(["undecided", "in", "out"], n))
    return _words(states, pc.cast(pa.array(np.tile(np.arange(n), 3)), pa.string()))


class IndependentSet:
    """Luby's maximal independent set; vertex cover = the agents outside it. Payload: state * n +
    priority, a fresh random priority in 0..n-1 each round (n agents per episode), so undecided
    senders are exactly the payloads below n. Equal priorities are ordered by the agents' indices
    (a receiver knows who sent each message)."""

    def __init__(self, views: NetViews, rng: Streams):
        self.edges = Edges(views.block)
        self.per_episode = n = views.block.n
        self.texts = _independent_set_texts(n)
        self.state = np.zeros(views.block.agents, dtype=np.int64)
        # every round's priorities drawn at once, each episode for its own R + 1 rounds
        rounds = views.rounds + 1
        flat = rng.integers(0, n, (int(rounds.sum()) * n,), split=(rounds * n).tolist())
        self.priorities = np.zeros((int(rounds.max()), len(rounds), n), dtype=np.int64)
        for s, part in enumerate(np.split(flat, np.cumsum(rounds * n)[:-1])):
            self.priorities[: rounds[s], s] = part.reshape(rounds[s], n)
        self.last = self.priorities[0].ravel()  # the priorities the agents sent last round
        self.order = np.arange(views.block.agents)  # what breaks a tie of priorities: the agents' indices

    def priority(self, step: int) -> np.ndarray:
        """(agents,) the priorities the agents send in round `step`."""
        return self.priorities[step].ravel()

    def act(self, views: NetViews) -> NetActions:
        e, n, agents = self.edges, self.per_episode, self.edges.n
        priority = self.priority(views.step)
        if views.step > 0:
            # each message read as a (priority, sender index) key, a member's above every key, a
            # decided-out agent's (and none: 3n) below
            heard = e.received(views.inbox, 3 * n)
            sender = self.order[e.dst]
            keys = np.where(heard < n, heard * agents + sender, np.where(heard < 2 * n, n * agents, -1))
            rival = e.row_max(keys)
            undecided = self.state == UNDECIDED
            beside_member = rival == n * agents
            highest = self.last * agents + self.order > rival
            self.state = np.where(undecided & beside_member, OUT, np.where(undecided & highest, MEMBER, self.state))
        self.last = priority
        answers = _answers(views, lambda: _pick([problems.YES, problems.NO], self.state == MEMBER))
        return NetActions(outbox=e.broadcast(self.state * n + priority, self.texts), answers=answers)


FREE, MATCHED, PROPOSE, ACCEPT = 0, 1, 2, 3
SIGNALS = pa.array(["free", "matched", "propose", "accept"])


class Matching:
    """Randomised proposals; payload per directed edge: what the sender tells that neighbour.

    A proposal sent in round t is read in round t + 1, where a listening neighbour may accept it (and
    is matched at once); the acceptance is read in round t + 2, where the proposer is matched. A
    proposer waits (neither accepts nor proposes) in round t + 1. An agent answers with its partner
    as of the start of its episode's round R."""

    def __init__(self, views: NetViews, rng: Streams):
        self.edges = Edges(views.block)
        self.rng = rng
        self.names = views.block.names
        self.partner = np.full(views.block.agents, -1)
        self.proposal = np.full(views.block.agents, -1)  # the CSR position of an agent's open proposal
        self.proposed_in = np.full(views.block.agents, -9)  # the round it was sent in

    def act(self, views: NetViews) -> NetActions:
        e, t = self.edges, views.step
        signal = np.full(len(e.src), FREE)
        heard = e.received(views.inbox, -1) if t > 0 else np.full(len(e.src), FREE)
        answered = self.proposed_in == t - 2  # the reply to these proposals arrives now
        accepted = answered & (heard[np.maximum(self.proposal, 0)] == ACCEPT)
        self.partner[accepted] = e.dst[self.proposal[accepted]]
        self.proposal[answered] = -1
        waiting = self.proposed_in == t - 1
        answers = _answers(views, lambda: [self.names[p] if p >= 0 else problems.NONE for p in self.partner])
        listening = (self.partner < 0) & ~waiting
        choice = self._one_per_row((heard == PROPOSE) & listening[e.src])
        self.partner[e.src[choice]] = e.dst[choice]
        signal[choice] = ACCEPT
        # the rest propose with probability 1/2, to one neighbour that was still free last round
        free = (self.partner < 0) & ~waiting & (self.rng.random((e.n,)) < 0.5)
        choice = self._one_per_row(free[e.src] & (heard != MATCHED) & (heard != ACCEPT))
        self.proposal[e.src[choice]] = choice
        self.proposed_in[e.src[choice]] = t
        signal[choice] = PROPOSE
        signal[(self.partner >= 0)[e.src] & (signal == FREE)] = MATCHED
        return NetActions(outbox=e.outbox(signal, signal, SIGNALS), answers=answers)

    def _one_per_row(self, mask: np.ndarray) -> np.ndarray:
        """CSR positions: in each row with a True entry, one of them uniformly at random."""
        keys = np.where(mask, self.rng.random(mask.shape, self.edges.split), -1.0)
        best = self.edges.row_max(keys)
        return np.flatnonzero(mask & (keys == best[self.edges.src]))


PROTOCOLS: dict[str, type] = {
    "leader_election": Flooding,
    "consensus": Flooding,
    "coloring": Coloring,
    "vertex_cover": IndependentSet,
    "matching": Matching,
}


class DistributedAlgorithm(Policy):
    """The problem's distributed algorithm, built on the first round (when the instances are known)."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng
        self.protocol: Any = None

    def decide(self, views: NetViews) -> NetActions:
        if self.protocol is None:
            self.protocol = PROTOCOLS[views.problem](views, self.rng)
        return self.protocol.act(views)


class RandomAnswers(Policy):
    """Sends nothing; answers uniformly at random among its options."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng

    def decide(self, views: NetViews) -> NetActions:
        picks = self.rng.random((views.block.agents,))  # one draw per agent every round
        if not views.answering.any():
            return NetActions(outbox=Outbox.empty())
        options = [views.options(v) for v in range(views.block.agents)]
        return NetActions(outbox=Outbox.empty(), answers=[o[int(p * len(o))] for o, p in zip(options, picks)])
