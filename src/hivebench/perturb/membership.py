"""Routing around the agents away from the swarm (churn, hivebench.perturb.agents.Gate): the task's
medium, wrapped, delivers nothing to an agent that is away in the round its message would reach it
from; what it misses never arrives, also after it comes back. A shared store (Silo-Bench's `store`)
routes nothing: an absent agent reads it no more than it writes it. The summary counts
`missed_deliveries`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import Medium
from hivebench.engine.media import exchange
from hivebench.perturb import inboxes


class Membership:
    """A `Medium` around `inner` that drops the deliveries to agents not `present` (a gate's, read as
    each round's messages are delivered)."""

    def __init__(self, inner: Medium, gate: Any):
        self.inner, self.block, self.gate = inner, inner.block, gate
        self.store = isinstance(inner, exchange.SharedStore)
        self.missed = np.zeros(inner.block.episodes, dtype=np.int64)
        self.received: list[tuple[int, np.ndarray]] = []  # (round, receivers) of each delivery made

    def send(self, step: int, outbox: Any) -> None:
        self.inner.send(step, outbox)

    def deliver(self, where: Any = None) -> Any:
        inbox = self.inner.deliver(where)
        if self.store:
            return inbox
        receiver = inboxes.ends(inbox)[1]
        away = ~self.gate.present[receiver]
        if away.any():
            self.missed += np.bincount(receiver[away] // self.block.n, minlength=self.block.episodes)
            inbox = inboxes.take(inbox, np.flatnonzero(~away))
        self.received.append((len(self.received), inboxes.ends(inbox)[1]))
        return inbox

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        return inboxes.received_traffic(self.inner.traffic(rounds), self.received, rounds, self.block.agents)

    def counts(self, episode: int) -> dict[str, int]:
        return {**self.inner.counts(episode), "missed_deliveries": int(self.missed[episode])}

    def tables(self, episode: int) -> dict[str, pa.Table | Callable[[], pa.Table]]:
        return self.inner.tables(episode)
