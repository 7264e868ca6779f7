"""Silo-Bench's messages as the suite sends them. The protocols themselves (p2p, broadcast, shared
store) are media: hivebench.engine.media.exchange, chosen by the task's `protocol`. What is the
suite's own: a classical policy's payload is the set of shards it carries (a row of booleans over the
owners), whose text is that set written as a JSON object {"owner": shard, ...} (`ShardTexts`), and
the longest store key an agent is offered (`KEY_CHARS`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEY_CHARS = 64  # the longest store key


class ShardTexts:
    """Every shard of a block's instances as JSON text: a classical message's text and size (the
    medium's `Content`)."""

    def __init__(self, shards: Sequence[Sequence[Any]]):
        # per episode, per owner: '"owner": shard'
        items = [[f'"{owner}": {json.dumps(shard)}' for owner, shard in enumerate(episode)] for episode in shards]
        # (episodes, n): the characters each owner's shard adds to a message, '{' items joined by ', '
        # '}': the item and its separator (or the braces, for the first); a message of items is their sum
        self.costs = np.array([[len(item) + 2 for item in episode] for episode in items], dtype=np.int64)
        self.items = [pa.array(episode, pa.string()) for episode in items]

    def sizes(self, episode: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Characters of each message i of episode[i] carrying masks[i] (summed over the shards
        carried, not over every owner; an empty message is '{}')."""
        rows, owners = np.nonzero(masks)
        items = np.bincount(rows, weights=self.costs[episode[rows], owners], minlength=len(masks)).astype(np.int64)
        return np.where(masks.any(axis=1), items, 2)

    def texts(self, episode: int, masks: np.ndarray) -> pa.StringArray:
        """The text of each message carrying masks[i] (joined in Arrow: a block has many)."""
        rows, owners = np.nonzero(masks)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(masks)))]).astype(np.int32)
        items = pa.ListArray.from_arrays(pa.array(offsets), self.items[episode].take(pa.array(owners)))
        return pc.binary_join_element_wise("{", pc.binary_join(items, ", "), "}", "")
