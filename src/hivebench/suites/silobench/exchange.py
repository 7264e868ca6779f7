"""Silo-Bench's messages as the suite sends them. The protocols themselves (p2p, broadcast, shared
store) are media: hivebench.engine.media.exchange, chosen by the task's `protocol`. What is the
suite's own: a classical policy's payload is the set of shards it carries (a row of booleans over the
owners), whose text is that set written as a JSON object {"owner": shard, ...} (`ShardTexts`), and
the longest store key an agent is offered (`KEY_CHARS`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEY_CHARS = 64  # the longest store key
FORGED = 2  # a payload entry of an adversary's (hivebench.suites.silobench.adversary): a shard carried forged


def lies(shards: Sequence[Any]) -> list[Any]:
    """Per owner, the value an adversary reports for its shard (`shards`: the episode's as dealt): of
    the distinct shards in the order of their JSON texts, the next after its own (wrapping round; its
    own if every shard is alike). A value of the right kind, drawn from nothing, the same whatever the
    agents' labels."""
    texts = [json.dumps(shard, sort_keys=True) for shard in shards]
    order = sorted(set(texts))
    after = {text: order[(i + 1) % len(order)] for i, text in enumerate(order)}
    by_text = dict(zip(texts, shards))
    return [by_text[after[text]] for text in texts]


def shard_items(shards: Sequence[Any]) -> list[str]:
    """Per owner, its shard as a message's item: '"owner": shard'."""
    return [f'"{owner}": {json.dumps(shard)}' for owner, shard in enumerate(shards)]


def item_costs(items: Sequence[str]) -> list[int]:
    """The characters each item adds to a message: '{' items joined by ', ' '}' is the item and its
    separator (or the braces, for the first); a message of items is their sum."""
    return [len(item) + 2 for item in items]


class ShardTexts:
    """Every shard of a block's instances as JSON text: a classical message's text and size (the
    medium's `Content`). A payload row marks each owner whose shard it carries: 1 as dealt, `FORGED`
    as an adversary reports it (boolean rows: as dealt)."""

    def __init__(self, shards: Sequence[Sequence[Any]]):
        self.shards = shards
        items = [shard_items(episode) for episode in shards]
        self.costs = np.array([item_costs(episode) for episode in items], dtype=np.int64)  # (episodes, n)
        self.items = [pa.array(episode, pa.string()) for episode in items]

    @cached_property
    def forged(self) -> tuple[np.ndarray, list[pa.StringArray]]:
        """The costs and items of every owner's shard as an adversary reports it."""
        items = [shard_items(lies(episode)) for episode in self.shards]
        costs = np.array([item_costs(episode) for episode in items], dtype=np.int64)
        return costs, [pa.array(episode, pa.string()) for episode in items]

    def sizes(self, episode: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Characters of each message i of episode[i] carrying masks[i] (summed over the shards
        carried, not over every owner; an empty message is '{}')."""
        rows, owners = np.nonzero(masks)
        costs = self.costs[episode[rows], owners]
        if masks.dtype != bool and (forged := masks[rows, owners] == FORGED).any():
            costs = np.where(forged, self.forged[0][episode[rows], owners], costs)
        items = np.bincount(rows, weights=costs, minlength=len(masks)).astype(np.int64)
        return np.where(masks.any(axis=1), items, 2)

    def texts(self, episode: int, masks: np.ndarray) -> pa.StringArray:
        """The text of each message carrying masks[i] (joined in Arrow: a block has many)."""
        rows, owners = np.nonzero(masks)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(masks)))]).astype(np.int32)
        chosen = self.items[episode].take(pa.array(owners))
        if masks.dtype != bool and (forged := masks[rows, owners] == FORGED).any():
            chosen = pc.if_else(pa.array(forged), self.forged[1][episode].take(pa.array(owners)), chosen)
        items = pa.ListArray.from_arrays(pa.array(offsets), chosen)
        return pc.binary_join_element_wise("{", pc.binary_join(items, ", "), "}", "")
