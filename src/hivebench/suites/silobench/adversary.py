"""Silo-Bench's adversary (an `adversarial` fault, hivebench.perturb): it reports a wrong value of its
own shard: another agent's shard as dealt (`exchange.lies`), a value of the right kind, drawn from
nothing. It relays the other shards as its method sends them, and answers as its method answers.

A classical message carries which owners' shards it holds (a row of booleans, hivebench.suites.
silobench.exchange); the adversary marks its own owner's entry `FORGED` in the rows it sends, so that
the record writes the lie, and a classical receiver holds (and passes on, unknowing) the forged value
and answers from it. An LLM agent's message is replaced by the lie, written as a classical message
writes a shard (`{"owner": shard}`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hivebench.engine.media.exchange import Outbox
from hivebench.seeding import Streams
from hivebench.suites.silobench.exchange import FORGED, item_costs, lies, shard_items
from hivebench.suites.silobench.instances import PROBLEMS
from hivebench.suites.silobench.problems import Instance
from hivebench.suites.silobench.task import SiloActions, SiloViews


def dealt_lies(views: SiloViews) -> list[list[Any]]:
    """Per episode, every owner's lie (`exchange.lies`), made from the shards as dealt, before a late
    change (`change_at`): one lie is the same in the record, in its receivers' answers and in an LLM
    agent's text."""
    dealt = views.previous if views.previous is not None else views.instances
    return [lies(inst.shards) for inst in dealt]


def lie_costs(lied: list[list[Any]]) -> np.ndarray:
    """(episodes, n) the characters each owner's lie adds to a message (exchange.item_costs)."""
    return np.array([item_costs(shard_items(episode)) for episode in lied], dtype=np.int64)


def forged_instance(inst: Instance, owners: Sequence[int], lied: Sequence[Any]) -> Instance:
    """The instance as an agent holding `owners`' shards forged sees it (`lied`: every owner's lie), its
    answer solved anew."""
    shards = list(inst.shards)
    for owner in owners:
        shards[owner] = lied[owner]
    return Instance(inst.task, inst.n, tuple(shards), inst.public, PROBLEMS[inst.task].solve(shards, inst.public))


def with_forged_own(
    views: SiloViews, outbox: Outbox, rows: np.ndarray, lied: list[list[Any]], costs: np.ndarray
) -> Outbox:
    """The outbox with messages `rows` carrying their sender's own shard forged (classical payloads;
    `lied`, `costs`: dealt_lies and their lie_costs), or saying the forged value alone (text). A lie
    longer than the truth may take a message over the cap: the other shards it carries go, the last
    first, until it fits."""
    n = views.block.n
    sender = outbox.sender[rows]
    if outbox.payload is None:
        assert outbox.text is not None
        text = list(outbox.text)
        for row, agent in zip(rows.tolist(), sender.tolist()):
            owner = agent % n
            text[row] = "{" + f'"{owner}": {json.dumps(lied[agent // n][owner])}' + "}"
        return replace(outbox, text=text)
    payload = outbox.payload.astype(np.int8)
    own = payload[rows, sender % n] > 0
    payload[rows[own], sender[own] % n] = FORGED
    episode = sender // n
    size = np.where(payload[rows] == FORGED, costs[episode], views.item_costs[episode]) * (payload[rows] > 0)
    for i in np.flatnonzero(size.sum(axis=1) > views.message_chars).tolist():
        row, owner = int(rows[i]), int(sender[i] % n)
        for other in np.flatnonzero(payload[row])[::-1].tolist():
            if size[i].sum() <= views.message_chars:
                break
            if other != owner:
                payload[row, other], size[i, other] = 0, 0
    return replace(outbox, payload=payload)


class SiloAdversary:
    def __init__(self, streams: Streams):
        self.streams = streams  # it draws nothing
        self.lied: list[list[Any]] | None = None  # per episode, every owner's lie (made once)
        self.costs: np.ndarray | None = None

    def act(self, views: SiloViews, actions: SiloActions, agents: np.ndarray) -> SiloActions:
        outbox = actions.outbox
        if outbox is None or not len(outbox):
            return actions
        rows = np.flatnonzero(agents[outbox.sender])
        if not len(rows):
            return actions
        if self.lied is None or self.costs is None:
            self.lied = dealt_lies(views)
            self.costs = lie_costs(self.lied)
        return replace(actions, outbox=with_forged_own(views, outbox, rows, self.lied, self.costs))
