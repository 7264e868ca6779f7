"""Media: how messages travel between rounds. A task owns one and hands its deliveries to the agents'
observations; the medium enforces the suite's rules and records every message.

Named neighbour messages (AgentsNet): in each round every agent may send one message to each of its
neighbours, by name; messages sent in round t are delivered at the start of round t + 1. A message
longer than the size cap is cut to it (and counted).

An outbox holds one round's messages as parallel arrays. Its content is text. A classical policy
sends numbers instead (`payload`, what its algorithm reads), each with its text as a code into a
fixed list of texts (`dictionary`), so the record and the size cap see the same messages as text
without writing each one out.

A job block plays its episodes side by side (agent v of episode s is agent s * n + v): the medium
keeps each episode's messages apart and drops those an episode's agents send after its last round.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MESSAGE_SCHEMA = pa.schema(
    [("step", pa.int32()), ("sender", pa.int32()), ("receiver", pa.int32()), ("size", pa.int32()), ("text", pa.string())]
)


@dataclass(frozen=True)
class Outbox:
    sender: np.ndarray  # (m,) agent indices
    receiver: np.ndarray  # (m,)
    text: pa.StringArray | None = None  # (m,) the messages, or None when `codes` carry them
    payload: np.ndarray | None = None  # (m, ...) numeric content of a classical policy's messages
    codes: np.ndarray | None = None  # (m,) each message's text as an index into `dictionary`
    dictionary: pa.StringArray | None = None
    # `payload` and `codes` hold one entry per agent, the message it sends to each of its receivers
    per_sender: bool = False

    def texts(self) -> pa.StringArray:
        if self.text is not None:
            return self.text
        assert self.codes is not None and self.dictionary is not None
        return self.dictionary.take(pa.array(self.codes[self.sender] if self.per_sender else self.codes))

    def take(self, rows: np.ndarray) -> Outbox:
        if self.per_sender:
            assert self.payload is not None and self.codes is not None
            per_message = Outbox(self.sender, self.receiver, None, self.payload[self.sender], self.codes[self.sender], self.dictionary)
            return per_message.take(rows)
        return Outbox(
            self.sender[rows], self.receiver[rows],
            None if self.text is None else self.text.take(pa.array(rows)),
            None if self.payload is None else self.payload[rows],
            None if self.codes is None else self.codes[rows], self.dictionary,
        )  # fmt: skip

    @staticmethod
    def empty() -> Outbox:
        none = np.zeros(0, dtype=np.int64)
        return Outbox(none, none, pa.array([], pa.string()))


def edge_keys(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Every directed edge of a CSR adjacency as one integer key, sorted: membership by binary search."""
    agents = len(indptr) - 1
    return np.sort(np.repeat(np.arange(agents), np.diff(indptr)) * agents + indices)


def check_neighbours(step: int, sender: np.ndarray, receiver: np.ndarray, keys: np.ndarray, agents: int) -> None:
    """ValueError naming the round and agents if a message goes to a non-neighbour (not in `keys`,
    from `edge_keys`) or a sender sends one neighbour two."""
    sent = sender.astype(np.int64) * agents + receiver
    found = np.searchsorted(keys, sent)
    adjacent = (found < len(keys)) & (keys[np.minimum(found, len(keys) - 1)] == sent)
    if not adjacent.all():
        bad = int(np.argmin(adjacent))
        raise ValueError(f"round {step}: agent {sender[bad]} sent a message to {receiver[bad]}, not a neighbour")
    if len(np.unique(sent)) != len(sent):
        raise ValueError(f"round {step}: an agent sent two messages to one neighbour")


class NeighbourMessages:
    """One message per (sender, neighbour) per round, at most `max_chars` characters each, among the
    episodes of a block (`last_round[s]`: the last round in which episode s sends)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, max_chars: int, last_round: Sequence[int]):
        self.agents = len(indptr) - 1
        self.last_round = np.asarray(last_round)
        self.n = self.agents // len(self.last_round)  # agents per episode
        self.max_chars = max_chars
        self.indptr = indptr
        self.src = np.repeat(np.arange(self.agents), np.diff(indptr))
        self.dst = indices
        self.sent: list[tuple[int, Outbox]] = []
        self.partial_rounds = 0  # rounds whose outbox was not laid over the whole adjacency
        self.whole: tuple[np.ndarray, np.ndarray] | None = None  # the arrays of a whole-adjacency outbox, once checked
        self.truncated = np.zeros(len(self.last_round), dtype=np.int64)

    def send(self, step: int, outbox: Outbox) -> Outbox:
        """Check and record one round's messages; return them as they will be delivered."""
        if not self._every_edge_once(outbox):
            self.partial_rounds += 1
            self._check(step, outbox)
            live = step <= self.last_round[outbox.sender // self.n]
            if not live.all():
                outbox = outbox.take(np.flatnonzero(live))
        if outbox.text is not None:
            lengths = pc.utf8_length(outbox.text).to_numpy(zero_copy_only=False)
            long = lengths > self.max_chars
            if long.any():
                self.truncated += np.bincount(outbox.sender[long] // self.n, minlength=len(self.truncated))
                outbox = Outbox(outbox.sender, outbox.receiver, pc.utf8_slice_codeunits(outbox.text, 0, self.max_chars))
        self.sent.append((step, outbox))
        return outbox

    def _every_edge_once(self, outbox: Outbox) -> bool:
        """An outbox laid over the adjacency itself, one message per directed edge (as classical
        policies send, every round with the same arrays): valid without a search; an ended episode's
        part is left out of its record."""
        if self.whole is not None and outbox.sender is self.whole[0] and outbox.receiver is self.whole[1]:
            return True
        if np.array_equal(outbox.sender, self.src) and np.array_equal(outbox.receiver, self.dst):
            self.whole = (outbox.sender, outbox.receiver)
            return True
        return False

    @cached_property
    def edge_keys(self) -> np.ndarray:
        return edge_keys(self.indptr, self.dst)

    def _check(self, step: int, outbox: Outbox) -> None:
        check_neighbours(step, outbox.sender, outbox.receiver, self.edge_keys, self.agents)

    def counts(self, rounds: int) -> tuple[np.ndarray, np.ndarray]:
        """(episodes, rounds, n) messages each agent sent and received in each round, as recorded
        (episode-major: one episode's rows are one contiguous block)."""
        episodes = len(self.last_round)
        live = (np.arange(rounds)[None, :] <= self.last_round[:, None]) & (np.arange(rounds) < len(self.sent))
        if not self.partial_rounds:  # every agent has as many in-edges as out-edges
            degrees = np.diff(self.indptr).astype(np.int32).reshape(episodes, 1, self.n)
            sent = np.where(live[:, :, None], degrees, 0)
            return sent, sent
        sent = np.zeros((rounds, self.agents), dtype=np.int32)
        received = np.zeros((rounds, self.agents), dtype=np.int32)
        for step, outbox in self.sent:
            sent[step] = np.bincount(outbox.sender, minlength=self.agents)
            received[step] = np.bincount(outbox.receiver, minlength=self.agents)
        shape = (rounds, episodes, self.n)
        return (
            sent.reshape(shape).transpose(1, 0, 2) * live[:, :, None],
            received.reshape(shape).transpose(1, 0, 2) * live[:, :, None],
        )

    def records(self) -> tuple[list[pa.Table | Callable[[], pa.Table]], np.ndarray, np.ndarray]:
        """Per episode: the table of its every message (the round it was sent in, sender, receiver
        in the episode's own agent indices, size, text; for a classical policy's, a function that
        builds it when read), how many messages, and their characters. A classical policy's messages
        are checked against the cap here."""
        first = self.sent[0][1] if self.sent else None
        dictionary = None if first is None else first.dictionary
        if dictionary is not None and not self.partial_rounds and all(
            o.dictionary is dictionary and o.per_sender == first.per_sender for _, o in self.sent
        ):
            coded = Coded(self, dictionary)
            return [partial(coded.table, s) for s in range(len(self.last_round))], *coded.totals()
        tables = [self._table(s) for s in range(len(self.last_round))]
        chars = [pc.sum(t.column("size")).as_py() or 0 for t in tables]
        return list(tables), np.array([t.num_rows for t in tables]), np.array(chars)

    def _table(self, episode: int) -> pa.Table:
        parts = []
        for step, outbox in self.sent:
            if step <= self.last_round[episode]:
                parts.append((step, outbox.take(np.flatnonzero(outbox.sender // self.n == episode))))
        if not parts:
            return MESSAGE_SCHEMA.empty_table()
        text = pa.concat_arrays([o.texts() for _, o in parts])
        size = pc.utf8_length(text)
        if parts[0][1].text is None and len(text) and pc.max(size).as_py() > self.max_chars:
            raise ValueError(f"a classical message is longer than the cap of {self.max_chars} characters")
        base = episode * self.n
        return pa.table({
            "step": np.concatenate([np.full(len(o.sender), step, dtype=np.int32) for step, o in parts]),
            "sender": (np.concatenate([o.sender for _, o in parts]) - base).astype(np.int32),
            "receiver": (np.concatenate([o.receiver for _, o in parts]) - base).astype(np.int32),
            "size": size.cast(pa.int32()),
            "text": text,
        })  # fmt: skip


class Coded:
    """A classical policy's rounds of a block: every directed edge carried one message per round, as
    a code into one dictionary of texts, so an episode's messages are its block of edges in each of
    its rounds. Codes are kept per edge, or per sending agent where each sent one message to all."""

    def __init__(self, medium: NeighbourMessages, dictionary: pa.StringArray):
        self.medium = m = medium
        self.dictionary = dictionary
        self.per_sender = medium.sent[0][1].per_sender
        self.codes = np.stack([o.codes for _, o in medium.sent])  # (rounds, agents or edges)
        self.sizes = pc.utf8_length(dictionary).to_numpy(zero_copy_only=False).astype(np.int32)[self.codes]
        if self.sizes.max() > medium.max_chars:
            raise ValueError(f"a classical message is longer than the cap of {medium.max_chars} characters")
        self.first_edges = m.indptr[np.arange(len(m.last_round) + 1) * m.n]  # episode s: edges [s]..[s + 1]

    def table(self, episode: int) -> pa.Table:
        m = self.medium
        lo, hi = self.first_edges[episode], self.first_edges[episode + 1]
        rounds, edges = m.last_round[episode] + 1, hi - lo
        columns = m.src[lo:hi] if self.per_sender else slice(lo, hi)
        own = self.codes[:rounds, columns].ravel().astype(np.int32)
        return pa.table([
            np.repeat(np.arange(rounds, dtype=np.int32), edges),
            np.tile((m.src[lo:hi] - episode * m.n).astype(np.int32), rounds),
            np.tile((m.dst[lo:hi] - episode * m.n).astype(np.int32), rounds),
            self.sizes[:rounds, columns].ravel(),
            pa.DictionaryArray.from_arrays(pa.array(own), self.dictionary),
        ], names=MESSAGE_SCHEMA.names)  # fmt: skip

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per episode, how many messages its agents sent and their characters."""
        m, episodes = self.medium, len(self.medium.last_round)
        edges = np.diff(self.first_edges)
        # each column's episode, and how many messages it stands for per round
        owner = np.repeat(np.arange(episodes), m.n if self.per_sender else edges)
        weight = np.diff(m.indptr) if self.per_sender else 1
        live = np.arange(len(self.sizes))[:, None] <= m.last_round[owner][None, :]
        chars = np.bincount(owner, weights=self.sizes.sum(axis=0, where=live, dtype=np.int64) * weight, minlength=episodes)
        return (m.last_round + 1) * edges, chars.astype(int)
