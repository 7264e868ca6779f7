"""Named random streams derived from a cell's seed.

Each component (initial state, policy, ...) draws from its own child of the cell seed, so adding a
draw to one component never shifts another's. Streams depend on the seed alone, not on the method:
two methods run on the same seed start from the same initial state, which pairs them.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stream(seed: int, name: str) -> np.random.Generator:
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=(key,)))


def uniform_among(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, a column chosen uniformly at random among the True entries (rows need one True).
    Draws one number per entry whatever the mask, so the stream advances the same in every state."""
    keys = np.where(mask, rng.random(mask.shape), -1.0)
    return keys.argmax(axis=1)
