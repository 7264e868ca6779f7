"""The trace field under an unreliable medium (the `medium` part of a perturbation, hivebench.perturb,
for a method on the Waggle trace field): each delivery of a deposit to a contact is dropped with the
medium's `loss`, and each trace that arrives lives `expiry` local updates less than its TTL (at least
one), by draws of the cell's seed (stream `perturbation/medium/field`). The summary counts
`dropped_traces` and `shortened_traces`; the `traces` table holds what arrived, as it arrived."""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.engine.block import Block
from hivebench.seeding import Streams
from hivebench.waggle.runtime.field import RECEIVER, TraceField
from hivebench.waggle.runtime.records import TTL

TTL_COLUMN = 2 + TTL


class LossyField(TraceField):
    def __init__(self, block: Block, rng: Streams, contacts: int, *, settings: dict[str, Any], streams: Streams):
        super().__init__(block, rng, contacts)
        self.loss, self.expiry, self.streams = settings["loss"], settings.get("expiry", 0), streams
        self.dropped = np.zeros(block.episodes, dtype=np.int64)
        self.shortened = np.zeros(block.episodes, dtype=np.int64)

    def _arrivals(self, *args: Any) -> np.ndarray:
        rows = super()._arrivals(*args)
        if self.loss and len(rows):
            lost = self.streams.random_by_episode(rows[:, RECEIVER] // self.block.n) < self.loss
            self.dropped += self.block.per_episode(agents=rows[lost, RECEIVER])
            rows = rows[~lost]
        if self.expiry and len(rows):
            short = rows[:, TTL_COLUMN] > 1
            self.shortened += self.block.per_episode(agents=rows[short, RECEIVER])
            rows[:, TTL_COLUMN] = np.maximum(1, rows[:, TTL_COLUMN] - self.expiry)
        return rows

    def counts(self, episode: int) -> dict[str, int]:
        return {
            **super().counts(episode),
            "dropped_traces": int(self.dropped[episode]),
            "shortened_traces": int(self.shortened[episode]),
        }
