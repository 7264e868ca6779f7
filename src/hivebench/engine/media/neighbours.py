"""Named neighbour messages (AgentsNet): in each round every agent may send one message to each of its
neighbours, by name; messages sent in round t are delivered at the start of round t + 1. A message
longer than the size cap is cut to it (and counted).

The medium keeps each episode of a block apart, and drops the messages an episode's agents send after
its last round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property, partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.block import GraphBlock
from hivebench.engine.media.outbox import Outbox, cut

MESSAGE_SCHEMA = pa.schema(
    [
        ("step", pa.int32()),
        ("sender", pa.int32()),
        ("receiver", pa.int32()),
        ("size", pa.int32()),
        ("text", pa.string()),
    ]
)

Table = pa.Table | Callable[[], pa.Table]


def check_neighbours(step: int, sender: np.ndarray, receiver: np.ndarray, block: GraphBlock) -> None:
    """ValueError naming the round and agents if a message goes to a non-neighbour or a sender sends
    one neighbour two."""
    keys = block.edge_keys
    sent = sender.astype(np.int64) * block.agents + receiver
    found = np.searchsorted(keys, sent)
    adjacent = (found < len(keys)) & (keys[np.minimum(found, len(keys) - 1)] == sent)
    if not adjacent.all():
        bad = int(np.argmin(adjacent))
        raise ValueError(f"round {step}: agent {sender[bad]} sent a message to {receiver[bad]}, not a neighbour")
    # in key order (a whole outbox's rows, or some of them, as a perturbation leaves them): no repeat
    # unless two keys in a row are equal, without a hash table
    ordered = bool((sent[1:] > sent[:-1]).all())
    if not ordered and len(np.unique(sent)) != len(sent):
        raise ValueError(f"round {step}: an agent sent two messages to one neighbour")


class NeighbourMessages:
    """One message per (sender, neighbour) per round, at most `max_chars` characters each, among the
    episodes of a block (`last_round[s]`: the last round in which episode s sends). A `Medium`."""

    def __init__(self, block: GraphBlock, max_chars: int, last_round: Sequence[int]):
        self.block = block
        self.max_chars = max_chars
        self.last_round = np.asarray(last_round)
        self.sent: list[tuple[int, Outbox]] = []  # each round's messages, as delivered
        self.pending: Outbox | None = None  # sent, not delivered yet
        self.partial_rounds = 0  # rounds whose outbox was not laid over the whole adjacency
        self.whole: tuple[np.ndarray, np.ndarray] | None = None  # the arrays of a whole-adjacency outbox, once checked
        self.truncated = np.zeros(block.episodes, dtype=np.int64)

    def send(self, step: int, outbox: Outbox) -> None:
        """Check, cut and record one round's messages."""
        if not self._every_edge_once(outbox):
            self.partial_rounds += 1
            check_neighbours(step, outbox.sender, outbox.receiver, self.block)
            live = step <= self.last_round[outbox.sender // self.block.n]
            if not live.all():
                outbox = outbox.take(np.flatnonzero(live))
        if outbox.text is not None:
            text, long = cut(outbox.text, self.max_chars)
            if long.any():
                self.truncated += self.block.per_episode(agents=outbox.sender[long])
                outbox = Outbox(outbox.sender, outbox.receiver, text)
        self.sent.append((step, outbox))
        self.pending = outbox

    def last_sent(self) -> Outbox:
        """The last round's messages as their senders sent them (cut to the cap): what a medium that
        wraps this one delivers may differ."""
        return self.sent[-1][1]

    def deliver(self, where: Any = None) -> Outbox:
        """The messages sent since the last delivery, as they were recorded (receiver: who gets each)."""
        inbox, self.pending = self.pending or Outbox.empty(), None
        return inbox

    def _every_edge_once(self, outbox: Outbox) -> bool:
        """An outbox laid over the adjacency itself, one message per directed edge (as classical
        policies send, every round with the same arrays): valid without a search; an ended episode's
        part is left out of its record."""
        if self.whole is not None and outbox.sender is self.whole[0] and outbox.receiver is self.whole[1]:
            return True
        if np.array_equal(outbox.sender, self.block.src) and np.array_equal(outbox.receiver, self.block.indices):
            self.whole = (outbox.sender, outbox.receiver)
            return True
        return False

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """(rounds, agents) messages each agent sent and received in each round, as recorded."""
        b = self.block
        steps = np.arange(rounds)
        live = (steps[:, None] <= self.last_round[None, :]) & (steps < len(self.sent))[:, None]
        live = np.repeat(live, b.n, axis=1)
        if not self.partial_rounds:  # every agent has as many in-edges as out-edges
            sent = np.where(live, b.degrees.astype(np.int32), 0)
            return {"sent": sent, "received": sent}
        sent = np.zeros((rounds, b.agents), dtype=np.int32)
        received = np.zeros((rounds, b.agents), dtype=np.int32)
        for step, outbox in self.sent:
            sent[step] = np.bincount(outbox.sender, minlength=b.agents)
            received[step] = np.bincount(outbox.receiver, minlength=b.agents)
        return {"sent": sent * live, "received": received * live}

    def counts(self, episode: int) -> dict[str, int]:
        """How many messages the episode's agents sent, their characters, and how many were cut."""
        _, messages, chars = self._recorded
        return {
            "messages": int(messages[episode]),
            "message_chars": int(chars[episode]),
            "truncated_messages": int(self.truncated[episode]),
        }

    def tables(self, episode: int) -> dict[str, Table]:
        """`messages`: every message of the episode, in its own agent indices (a classical policy's
        as a function that builds the table when it is read)."""
        return {"messages": self._recorded[0][episode]}

    @cached_property
    def _recorded(self) -> tuple[list[Table], np.ndarray, np.ndarray]:
        """Per episode (read once the block has ended): its messages table, how many messages, their
        characters. A classical policy's messages are checked against the cap here."""
        first = self.sent[0][1] if self.sent else None
        dictionary = None if first is None else first.dictionary
        if (
            dictionary is not None
            and not self.partial_rounds
            and all(o.dictionary is dictionary and o.per_sender == first.per_sender for _, o in self.sent)
        ):
            coded = Coded(self, dictionary)
            return [partial(coded.table, s) for s in range(self.block.episodes)], *coded.totals()
        return self._tables()

    def _tables(self) -> tuple[list[Table], np.ndarray, np.ndarray]:
        """Every message of the block as one table, cut into its episodes' (in their own agent indices)."""
        n, episodes = self.block.n, self.block.episodes
        if not self.sent:
            empty = MESSAGE_SCHEMA.empty_table()
            return [empty] * episodes, np.zeros(episodes, dtype=np.int64), np.zeros(episodes, dtype=np.int64)
        step = np.concatenate([np.full(len(o.sender), t, dtype=np.int32) for t, o in self.sent])
        sender = np.concatenate([o.sender for _, o in self.sent])
        receiver = np.concatenate([o.receiver for _, o in self.sent])
        text = pa.concat_arrays([o.texts() for _, o in self.sent])
        size = pc.utf8_length(text).to_numpy(zero_copy_only=False).astype(np.int32)
        episode = sender // n
        kept = step <= self.last_round[episode]  # an ended episode's messages are not its record
        if self.sent[0][1].text is None and kept.any() and size[kept].max() > self.max_chars:
            raise ValueError(f"a classical message is longer than the cap of {self.max_chars} characters")
        order = np.flatnonzero(kept)[np.argsort(episode[kept], kind="stable")]  # by episode, then as sent
        bounds = np.searchsorted(episode[order], np.arange(episodes + 1))
        base = (episode * n)[order]
        table = pa.table(
            {
                "step": step[order],
                "sender": (sender[order] - base).astype(np.int32),
                "receiver": (receiver[order] - base).astype(np.int32),
                "size": size[order],
                "text": text.take(pa.array(order)),
            },
            schema=MESSAGE_SCHEMA,
        )
        tables = [table.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]
        chars = np.bincount(episode[order], weights=size[order], minlength=episodes).astype(np.int64)
        return tables, np.diff(bounds), chars


class Coded:
    """A classical policy's rounds of a block: every directed edge carried one message per round, as
    a code into one dictionary of texts, so an episode's messages are its block of edges in each of
    its rounds. Codes are kept per edge, or per sending agent where each sent one message to all."""

    def __init__(self, medium: NeighbourMessages, dictionary: pa.StringArray):
        self.medium = medium
        self.dictionary = dictionary
        self.per_sender = medium.sent[0][1].per_sender
        self.codes = np.stack([o.codes for _, o in medium.sent])  # (rounds, agents or edges)
        self.sizes = pc.utf8_length(dictionary).to_numpy(zero_copy_only=False).astype(np.int32)[self.codes]
        if self.sizes.max() > medium.max_chars:
            raise ValueError(f"a classical message is longer than the cap of {medium.max_chars} characters")
        b = medium.block
        self.first_edges = b.indptr[np.arange(b.episodes + 1) * b.n]  # episode s: edges [s]..[s + 1]

    def table(self, episode: int) -> pa.Table:
        m, b = self.medium, self.medium.block
        lo, hi = self.first_edges[episode], self.first_edges[episode + 1]
        rounds, edges = m.last_round[episode] + 1, hi - lo
        columns = b.src[lo:hi] if self.per_sender else slice(lo, hi)
        own = self.codes[:rounds, columns].ravel().astype(np.int32)
        return pa.table(
            [
                np.repeat(np.arange(rounds, dtype=np.int32), edges),
                np.tile((b.src[lo:hi] - episode * b.n).astype(np.int32), rounds),
                np.tile((b.indices[lo:hi] - episode * b.n).astype(np.int32), rounds),
                self.sizes[:rounds, columns].ravel(),
                pa.DictionaryArray.from_arrays(pa.array(own), self.dictionary),
            ],
            names=MESSAGE_SCHEMA.names,
        )

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per episode, how many messages its agents sent and their characters."""
        m, b = self.medium, self.medium.block
        edges = np.diff(self.first_edges)
        # each column's episode, and how many messages it stands for per round
        owner = np.repeat(np.arange(b.episodes), b.n if self.per_sender else edges)
        weight = b.degrees if self.per_sender else 1
        live = np.arange(len(self.sizes))[:, None] <= m.last_round[owner][None, :]
        chars = np.bincount(
            owner, weights=self.sizes.sum(axis=0, where=live, dtype=np.int64) * weight, minlength=b.episodes
        )
        return (m.last_round + 1) * edges, chars.astype(int)
