"""A block of ring episodes side by side: agent v of episode s is agent s * n + v."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.seeding import stream


@dataclass(frozen=True)
class RingViews:
    bits: np.ndarray  # every agent of the block's bit
    n: int  # agents per episode
    step: int
    horizon: int


class RingTask:
    def __init__(self, params: dict[str, Any], n: int):
        self.n = n
        self.horizon = int(params["rounds"])

    def reset(self, seeds: Sequence[int]) -> None:
        self.episodes = len(seeds)
        self.history = [np.concatenate([stream(seed, "bits").integers(0, 2, self.n) for seed in seeds])]

    @property
    def done(self) -> bool:
        return len(self.history) > self.horizon

    def observe(self) -> RingViews:
        return RingViews(self.history[-1].copy(), self.n, len(self.history) - 1, self.horizon)

    def step(self, actions: np.ndarray) -> None:
        self.history.append(np.asarray(actions, dtype=np.int64))

    def record(self) -> list[EpisodeRecord]:
        states = np.stack(self.history)
        step, agent = state_agent_columns(self.n, len(states))
        records = []
        for episode in range(self.episodes):
            own = states[:, episode * self.n : (episode + 1) * self.n]
            ones = float(own[-1].mean())
            summary = {"agreement": max(ones, 1 - ones), "rounds": self.horizon}
            records.append(EpisodeRecord({"step": step, "agent": agent, "bit": own.ravel().astype(np.int8)}, summary))
        return records
