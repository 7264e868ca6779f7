"""The deterministic minibatch schedule: which examples each update reads, from the training seed
alone, so that every arm of a factorial shares it ("each update uses the same source ... record
indices") and a resumed training reads what the uninterrupted one would have."""

from __future__ import annotations

import numpy as np


def schedule(examples: int, batch: int, updates: int, seed: int) -> np.ndarray:
    """(updates, batch) example indices: epoch after epoch, each a permutation drawn from (seed, epoch),
    cut into consecutive batches (an update may span two epochs)."""
    if examples < 1:
        raise ValueError("no training examples to schedule")
    needed = updates * batch
    epochs = -(-needed // examples)
    order = np.concatenate([np.random.default_rng([seed, epoch]).permutation(examples) for epoch in range(epochs)])
    return order[:needed].reshape(updates, batch)
