"""The ring's classical methods: each agent takes its neighbourhood's majority, or a random bit."""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.engine.api import Policy
from hivebench.seeding import Streams
from hivebench_ring.task import RingViews


class Majority(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        pass

    def decide(self, views: RingViews) -> np.ndarray:
        bits = views.bits.reshape(-1, views.n)
        votes = bits + np.roll(bits, 1, axis=1) + np.roll(bits, -1, axis=1)
        return (votes >= 2).astype(np.int64).ravel()


class RandomBits(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng

    def decide(self, views: RingViews) -> np.ndarray:
        return self.rng.integers(0, 2, (len(views.bits),))
