"""The three Silo-Bench protocols: how what an agent sends in round t reaches others in round t + 1.

- p2p: one message per (sender, neighbour) per round, to that neighbour;
- broadcast: one message per sender per round, to every neighbour (on the complete topology, everyone);
- store: up to `writes_per_round` writes of (key, value) per agent per round into one shared key-value
  store; every agent reads the whole store as it stood at the end of the last round (a later write of a
  key in agent order wins; a write that would take the store's characters, keys and values, over
  `store_chars` is refused, counted, and told to its writer).

A message (or value) longer than `message_chars` is cut to it and counted. An LLM agent's content is
text. A classical policy's content is the set of shards it carries (a row of booleans over the owners);
its text is that set written as a JSON object {"owner": shard, ...}, built for the record only, and its
size is that text's length; a classical message over the cap is an error of the policy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.media import check_neighbours, edge_keys
from hivebench.suites.silobench.network import Block

PROTOCOLS = ("p2p", "broadcast", "store")
KEY_CHARS = 64  # the longest store key

MESSAGE_SCHEMA = pa.schema(
    [("step", pa.int32()), ("sender", pa.int32()), ("receiver", pa.int32()), ("key", pa.string()), ("size", pa.int32()), ("text", pa.string())]
)


@dataclass(frozen=True)
class Outbox:
    """One round's messages of a block: p2p to `receiver`; broadcast and store writes have receiver -1."""

    sender: np.ndarray  # (m,) block agent
    receiver: np.ndarray  # (m,)
    text: list[str] | None = None  # LLM content
    shards: np.ndarray | None = None  # (m, n) bool: the shards a classical message carries, by owner
    keys: list[str] | None = None  # store: the key each message writes

    def __len__(self) -> int:
        return len(self.sender)

    @staticmethod
    def empty() -> Outbox:
        none = np.zeros(0, dtype=np.int64)
        return Outbox(none, none, text=[], keys=[])


@dataclass(frozen=True)
class Delivered:
    """Messages of one round as they reached agents: delivery i brings message `message[i]` of the
    outbox from `sender[i]` to `receiver[i]`."""

    outbox: Outbox
    receiver: np.ndarray
    sender: np.ndarray
    message: np.ndarray

    @staticmethod
    def empty() -> Delivered:
        none = np.zeros(0, dtype=np.int64)
        return Delivered(Outbox.empty(), none, none, none)


@dataclass(frozen=True)
class Entry:
    """A value in the store: who wrote it, in which round, and what (text, or a classical shard set)."""

    writer: int  # agent within its episode
    step: int
    text: str | None
    shards: np.ndarray | None
    size: int  # characters


class ShardTexts:
    """Every shard of a block's instances as JSON text: a classical message's text and size."""

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


class Exchange:
    def __init__(self, protocol: str, block: Block, params: dict[str, Any], texts: ShardTexts):
        self.protocol = protocol
        self.block = block
        self.n = block.n
        self.max_chars = params["message_chars"]
        self.store_chars = params["store_chars"]
        self.writes = params["writes_per_round"]
        self.texts = texts
        self.edge_keys = edge_keys(block.indptr, block.indices)
        self.store: list[dict[str, Entry]] = [{} for _ in block.graphs]
        self.stored = np.zeros(len(block.graphs), dtype=np.int64)  # characters (keys and values) in each episode's store
        self.refusals: tuple[tuple[int, str], ...] = ()  # (block agent, key) of the last round's refused writes
        self.rounds: list[tuple[Outbox, np.ndarray]] = []  # each round's outbox as kept, and its sizes
        self.delivered: list[Delivered] = []
        self.truncated = np.zeros(len(block.graphs), dtype=np.int64)
        self.refused = np.zeros(len(block.graphs), dtype=np.int64)

    def send(self, step: int, outbox: Outbox) -> Delivered:
        """Check and record one round's messages; return their deliveries (next round's inbox)."""
        self._check(step, outbox)
        outbox, sizes = self._capped(outbox)
        if self.protocol == "store":
            outbox, sizes = self._write(step, outbox, sizes)
            delivered = Delivered(outbox, *(np.zeros(0, dtype=np.int64),) * 3)
        elif self.protocol == "p2p":
            delivered = Delivered(outbox, outbox.receiver, outbox.sender, np.arange(len(outbox)))
        else:
            message, receiver = self.block.fan_out(outbox.sender)
            delivered = Delivered(outbox, receiver, outbox.sender[message], message)
        self.rounds.append((outbox, sizes))
        self.delivered.append(delivered)
        return delivered

    def _check(self, step: int, outbox: Outbox) -> None:
        sender, receiver = outbox.sender.astype(np.int64), outbox.receiver.astype(np.int64)
        if self.protocol == "p2p":
            check_neighbours(step, sender, receiver, self.edge_keys, self.block.agents)
        elif self.protocol == "broadcast" and len(np.unique(sender)) != len(sender):
            raise ValueError(f"round {step}: an agent broadcast twice")
        elif self.protocol == "store":
            if outbox.keys is None or len(outbox.keys) != len(outbox):
                raise ValueError(f"round {step}: a store write without a key")
            if len(sender) and np.bincount(sender).max() > self.writes:
                raise ValueError(f"round {step}: an agent wrote more than {self.writes} keys")

    def _capped(self, outbox: Outbox) -> tuple[Outbox, np.ndarray]:
        """The outbox with texts cut to the cap (counted), and every message's size."""
        episode = outbox.sender // self.n
        if outbox.text is None:
            assert outbox.shards is not None
            sizes = self.texts.sizes(episode, outbox.shards)
            if len(sizes) and sizes.max() > self.max_chars:
                raise ValueError(f"a classical message of {sizes.max()} characters is over the cap of {self.max_chars}")
            return outbox, sizes
        sizes = np.array([len(t) for t in outbox.text], dtype=np.int64)
        long = sizes > self.max_chars
        if long.any():
            self.truncated += np.bincount(episode[long], minlength=len(self.truncated))
            text = [t[: self.max_chars] for t in outbox.text]
            outbox = Outbox(outbox.sender, outbox.receiver, text, None, outbox.keys)
            sizes = np.minimum(sizes, self.max_chars)
        return outbox, sizes

    def _write(self, step: int, outbox: Outbox, sizes: np.ndarray) -> tuple[Outbox, np.ndarray]:
        """Apply a round's writes in agent order; keep the ones the store's cap lets in."""
        assert outbox.keys is not None
        kept, refused = [], []
        for i in np.argsort(outbox.sender, kind="stable").tolist():
            episode, writer = divmod(int(outbox.sender[i]), self.n)
            store = self.store[episode]
            key = outbox.keys[i]
            old = len(key) + store[key].size if key in store else 0  # keys count towards the cap too
            if self.stored[episode] - old + len(key) + sizes[i] > self.store_chars:
                self.refused[episode] += 1
                refused.append((int(outbox.sender[i]), key))
                continue
            text = None if outbox.text is None else outbox.text[i]
            shards = None if outbox.shards is None else outbox.shards[i]
            store[key] = Entry(writer, step, text, shards, int(sizes[i]))
            self.stored[episode] += len(key) + sizes[i] - old
            kept.append(i)
        self.refusals = tuple(refused)
        rows = np.array(sorted(kept), dtype=np.int64)
        return _take(outbox, rows), sizes[rows]

    def snapshot(self) -> list[dict[str, Entry]]:
        """The store as every agent reads it this round (a copy: this round's writes land after)."""
        return [dict(store) for store in self.store]

    def counts(self, rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rounds, agents) messages sent, characters sent, and deliveries received per round."""
        agents = self.block.agents
        sent, chars, received = (np.zeros((rounds, agents), dtype=np.int64) for _ in range(3))
        for t, ((outbox, sizes), delivered) in enumerate(zip(self.rounds, self.delivered)):
            sent[t] = np.bincount(outbox.sender, minlength=agents)
            chars[t] = np.bincount(outbox.sender, weights=sizes, minlength=agents)
            received[t] = np.bincount(delivered.receiver, minlength=agents)
        return sent, chars, received

    def table(self, episode: int) -> pa.Table:
        """Every message of one episode: the round it was sent in, sender, receiver (-1: broadcast or
        store), key (store), size and text, in the episode's own agent numbers."""
        base, parts = episode * self.n, []
        for step, (outbox, sizes) in enumerate(self.rounds):
            rows = np.flatnonzero(outbox.sender // self.n == episode)
            if not len(rows):
                continue
            receiver = outbox.receiver[rows]
            parts.append(pa.table({
                "step": np.full(len(rows), step, dtype=np.int32),
                "sender": (outbox.sender[rows] - base).astype(np.int32),
                "receiver": np.where(receiver >= 0, receiver - base, -1).astype(np.int32),
                "key": pa.nulls(len(rows), pa.string()) if outbox.keys is None else pa.array([outbox.keys[i] for i in rows.tolist()], pa.string()),
                "size": sizes[rows].astype(np.int32),
                "text": self._texts(episode, outbox, rows),
            }, schema=MESSAGE_SCHEMA))  # fmt: skip
        return pa.concat_tables(parts) if parts else MESSAGE_SCHEMA.empty_table()

    def _texts(self, episode: int, outbox: Outbox, rows: np.ndarray) -> pa.StringArray:
        if outbox.text is not None:
            return pa.array([outbox.text[i] for i in rows.tolist()], pa.string())
        assert outbox.shards is not None
        return self.texts.texts(episode, outbox.shards[rows])


def _take(outbox: Outbox, rows: np.ndarray) -> Outbox:
    return Outbox(
        outbox.sender[rows], outbox.receiver[rows],
        None if outbox.text is None else [outbox.text[i] for i in rows.tolist()],
        None if outbox.shards is None else outbox.shards[rows],
        None if outbox.keys is None else [outbox.keys[i] for i in rows.tolist()],
    )  # fmt: skip
