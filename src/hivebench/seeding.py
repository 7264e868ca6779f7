"""Named random streams derived from a cell's seed.

Each component (initial state, policy, ...) draws from its own child of the cell seed, so adding a
draw to one component never shifts another's. Streams depend on the seed alone, not on the method:
two methods run on the same seed start from the same initial state, which pairs them.

A job block plays its episodes in lockstep, side by side in one set of arrays (episode s holds rows
s * n .. s * n + n - 1). `Streams` keeps one stream per episode and makes each block-wide draw of
every episode's own draw, concatenated, so an episode's numbers do not depend on its block.
"""

from __future__ import annotations

import hashlib
from functools import cache, cached_property
from typing import Sequence

import numpy as np


def stream(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=(_key(name),)))


@cache
def _key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


class Streams:
    """The named stream of every episode of a block, drawn block-wide. A draw of `shape` splits its
    first axis among the episodes: equally by default, or by `split` (rows per episode)."""

    def __init__(self, seeds: Sequence[int], name: str):
        self.seeds = list(seeds)
        self.name = name

    @cached_property
    def generators(self) -> list[np.random.Generator]:
        """Made on the first draw (a policy that draws nothing never pays for them)."""
        return [stream(seed, self.name) for seed in self.seeds]

    def __len__(self) -> int:
        return len(self.seeds)

    def _rows(self, total: int, split: Sequence[int] | None) -> Sequence[int]:
        if split is None:
            if total % len(self.generators):
                raise ValueError(f"{total} rows do not split equally among {len(self.generators)} episodes")
            return [total // len(self.generators)] * len(self.generators)
        if sum(split) != total or len(split) != len(self.generators):
            raise ValueError(f"split {list(split)} does not cover {total} rows of {len(self.generators)} episodes")
        return split

    def random(self, shape: tuple[int, ...], split: Sequence[int] | None = None) -> np.ndarray:
        rows = self._rows(shape[0], split)
        if len(rows) == 1:
            return self.generators[0].random(shape)
        return np.concatenate([g.random((r, *shape[1:])) for g, r in zip(self.generators, rows)])

    def integers(self, low: int, high: int, shape: tuple[int, ...], split: Sequence[int] | None = None) -> np.ndarray:
        rows = self._rows(shape[0], split)
        if len(rows) == 1:
            return self.generators[0].integers(low, high, size=shape)
        return np.concatenate([g.integers(low, high, size=(r, *shape[1:])) for g, r in zip(self.generators, rows)])


def uniform_among(mask: np.ndarray, rng: Streams, split: Sequence[int] | None = None) -> np.ndarray:
    """Per row, a column chosen uniformly at random among the True entries (rows need one True).
    Draws one number per entry whatever the mask, so the stream advances the same in every state."""
    keys = np.where(mask, rng.random(mask.shape, split), -1.0)
    return keys.argmax(axis=1)
