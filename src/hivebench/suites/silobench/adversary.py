"""Silo-Bench's adversary (an `adversarial` fault, hivebench.perturb): it reports a wrong value of its
own shard: another agent's shard (`exchange.forged_shard`), a value of the right kind, drawn from
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

import numpy as np

from hivebench.engine.media.exchange import Outbox
from hivebench.seeding import Streams
from hivebench.suites.silobench.exchange import FORGED, forged_shard
from hivebench.suites.silobench.instances import PROBLEMS
from hivebench.suites.silobench.problems import Instance
from hivebench.suites.silobench.task import SiloActions, SiloViews


def forged_instance(inst: Instance, owners: Sequence[int]) -> Instance:
    """The instance as an agent holding `owners`' shards forged sees it, its answer solved anew."""
    shards = list(inst.shards)
    for owner in owners:
        shards[owner] = forged_shard(inst.shards, owner)
    return Instance(inst.task, inst.n, tuple(shards), inst.public, PROBLEMS[inst.task].solve(shards, inst.public))


def with_forged_own(views: SiloViews, outbox: Outbox, rows: np.ndarray) -> Outbox:
    """The outbox with messages `rows` carrying their sender's own shard forged (classical payloads),
    or saying the forged value alone (text)."""
    n = views.block.n
    sender = outbox.sender[rows]
    if outbox.payload is not None:
        payload = outbox.payload.astype(np.int8)
        own = payload[rows, sender % n] > 0
        payload[rows[own], sender[own] % n] = FORGED
        return replace(outbox, payload=payload)
    assert outbox.text is not None
    text = list(outbox.text)
    for row, agent in zip(rows.tolist(), sender.tolist()):
        inst, owner = views.instances[agent // n], agent % n
        text[row] = "{" + f'"{owner}": {json.dumps(forged_shard(inst.shards, owner))}' + "}"
    return replace(outbox, text=text)


class SiloAdversary:
    def __init__(self, streams: Streams):
        self.streams = streams  # it draws nothing

    def act(self, views: SiloViews, actions: SiloActions, agents: np.ndarray) -> SiloActions:
        outbox = actions.outbox
        if outbox is None or not len(outbox):
            return actions
        rows = np.flatnonzero(agents[outbox.sender])
        return replace(actions, outbox=with_forged_own(views, outbox, rows)) if len(rows) else actions
