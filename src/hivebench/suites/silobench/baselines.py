"""Classical Silo-Bench baselines under the same protocols and caps as the LLM agents, vectorised over a
block's agents. Each agent tracks which owners' shards it holds (a row of booleans) and answers by
solving the task on exactly those shards as if they were all the data.

- distributed: gather everything, then solve. On the complete topology every agent sends its own
  shard once to everyone (p2p: N - 1 messages; broadcast: one); on the degree-three ports it floods:
  every round an agent passes each shard it has not passed on yet to its neighbours (p2p: all but the
  one it came from; broadcast: all), packed in owner order up to the message cap, the rest next round,
  so after as many rounds as the diameter everyone holds every shard. store: every agent writes its own shard once,
  under its id, and reads the others' next round. Exact on every task whenever the rounds cover the
  diameter.
- local: sends nothing; answers from its own shard alone.
- random: random gossip. Each shard an agent holds is passed on once, like the flood, but at random:
  p2p, each round an agent sends what it has not passed on yet (to the cap) to one neighbour drawn at
  random; broadcast, it broadcasts it with probability 1/2 each round; store, it writes its own shard
  with probability 1/2 each round until it has.

With `submission: any_round` an agent of distributed or random answers in the round it holds every
shard and has passed on all it passes (what it sends that round included): it would send nothing more,
so the others learn what they did before, and its answer is the one it gives at round R otherwise.
local never holds every shard, and answers at round R.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import Policy
from hivebench.engine.media.exchange import Outbox
from hivebench.seeding import Streams
from hivebench.suites.silobench.adversary import dealt_lies, forged_instance, lie_costs
from hivebench.suites.silobench.exchange import FORGED
from hivebench.suites.silobench.instances import own_answer, whole_answer
from hivebench.suites.silobench.problems import Instance
from hivebench.suites.silobench.task import SiloActions, SiloViews


class Holdings:
    """Which shards each agent of a block holds, and the answers they give from them."""

    def __init__(self) -> None:
        self.known: np.ndarray | None = None  # (agents, n)
        self.own: np.ndarray | None = None  # (agents, n): each agent's own shard
        self.passed: np.ndarray | None = None
        self.source: np.ndarray | None = None  # (agents, n): the neighbour each shard came from (-1: own or none)
        self.held: list[np.ndarray] = []  # shards held by each agent at the start of each round
        self.answered: np.ndarray | None = None  # (agents,): the round each agent answered in (-1: not yet)
        # With the late-counterevidence intervention (`change_at`): the version of each shard each agent
        # holds (-1: none, 0: as dealt, 1: as changed); None without it
        self.version: np.ndarray | None = None
        self.news: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        # Once an adversary's lie has arrived (hivebench.suites.silobench.adversary): which shards each
        # agent holds forged, unknowing (it passes them on as they came), and what each lie costs a
        # message; None before
        self.forged: np.ndarray | None = None
        self.lied: list[list[Any]] | None = None  # per episode, every owner's lie (made once)
        self.lie_costs: np.ndarray | None = None

    def start(self, views: SiloViews) -> None:
        agents, n = views.block.agents, views.block.n
        if views.oracle:
            self.known = np.ones((agents, views.instances[0].n), dtype=bool)
        else:
            self.known = np.zeros((agents, n), dtype=bool)
            self.known[np.arange(agents), np.arange(agents) % n] = True
        self.own = self.known.copy()
        self.passed = np.zeros_like(self.known)  # shards each agent has passed on
        self.source = np.full(self.known.shape, -1, dtype=np.int64)
        self.answered = np.full(agents, -1, dtype=np.int64)
        if views.intervention >= 0:
            self.version = np.where(self.known, 0, -1).astype(np.int8)

    def read(self, views: SiloViews) -> np.ndarray:
        """Take in this round's deliveries (or the store); the holdings after. `news`: the (delivery,
        owner) pairs that told their receiver something: a shard it did not hold, or a newer version."""
        if self.known is None:
            self.start(views)
        known, source = self.known, self.source
        assert known is not None and source is not None
        inbox = views.inbox
        if len(inbox.receiver):
            assert inbox.outbox.payload is not None
            payload, lied = carried_shards(inbox.outbox.payload[inbox.message])
            news = payload & ~known[inbox.receiver]
            if self.version is not None:  # a delivery carries the versions its sender held when it sent
                carried = np.where(payload, self.version[inbox.sender], -1)
                newest = np.full(self.version.shape, -1, dtype=np.int8)  # per receiver and owner, this round
                np.maximum.at(newest, inbox.receiver, carried)
                news = (carried > self.version[inbox.receiver]) & (carried == newest[inbox.receiver])
            rows, owners = np.nonzero(news)
            self.news = (rows, owners)
            receiver = inbox.receiver[rows]
            if self.version is not None:
                assert self.passed is not None
                self.passed[receiver, owners] = False  # a newer version is passed on in its turn
                np.maximum.at(self.version, (receiver, owners), carried[rows, owners])
            source[receiver, owners] = inbox.sender[rows]
            known[receiver, owners] = True
            if lied is not None or self.forged is not None:  # a shard is held as the delivery that told it has it
                forged = self._forged(views)
                forged[receiver, owners] = False if lied is None else lied[rows, owners]
        n = views.block.n
        if self.version is not None and views.changed is not None and views.step == views.intervention:
            assert self.passed is not None
            owners = views.changed
            agents = np.arange(len(owners)) * n + owners  # each changed shard's owner takes it in
            self.version[agents, owners] = 1
            self.passed[agents, owners] = False
        for s, store in enumerate(views.store):
            for entry in store.values():
                if entry.payload is not None and entry.step == views.step - 1:  # older writes are held already
                    payload, lied = carried_shards(entry.payload)
                    readers = slice(s * n, (s + 1) * n)
                    if lied is not None or self.forged is not None:
                        forged = self._forged(views)
                        fresh = payload & ~known[readers]
                        forged[readers] = np.where(fresh, False if lied is None else lied, forged[readers])
                    known[readers] |= payload
        self.held.append(known.sum(axis=1))
        return known

    def _forged(self, views: SiloViews) -> np.ndarray:
        """Which shards each agent holds forged, kept from the first lie on."""
        if self.forged is None:
            assert self.known is not None
            self.forged = np.zeros_like(self.known)
            self.lied = dealt_lies(views)
            self.lie_costs = lie_costs(self.lied)
        return self.forged

    def marked(self, outbox: Outbox) -> Outbox:
        """The outbox with each forged shard its senders hold marked `FORGED`, as it came to them."""
        if self.forged is None or outbox.payload is None or not len(outbox):
            return outbox
        lied = outbox.payload & self.forged[outbox.sender]
        if not lied.any():
            return outbox
        return replace(outbox, payload=np.where(lied, FORGED, outbox.payload).astype(np.int8))

    def unpassed(self, own_only: bool) -> np.ndarray:
        """The shards each agent has not passed on yet: of its own only, or of all it holds."""
        assert self.known is not None and self.own is not None and self.passed is not None
        return (self.own if own_only else self.known) & ~self.passed

    def fresh(self, views: SiloViews, own_only: bool) -> np.ndarray:
        """The shards each agent has not passed on yet that fit one message."""
        return self.packed(views, self.unpassed(own_only))

    def packed(self, views: SiloViews, wanted: np.ndarray) -> np.ndarray:
        """Of the shards each agent wants to send, those that fit one message, in owner order."""
        episode = np.arange(views.block.agents) // views.block.n
        costs = views.item_costs[episode]
        if self.forged is not None:  # a lie it passes on costs what the lie's text does
            assert self.lie_costs is not None
            costs = np.where(self.forged, self.lie_costs[episode], costs)
        costs = np.where(wanted, costs, 0)
        return wanted & (np.cumsum(costs, axis=1) <= views.message_chars)

    def answers(self, views: SiloViews, who: np.ndarray) -> tuple[list[Any], np.ndarray]:
        """The answers of agents `who` from the shards they hold (one solve per distinct holding), None
        for the others; `who` answered in this round."""
        assert self.known is not None and self.answered is not None
        solved: dict[tuple[int, int, bytes, bytes], tuple[Any, list[int], Instance]] = {}
        answers: list[Any] = [None] * len(self.known)
        n = views.block.n
        for v in np.flatnonzero(who).tolist():
            s, inst = v // n, views.instances[v // n]
            if views.previous is not None and self.version is not None and self.version[v, views.changed[s]] == 0:
                inst = views.previous[s]  # it holds the changed shard as it was
            forged = None if self.forged is None else self.forged[v]
            key = (s, id(inst), self.known[v].tobytes(), b"" if forged is None else forged.tobytes())
            if key not in solved:
                owners = np.flatnonzero(self.known[v]).tolist()
                if forged is not None and forged.any():
                    assert self.lied is not None
                    inst = forged_instance(inst, np.flatnonzero(forged).tolist(), self.lied[s])
                solved[key] = (whole_answer(inst, owners), owners, inst)
            whole, owners, inst = solved[key]
            answers[v] = whole if views.oracle else own_answer(inst, whole, owners, v % n)
        self.answered[who & (self.answered < 0)] = views.step
        return answers, who

    def columns(self, episode: int, n: int) -> dict[str, pa.Array]:
        """Shards held by each agent at every state of its episode (state 0: its own), which runs to
        the round after its last agent answered (that round delivers it nothing)."""
        assert self.answered is not None
        own = slice(episode * n, (episode + 1) * n)
        last = int(self.answered[own].max())
        held = np.stack([*self.held[: last + 1], self.held[last]])[:, own]
        return {"held": pa.array(held.ravel().astype(np.int32))}


def carried_shards(payload: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A payload's rows as (which owners' shards each carries, which of them forged: None where none
    can be, a boolean payload)."""
    if payload.dtype == bool:
        return payload, None
    return payload > 0, payload == FORGED


class ClassicalPolicy(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.holdings = Holdings()
        self.n = 0
        self.asked: np.ndarray | None = None  # who may send this round (hivebench.engine.api.Policy): all
        self.lost: np.ndarray | None = None  # whose pending call was lost this round (the same): none
        self.calls: np.ndarray | None = None  # per agent, the shards its last call passes on (told who acts)

    def fresh(self, views: SiloViews, own_only: bool) -> np.ndarray:
        """The shards each agent would pass on now: none for an agent not asked this round (what it
        has not sent it has not passed on); an asked agent's are its call's, kept until its next."""
        packed = self.holdings.fresh(views, own_only=own_only)
        if self.asked is None:
            return packed
        packed = packed & self.asked[:, None]
        if self.calls is None:
            self.calls = np.zeros_like(packed)
        self.calls[self.asked] = packed[self.asked]
        return packed

    def decide(self, views: SiloViews) -> SiloActions:
        known = self.holdings.read(views)
        if self.lost is not None and self.calls is not None:  # a call lost before it applied sent nothing
            assert self.holdings.passed is not None
            self.holdings.passed[self.lost] &= ~self.calls[self.lost]
        self.n = views.block.n
        if views.answering:
            answers, given = self.holdings.answers(views, views.active)
            return SiloActions(answers=answers, given=given)
        outbox = self.holdings.marked(self.send(views, known))
        if not views.early:
            return SiloActions(outbox=outbox)
        done = views.active & known.all(axis=1) & ~self.holdings.unpassed(self.own_only(views)).any(axis=1)
        answers, given = self.holdings.answers(views, done)
        return SiloActions(outbox, answers, given)

    def own_only(self, views: SiloViews) -> bool:
        """Whether the agents pass on their own shards only (else every shard they hold)."""
        return True

    def send(self, views: SiloViews, known: np.ndarray) -> Outbox:
        raise NotImplementedError

    def columns(self, episode: int) -> dict[str, pa.Array]:
        return self.holdings.columns(episode, self.n)


def outbox(
    views: SiloViews,
    shards: np.ndarray,
    speaking: np.ndarray,
    to: np.ndarray | None = None,
    source: np.ndarray | None = None,
) -> Outbox:
    """The messages of the agents in `speaking`, each carrying its row of `shards`: p2p to `to` (one
    receiver each) or, without `to`, to every neighbour but the one each shard came from (`source`);
    broadcast once; store as a write of key "<id>"."""
    senders = np.flatnonzero(speaking)
    if views.protocol == "p2p" and to is None:
        i, receiver = views.block.fan_out(senders)
        sender = senders[i]
        carried = shards[sender] if source is None else shards[sender] & (source[sender] != receiver[:, None])
        kept = carried.any(axis=1)
        return Outbox(sender[kept], receiver[kept], payload=carried[kept])
    if views.protocol == "p2p":
        assert to is not None
        return Outbox(senders, to[senders], payload=shards[senders])
    keys = [str(v % views.block.n) for v in senders.tolist()] if views.protocol == "store" else None
    return Outbox(senders, np.full(len(senders), -1), payload=shards[senders], keys=keys)


class Distributed(ClassicalPolicy):
    """Flood (p2p, broadcast) or write once (store); see the module's docstring."""

    def own_only(self, views: SiloViews) -> bool:
        # where everyone hears every owner (the store, the complete topology) only owners send
        return views.protocol == "store" or views.topology == "complete"

    def send(self, views: SiloViews, known: np.ndarray) -> Outbox:
        direct = self.own_only(views)
        packed = self.fresh(views, own_only=direct)
        self.holdings.passed |= packed
        return outbox(views, packed, packed.any(axis=1), source=None if direct else self.holdings.source)


class LocalOnly(ClassicalPolicy):
    def send(self, views: SiloViews, known: np.ndarray) -> Outbox:
        return Outbox.empty()


class RandomGossip(ClassicalPolicy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        super().__init__(params, rng)
        self.rng = rng

    def own_only(self, views: SiloViews) -> bool:
        return views.protocol == "store"

    def send(self, views: SiloViews, known: np.ndarray) -> Outbox:
        """One number per agent per round, whatever the protocol: p2p, which neighbour hears it;
        broadcast and store, whether it speaks (below 1/2)."""
        draws = self.rng.random((len(known),))
        packed = self.fresh(views, own_only=self.own_only(views))
        if views.protocol == "p2p":
            indptr, indices = views.block.indptr, views.block.indices
            degrees = np.diff(indptr)
            to = indices[indptr[:-1] + np.minimum((draws * degrees).astype(np.int64), degrees - 1)]
            speaking = packed.any(axis=1)
            sent = outbox(views, packed, speaking, to)
        else:
            speaking = (draws < 0.5) & packed.any(axis=1)
            sent = outbox(views, packed, speaking)
        self.holdings.passed[speaking] |= packed[speaking]
        return sent
