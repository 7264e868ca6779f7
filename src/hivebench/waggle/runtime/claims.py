"""Opaque claim handles: what a claim is about (a kind, and which one of that kind) coded per episode
by a bijection drawn from the episode's seed, the same for every agent of it, so a handle says nothing
of what it names to anyone who does not hold the episode's seed, and no draw follows an agent's index.

    handle = (key * a + b) mod P + 1,    key = kind * WHICH + which,    P = 2^31 - 1 (a prime)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hivebench.seeding import stream

P = (1 << 31) - 1
WHICH = 1 << 20  # claims of one kind an episode can name


class ClaimCodes:
    def __init__(self, seeds: Sequence[int], n: int):
        self.n = n  # agents per episode
        draws = np.array([stream(seed, "waggle claims").integers(1, P, 2) for seed in seeds], dtype=np.int64)
        self.a, self.b = draws[:, 0], draws[:, 1]
        self.inverse = np.array([pow(int(a), P - 2, P) for a in self.a], dtype=np.int64)

    def encode(self, agent: np.ndarray, kind: np.ndarray | int, which: np.ndarray | int) -> np.ndarray:
        """The handle, in each agent's episode, of claim (kind, which)."""
        episode = np.asarray(agent) // self.n
        key = np.asarray(kind, dtype=np.int64) * WHICH + np.asarray(which, dtype=np.int64)
        return (key * self.a[episode] + self.b[episode]) % P + 1

    def decode(self, agent: np.ndarray, claim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(kind, which) of each handle held by an agent (a handle of no claim decodes to a large kind)."""
        episode = np.asarray(agent) // self.n
        key = ((np.asarray(claim, dtype=np.int64) - 1 - self.b[episode]) % P) * self.inverse[episode] % P
        return key // WHICH, key % WHICH
