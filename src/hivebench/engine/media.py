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
        # Every directed edge as one integer key, sorted: membership by binary search.
        src = np.repeat(np.arange(self.n), np.diff(indptr))
        self.edge_keys = np.sort(src * self.n + indices)
        self.sent: list[tuple[int, Outbox]] = []
        self.truncated = 0

    def send(self, step: int, outbox: Outbox) -> Outbox:
        """Check and record one round's messages; return them as they will be delivered."""
        keys = outbox.sender.astype(np.int64) * self.n + outbox.receiver
        found = np.searchsorted(self.edge_keys, keys)
        adjacent = (found < len(self.edge_keys)) & (self.edge_keys[np.minimum(found, len(self.edge_keys) - 1)] == keys)
        if not adjacent.all():
            bad = int(np.argmin(adjacent))
            raise ValueError(f"round {step}: agent {outbox.sender[bad]} sent a message to {outbox.receiver[bad]}, not a neighbour")
        if len(np.unique(keys)) != len(keys):
            raise ValueError(f"round {step}: an agent sent two messages to one neighbour")
        if outbox.text is not None:
            lengths = pc.utf8_length(outbox.text).to_numpy(zero_copy_only=False)
            long = lengths > self.max_chars
            if long.any():
                self.truncated += int(long.sum())
                outbox = Outbox(outbox.sender, outbox.receiver, pc.utf8_slice_codeunits(outbox.text, 0, self.max_chars))
        self.sent.append((step, outbox))
        return outbox

    def table(self) -> pa.Table:
        """Every message of the episode: the round it was sent in, sender, receiver, size, text. A
        classical policy's messages are written as text here, and checked against the cap."""
        parts = []
        for step, outbox in self.sent:
            text = outbox.texts()
            size = pc.utf8_length(text)
            if outbox.text is None and len(text) and pc.max(size).as_py() > self.max_chars:
                raise ValueError(f"round {step}: a classical message is longer than the cap of {self.max_chars} characters")
            parts.append(pa.table({
                "step": pa.array(np.full(len(text), step, dtype=np.int32)),
                "sender": pa.array(outbox.sender.astype(np.int32)),
                "receiver": pa.array(outbox.receiver.astype(np.int32)),
                "size": size.cast(pa.int32()),
                "text": text,
            }))  # fmt: skip
        if not parts:
            return pa.table({name: pa.array([], t) for name, t in zip(MESSAGE_COLUMNS, [pa.int32()] * 4 + [pa.string()])})
        return pa.concat_tables(parts)
