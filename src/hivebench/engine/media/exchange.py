"""Silo-Bench's three protocols: how what an agent sends in round t reaches others in round t + 1.

- p2p (`PointToPoint`): one message per (sender, neighbour) per round, to that neighbour;
- broadcast (`Broadcast`): one message per sender per round, to every neighbour;
- store (`SharedStore`): up to `writes` writes of (key, value) per agent per round into one shared
  key-value store per episode; every agent reads the whole store as it stood at the end of the last
  round (a later write of a key in agent order wins; a write that would take the store's characters,
  keys and values, over `store_chars` is refused, counted, and told to its writer).

A message (or value) longer than `max_chars` is cut to it and counted. An LLM agent's content is
text. A classical policy's content is a payload (one row of an array per message) that the suite's
`Content` sizes and writes out as text, for the record only; a classical message over the cap is an
error of the policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from hivebench.engine.block import GraphBlock
from hivebench.engine.media.neighbours import check_neighbours

MESSAGE_SCHEMA = pa.schema(
    [
        ("step", pa.int32()),
        ("sender", pa.int32()),
        ("receiver", pa.int32()),
        ("key", pa.string()),
        ("size", pa.int32()),
        ("text", pa.string()),
    ]
)


@dataclass(frozen=True)
class Outbox:
    """One round's messages of a block: p2p to `receiver`; broadcasts and store writes have receiver -1."""

    sender: np.ndarray  # (m,) block agents
    receiver: np.ndarray  # (m,)
    text: list[str] | None = None  # LLM content
    payload: np.ndarray | None = None  # (m, ...) a classical policy's content
    keys: list[str] | None = None  # store: the key each message writes

    def __len__(self) -> int:
        return len(self.sender)

    def take(self, rows: np.ndarray) -> Outbox:
        picked = rows.tolist()
        return Outbox(
            self.sender[rows],
            self.receiver[rows],
            None if self.text is None else [self.text[i] for i in picked],
            None if self.payload is None else self.payload[rows],
            None if self.keys is None else [self.keys[i] for i in picked],
        )

    @staticmethod
    def empty() -> Outbox:
        none = np.zeros(0, dtype=np.int64)
        return Outbox(none, none, text=[], keys=[])


@dataclass(frozen=True)
class Entry:
    """A value in the store: who wrote it, in which round, and what (text, or a classical payload)."""

    writer: int  # agent within its episode
    step: int
    text: str | None
    payload: np.ndarray | None
    size: int  # characters


@dataclass(frozen=True)
class Delivered:
    """What reached agents at the start of a round: delivery i brings message `message[i]` of the
    outbox from `sender[i]` to `receiver[i]`; with the shared store, the store as every agent reads it
    (per episode) and the writes it refused last round ((block agent, key))."""

    outbox: Outbox
    receiver: np.ndarray
    sender: np.ndarray
    message: np.ndarray
    store: list[dict[str, Entry]] = field(default_factory=list)
    refused: tuple[tuple[int, str], ...] = ()

    @staticmethod
    def empty() -> Delivered:
        none = np.zeros(0, dtype=np.int64)
        return Delivered(Outbox.empty(), none, none, none)


class Content(Protocol):
    """How a classical policy's payloads read as text."""

    def sizes(self, episode: np.ndarray, payload: np.ndarray) -> np.ndarray:
        """Characters of each message i of episode[i] carrying payload[i]."""

    def texts(self, episode: int, payload: np.ndarray) -> pa.StringArray:
        """The text of each message of one episode carrying payload[i]."""


class Exchange:
    """What the three protocols share: the cap, the record and the counts (a `Medium`). A protocol
    checks a round's messages (`_check`), keeps those it takes (`_keep`) and routes them (`_route`)."""

    def __init__(self, block: GraphBlock, content: Content, max_chars: int):
        self.block = block
        self.content = content
        self.max_chars = max_chars
        self.rounds: list[tuple[Outbox, np.ndarray]] = []  # each round's outbox as kept, and its sizes
        self.delivered: list[Delivered] = []
        self.pending: Delivered | None = None
        self.truncated = np.zeros(block.episodes, dtype=np.int64)
        self.refused = np.zeros(block.episodes, dtype=np.int64)

    def send(self, step: int, outbox: Outbox) -> None:
        """Check, cut and record one round's messages."""
        self._check(step, outbox)
        outbox, sizes = self._keep(step, *self._capped(outbox))
        self.rounds.append((outbox, sizes))
        self.pending = self._route(outbox)
        self.delivered.append(self.pending)

    def last_sent(self) -> Outbox:
        """The last round's messages as their senders sent them (cut to the cap, as kept): what a
        medium that wraps this one delivers may differ."""
        return self.rounds[-1][0]

    def deliver(self, where: Any = None) -> Delivered:
        """The deliveries of the messages sent since the last delivery."""
        inbox, self.pending = self.pending or Delivered.empty(), None
        return inbox

    def _check(self, step: int, outbox: Outbox) -> None:
        pass

    def _keep(self, step: int, outbox: Outbox, sizes: np.ndarray) -> tuple[Outbox, np.ndarray]:
        return outbox, sizes

    def _route(self, outbox: Outbox) -> Delivered:
        raise NotImplementedError

    def _capped(self, outbox: Outbox) -> tuple[Outbox, np.ndarray]:
        """The outbox with texts cut to the cap (counted), and every message's size."""
        if outbox.text is None:
            assert outbox.payload is not None
            sizes = self.content.sizes(outbox.sender // self.block.n, outbox.payload)
            if len(sizes) and sizes.max() > self.max_chars:
                raise ValueError(f"a classical message of {sizes.max()} characters is over the cap of {self.max_chars}")
            return outbox, sizes
        sizes = np.array([len(t) for t in outbox.text], dtype=np.int64)
        long = sizes > self.max_chars
        if long.any():
            self.truncated += self.block.per_episode(agents=outbox.sender[long])
            text = [t[: self.max_chars] for t in outbox.text]
            outbox = Outbox(outbox.sender, outbox.receiver, text, None, outbox.keys)
            sizes = np.minimum(sizes, self.max_chars)
        return outbox, sizes

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """(rounds, agents) messages sent, characters sent, and deliveries received per round."""
        agents = self.block.agents
        sent, chars, received = (np.zeros((rounds, agents), dtype=np.int64) for _ in range(3))
        for t, ((outbox, sizes), delivered) in enumerate(zip(self.rounds, self.delivered)):
            sent[t] = np.bincount(outbox.sender, minlength=agents)
            chars[t] = np.bincount(outbox.sender, weights=sizes, minlength=agents)
            received[t] = np.bincount(delivered.receiver, minlength=agents)
        return {"sent": sent, "chars": chars, "received": received}

    def counts(self, episode: int) -> dict[str, int]:
        """The episode's messages, deliveries, characters sent, messages cut, and writes refused."""
        return {key: int(values[episode]) for key, values in self._totals.items()}

    @cached_property
    def _totals(self) -> dict[str, np.ndarray]:
        """Per episode (read once the block has ended)."""
        b, episodes = self.block, self.block.episodes
        messages, chars, deliveries = (np.zeros(episodes, dtype=np.int64) for _ in range(3))
        for (outbox, sizes), delivered in zip(self.rounds, self.delivered):
            messages += b.per_episode(agents=outbox.sender)
            chars += b.per_episode(sizes, outbox.sender).astype(np.int64)
            deliveries += b.per_episode(agents=delivered.receiver)
        return {
            "messages": messages,
            "deliveries": deliveries,
            "message_chars": chars,
            "truncated_messages": self.truncated,
            "refused_writes": self.refused,
        }

    def tables(self, episode: int) -> dict[str, pa.Table]:
        """`messages`: every message of the episode: the round it was sent in, sender, receiver (-1:
        broadcast or store), key (store), size and text, in the episode's own agent numbers."""
        n = self.block.n
        base, parts = episode * n, []
        for step, (outbox, sizes) in enumerate(self.rounds):
            rows = np.flatnonzero(outbox.sender // n == episode)
            if not len(rows):
                continue
            receiver = outbox.receiver[rows]
            parts.append(
                pa.table(
                    {
                        "step": np.full(len(rows), step, dtype=np.int32),
                        "sender": (outbox.sender[rows] - base).astype(np.int32),
                        "receiver": np.where(receiver >= 0, receiver - base, -1).astype(np.int32),
                        "key": pa.nulls(len(rows), pa.string())
                        if outbox.keys is None
                        else pa.array([outbox.keys[i] for i in rows.tolist()], pa.string()),
                        "size": sizes[rows].astype(np.int32),
                        "text": self._texts(episode, outbox, rows),
                    },
                    schema=MESSAGE_SCHEMA,
                )
            )
        return {"messages": pa.concat_tables(parts) if parts else MESSAGE_SCHEMA.empty_table()}

    def _texts(self, episode: int, outbox: Outbox, rows: np.ndarray) -> pa.StringArray:
        if outbox.text is not None:
            return pa.array([outbox.text[i] for i in rows.tolist()], pa.string())
        assert outbox.payload is not None
        return self.content.texts(episode, outbox.payload[rows])


class PointToPoint(Exchange):
    def _check(self, step: int, outbox: Outbox) -> None:
        check_neighbours(step, outbox.sender.astype(np.int64), outbox.receiver.astype(np.int64), self.block)

    def _route(self, outbox: Outbox) -> Delivered:
        return Delivered(outbox, outbox.receiver, outbox.sender, np.arange(len(outbox)))


class Broadcast(Exchange):
    def _check(self, step: int, outbox: Outbox) -> None:
        if len(np.unique(outbox.sender)) != len(outbox):
            raise ValueError(f"round {step}: an agent broadcast twice")

    def _route(self, outbox: Outbox) -> Delivered:
        message, receiver = self.block.fan_out(outbox.sender)
        return Delivered(outbox, receiver, outbox.sender[message], message)


class SharedStore(Exchange):
    """The store, one per episode; `writes`: the most keys an agent writes per round."""

    def __init__(self, block: GraphBlock, content: Content, max_chars: int, *, store_chars: int, writes: int):
        super().__init__(block, content, max_chars)
        self.store_chars = store_chars
        self.writes = writes
        self.store: list[dict[str, Entry]] = [{} for _ in range(block.episodes)]
        self.stored = np.zeros(block.episodes, dtype=np.int64)  # characters (keys and values) in each episode's store
        self.refusals: tuple[tuple[int, str], ...] = ()  # (block agent, key) of the last round's refused writes

    def deliver(self, where: Any = None) -> Delivered:
        """No deliveries: the store as every agent reads it this round (a copy: this round's writes
        land after), and the last round's refused writes."""
        inbox = super().deliver(where)
        return Delivered(
            inbox.outbox, inbox.receiver, inbox.sender, inbox.message, [dict(s) for s in self.store], self.refusals
        )

    def _check(self, step: int, outbox: Outbox) -> None:
        if outbox.keys is None or len(outbox.keys) != len(outbox):
            raise ValueError(f"round {step}: a store write without a key")
        if len(outbox) and np.bincount(outbox.sender).max() > self.writes:
            raise ValueError(f"round {step}: an agent wrote more than {self.writes} keys")

    def _keep(self, step: int, outbox: Outbox, sizes: np.ndarray) -> tuple[Outbox, np.ndarray]:
        """Apply a round's writes in agent order; keep the ones the store's cap lets in."""
        assert outbox.keys is not None
        kept, refused = [], []
        for i in np.argsort(outbox.sender, kind="stable").tolist():
            episode, writer = divmod(int(outbox.sender[i]), self.block.n)
            store = self.store[episode]
            key = outbox.keys[i]
            old = len(key) + store[key].size if key in store else 0  # keys count towards the cap too
            if self.stored[episode] - old + len(key) + sizes[i] > self.store_chars:
                self.refused[episode] += 1
                refused.append((int(outbox.sender[i]), key))
                continue
            text = None if outbox.text is None else outbox.text[i]
            payload = None if outbox.payload is None else outbox.payload[i]
            store[key] = Entry(writer, step, text, payload, int(sizes[i]))
            self.stored[episode] += len(key) + sizes[i] - old
            kept.append(i)
        self.refusals = tuple(refused)
        rows = np.array(sorted(kept), dtype=np.int64)
        return outbox.take(rows), sizes[rows]

    def _route(self, outbox: Outbox) -> Delivered:
        none = np.zeros(0, dtype=np.int64)
        return Delivered(outbox, none, none, none)
