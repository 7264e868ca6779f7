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
import math
from collections.abc import Sequence
from functools import cache, cached_property

import numpy as np

Kind = tuple[int, ...]  # what a stream draws: DOUBLES, or (low, high) for integers in [low, high)
DOUBLES: Kind = ()


def _described(kind: Kind) -> str:
    return "doubles" if kind == DOUBLES else f"integers in [{kind[0]}, {kind[1]})"


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
        # Numbers drawn ahead, of one kind (DOUBLES, or integers in [low, high)): episode s's next are
        # ahead[s, used[s]:]. A generator's numbers of one kind are the same drawn in one call or in
        # many, so drawing ahead changes no number, only how many calls a block makes (one per episode
        # per refill instead of one per episode per draw).
        self._kind: Kind = DOUBLES
        self._ahead = np.empty((len(self.seeds), 0))
        self._used = np.zeros(len(self.seeds), dtype=np.int64)
        self._aligned = True  # every episode has used as many: a draw is one slice of `ahead`
        self._grow = 0  # how many the last refill of a draw drew per episode

    @cached_property
    def generators(self) -> list[np.random.Generator]:
        """Made on the first draw (a policy that draws nothing never pays for them)."""
        return [stream(seed, self.name) for seed in self.seeds]

    def child(self, name: str) -> Streams:
        """The streams of a named part of the same episodes (its draws leave this one's alone)."""
        return Streams(self.seeds, f"{self.name}/{name}")

    def __len__(self) -> int:
        return len(self.seeds)

    def _rows(self, total: int, split: Sequence[int] | None) -> np.ndarray:
        if split is None:
            if total % len(self.seeds):
                raise ValueError(f"{total} rows do not split equally among {len(self.seeds)} episodes")
            return np.full(len(self.seeds), total // len(self.seeds))
        if sum(split) != total or len(split) != len(self.seeds):
            raise ValueError(f"split {list(split)} does not cover {total} rows of {len(self.seeds)} episodes")
        return np.asarray(split)

    def reserve(self, count: int, kind: Kind = DOUBLES) -> None:
        """Draw `count` more numbers per episode ahead in one call each (a policy that knows what it
        will draw saves the refills)."""
        if len(self.seeds) > 1:
            self._refill(kind, count)

    def _refill(self, kind: Kind, count: int) -> None:
        """Draw `count` more per episode, dropping the columns every episode has used."""
        drop = int(self._used.min())
        kept = self._ahead.shape[1] - drop
        if kind != self._kind:
            if kept:
                raise RuntimeError(
                    f"stream {self.name!r}: drawing {_described(kind)} after {_described(self._kind)} would skip the "
                    "numbers drawn ahead (draw one kind from a stream, or give each kind its own stream)"
                )
            self._kind = kind
        ahead = np.empty((len(self.seeds), kept + count), dtype=np.float64 if kind == DOUBLES else np.int64)
        ahead[:, :kept] = self._ahead[:, drop:]
        for row, generator in zip(ahead, self.generators):
            if kind == DOUBLES:
                generator.random(out=row[kept:])
            else:
                row[kept:] = generator.integers(*kind, size=count)
        self._ahead = ahead
        self._used -= drop

    def _draw(self, kind: Kind, shape: tuple[int, ...], split: Sequence[int] | None) -> np.ndarray:
        if len(self.seeds) == 1:  # straight from the generator: the bookkeeping would cost more than the calls it saves
            if split is not None:
                self._rows(shape[0], split)  # checked all the same
            generator = self.generators[0]
            return generator.random(shape) if kind == DOUBLES else generator.integers(*kind, size=shape)
        if self._aligned and split is None:  # every episode as far on: one slice
            if shape[0] % len(self.seeds):
                self._rows(shape[0], split)  # its error
            per = shape[0] // len(self.seeds) * math.prod(shape[1:])
            self._ensure(kind, int(self._used[0]) + per - self._ahead.shape[1])
            start = int(self._used[0])
            self._used += per
            return self._ahead[:, start : start + per].reshape(shape)
        take = self._rows(shape[0], split) * math.prod(shape[1:])
        self._ensure(kind, int((self._used + take).max()) - self._ahead.shape[1])
        out = np.concatenate([a[u : u + t] for a, u, t in zip(self._ahead, self._used, take)]).reshape(shape)
        self._aligned = self._aligned and bool((take == take[0]).all())
        self._used += take
        return out

    def _ensure(self, kind: Kind, short: int) -> None:
        """Refill where a draw of `kind` would run `short` numbers past those drawn ahead (or is of
        another kind): each refill at least twice the last, so a stream drawn every round refills a
        few times; a new kind starts afresh."""
        if short > 0 or kind != self._kind:
            self._grow = max(short, 2 * self._grow) if kind == self._kind else short
            self._refill(kind, self._grow)

    def random(self, shape: tuple[int, ...], split: Sequence[int] | None = None) -> np.ndarray:
        """Doubles in [0, 1)."""
        return self._draw(DOUBLES, shape, split)

    def integers(self, low: int, high: int, shape: tuple[int, ...], split: Sequence[int] | None = None) -> np.ndarray:
        """Integers in [low, high)."""
        return self._draw((low, high), shape, split)

    def random_by_episode(self, episode: np.ndarray) -> np.ndarray:
        """One double per row, from the stream of the row's episode (`episode[i]`): each episode's rows
        take its next numbers in the order they come, wherever they lie among the others'."""
        split = np.bincount(episode, minlength=len(self.seeds))
        if (split == split[0]).all() and (np.diff(episode) >= 0).all():  # in episode order, as many each
            return self.random((len(episode),))  # the same numbers, without the bookkeeping
        out = np.empty(len(episode))
        out[np.argsort(episode, kind="stable")] = self.random((len(episode),), split=split)
        return out


def uniform_among(mask: np.ndarray, rng: Streams, split: Sequence[int] | None = None) -> np.ndarray:
    """Per row, a column chosen uniformly at random among the True entries (rows need one True).
    Draws one number per entry whatever the mask, so the stream advances the same in every state."""
    keys = np.where(mask, rng.random(mask.shape, split), -1.0)
    return first_argmax(keys)


def first_argmax(values: np.ndarray) -> np.ndarray:
    """Per row, the first column holding the row's greatest value (as `argmax(axis=1)`, a column at a
    time: with a few columns, ~10x numpy's reduction along the short axis)."""
    best, index = values[:, 0], np.zeros(len(values), dtype=np.int64)
    for column in range(1, values.shape[1]):
        index[values[:, column] > best] = column
        best = np.maximum(best, values[:, column])
    return index
