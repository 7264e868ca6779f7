"""Media: how messages travel between rounds. A task owns one and hands its deliveries to the agents'
observations; the medium enforces the suite's rules and records every message.

Named neighbour messages (AgentsNet): in each round every agent may send one message to each of its
neighbours, by name; messages sent in round t are delivered at the start of round t + 1. A message
longer than the size cap is cut to it (and counted).

An outbox holds one round's messages as parallel arrays. Its content is text; a classical policy may
send numbers instead (`payload`, one row per message) with a function that writes each as its text,
so the algorithm reads numbers while the record and the size cap see the same messages as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MESSAGE_COLUMNS = ("step", "sender", "receiver", "size", "text")


@dataclass(frozen=True)
class Outbox:
    sender: np.ndarray  # (m,) agent indices
    receiver: np.ndarray  # (m,)
    text: pa.StringArray | None = None  # (m,) the messages, or None when `payload` carries them
    payload: np.ndarray | None = None  # (m, ...) numeric content of a classical policy's messages
    render: Callable[[np.ndarray], pa.StringArray] | None = None  # payload -> its text

    def texts(self) -> pa.StringArray:
        if self.text is not None:
            return self.text
        assert self.render is not None and self.payload is not None
        return self.render(self.payload)

    @staticmethod
    def empty() -> Outbox:
        none = np.zeros(0, dtype=np.int64)
        return Outbox(none, none, pa.array([], pa.string()))


class NeighbourMessages:
    """One message per (sender, neighbour) per round, at most `max_chars` characters each."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, max_chars: int):
        self.n = len(indptr) - 1
        self.max_chars = max_chars
        self.src = np.repeat(np.arange(self.n), np.diff(indptr))
        self.dst = indices
        # Every directed edge as one integer key, sorted: membership by binary search.
        self.edge_keys = np.sort(self.src * self.n + indices)
        self.sent: list[tuple[int, Outbox]] = []
        self.truncated = 0

    def send(self, step: int, outbox: Outbox) -> Outbox:
        """Check and record one round's messages; return them as they will be delivered."""
        if not self._every_edge_once(outbox):
            self._check(step, outbox)
        if outbox.text is not None:
            lengths = pc.utf8_length(outbox.text).to_numpy(zero_copy_only=False)
            long = lengths > self.max_chars
            if long.any():
                self.truncated += int(long.sum())
                outbox = Outbox(outbox.sender, outbox.receiver, pc.utf8_slice_codeunits(outbox.text, 0, self.max_chars))
        self.sent.append((step, outbox))
        return outbox

    def _every_edge_once(self, outbox: Outbox) -> bool:
        """An outbox laid over the adjacency itself, one message per directed edge (as classical
        policies send): valid without a search."""
        return np.array_equal(outbox.sender, self.src) and np.array_equal(outbox.receiver, self.dst)

    def _check(self, step: int, outbox: Outbox) -> None:
        keys = outbox.sender.astype(np.int64) * self.n + outbox.receiver
        found = np.searchsorted(self.edge_keys, keys)
        adjacent = (found < len(self.edge_keys)) & (self.edge_keys[np.minimum(found, len(self.edge_keys) - 1)] == keys)
        if not adjacent.all():
            bad = int(np.argmin(adjacent))
            raise ValueError(f"round {step}: agent {outbox.sender[bad]} sent a message to {outbox.receiver[bad]}, not a neighbour")
        if len(np.unique(keys)) != len(keys):
            raise ValueError(f"round {step}: an agent sent two messages to one neighbour")

    def table(self) -> pa.Table:
        """Every message of the episode: the round it was sent in, sender, receiver, size, text. A
        classical policy's messages are written as text here, and checked against the cap."""
        if not self.sent:
            return pa.table({name: pa.array([], t) for name, t in zip(MESSAGE_COLUMNS, [pa.int32()] * 4 + [pa.string()])})
        steps = np.concatenate([np.full(len(o.sender), step, dtype=np.int32) for step, o in self.sent])
        outboxes = [o for _, o in self.sent]
        if all(o.text is None and o.render is outboxes[0].render for o in outboxes):
            # a classical policy's rounds, rendered in one pass
            text = outboxes[0].render(np.concatenate([o.payload for o in outboxes]))
        else:
            text = pa.concat_arrays([o.texts() for o in outboxes])
        size = pc.utf8_length(text)
        if outboxes[0].text is None and len(text) and pc.max(size).as_py() > self.max_chars:
            raise ValueError(f"a classical message is longer than the cap of {self.max_chars} characters")
        return pa.table({
            "step": steps,
            "sender": np.concatenate([o.sender for o in outboxes]).astype(np.int32),
            "receiver": np.concatenate([o.receiver for o in outboxes]).astype(np.int32),
            "size": size.cast(pa.int32()),
            "text": text,
        })  # fmt: skip
