"""The Waggle trace field: a medium of finite-lifetime traces on each agent's incident channels.

- "Admitted writes are staged with native actions and become incident evidence only after the
  subsequent environment update": `send` stages a round's deposits; `deliver`, given the contacts
  after the update, puts them on their receivers' incident channels.
- A trace reaches every contact of its writer (channel 0) or the one contact its channel names. On the
  receiver it sits on the channel of its writer, replacing the trace that channel held.
- "Channel handles are sampled from an episode-local pool, randomized per node, and fixed only within
  that episode": each agent draws a permutation of the pool (POOL handles, whatever N is, or as many
  as an agent can have contacts where that is more) and gives its contacts the next ones as it first
  meets them, several new in one round in the order of their node keys (a node-indexed draw, so no
  agent's index decides it).
- TTL: a trace delivered with TTL k is incident for k local updates, then expires.
- "Incident records are seed-controlled shuffled at each local update": each agent draws a key for
  every handle of its pool afresh every round and orders its records by their channels' keys (a
  uniform permutation of its records).

Every draw is node-indexed, a row per agent (`rng`: the block's node streams).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hivebench.engine.block import Block
from hivebench.seeding import Streams
from hivebench.waggle.runtime.records import CHANNEL, TRACE_PARTS, TTL

POOL = 256  # handles per agent, at least: more than any agent's contacts in an episode at N <= 257
TRACE_SCHEMA = pa.schema(
    [("step", pa.int32()), ("writer", pa.int32()), ("receiver", pa.int32())]
    + [(part, pa.int16()) for part in TRACE_PARTS if part != "claim"]
    + [("claim", pa.int32())]
)
# An incident record: the receiver, its writer (the runtime's, never shown), the trace's parts, and the
# round it was written (the runtime's too: what an intervention makes stale)
RECEIVER, WRITER = 0, 1
PARTS = slice(2, 2 + len(TRACE_PARTS))
WRITTEN = PARTS.stop
WIDTH = WRITTEN + 1


@dataclass(frozen=True)
class Incident:
    """Every agent's incident traces after a local update, grouped by receiver in each one's shuffled
    order: `rows[:, RECEIVER]`, `rows[:, WRITER]`, `rows[:, PARTS]` (TRACE_PARTS; the channel is the
    receiver's handle), then `rows[:, WRITTEN]`."""

    rows: np.ndarray  # (records, WIDTH)

    @property
    def receiver(self) -> np.ndarray:
        return self.rows[:, RECEIVER]

    @property
    def traces(self) -> np.ndarray:
        return self.rows[:, PARTS]


class TraceField:
    """A medium (as hivebench.engine.api.Medium: send, deliver, traffic, counts, tables) whose outbox is
    a round's deposits, (writers, traces), and whose delivery takes the contacts."""

    def __init__(self, block: Block, rng: Streams, contacts: int):
        """`contacts`: the most contacts an agent can have in an episode."""
        self.block = block
        self.rng = rng
        agents, pool = block.agents, max(POOL, contacts)
        self.key = rng.random((agents,))  # each node's key: the order several new contacts get handles in
        self.pool = np.argsort(rng.random((agents, pool)), axis=1) + 1  # handles 1..pool, per node
        self.used = np.zeros(agents, dtype=np.int64)  # handles each node has given out
        self.pairs = np.zeros(0, dtype=np.int64)  # sorted receiver * agents + writer of every channel so far
        self.handles = np.zeros(0, dtype=np.int64)  # their handles
        self.rows = np.zeros((0, WIDTH), dtype=np.int64)
        self.staged: tuple[int, np.ndarray, np.ndarray] | None = None
        self.delivered: list[tuple[int, np.ndarray]] = []  # (step written, rows as delivered)
        self.sent_by: list[tuple[int, np.ndarray]] = []  # (step, writers)
        self.expired = np.zeros(block.episodes, dtype=np.int64)
        self.arrived = self.rows  # the traces the last update delivered

    def send(self, step: int, deposits: tuple[np.ndarray, np.ndarray]) -> None:
        """Stage round `step`'s deposits: writers (m,) and their traces (m, 7), channel as the writer's handle."""
        writers, traces = deposits
        self.staged = (step, writers, traces)
        self.sent_by.append((step, writers))

    def channel(self, receiver: np.ndarray, writer: np.ndarray) -> np.ndarray:
        """The receiver's handle for each (receiver, writer) contact, given out on first contact."""
        agents = self.block.agents
        keys = receiver * agents + writer
        at = np.minimum(np.searchsorted(self.pairs, keys), max(len(self.pairs) - 1, 0))
        known = (self.pairs[at] == keys) if len(self.pairs) else np.zeros(len(keys), dtype=bool)
        new = np.unique(keys[~known])
        if len(new):
            r, w = new // agents, new % agents
            order = np.lexsort((self.key[w], r))
            r, new = r[order], new[order]
            first = np.searchsorted(r, r)  # each new pair's rank among its receiver's new ones
            rank = self.used[r] + np.arange(len(r)) - first
            handles = self.pool[r, rank]  # an IndexError here: the adapter's `most_contacts` was too few
            self.used += np.bincount(r, minlength=agents)
            keep = np.argsort(np.concatenate([self.pairs, new]), kind="stable")
            self.pairs = np.concatenate([self.pairs, new])[keep]
            self.handles = np.concatenate([self.handles, handles])[keep]
        return self.handles[np.searchsorted(self.pairs, keys)]

    def deliver(self, contacts: tuple[np.ndarray, np.ndarray], running: np.ndarray | None = None) -> Incident:
        """One local update, given the `contacts` now, (writer, receiver) pairs: what was incident ages
        by one update (expiring at TTL 0), the staged deposits arrive, and each agent's records are
        shuffled. `running`: (episodes,) whose episode goes on (the others' fields are dropped, uncounted)."""
        writer, receiver = contacts
        handles = self.channel(receiver, writer)  # every contact has a handle from its first meeting on
        aged = self.rows.copy()
        if running is not None:
            aged = aged[running[aged[:, RECEIVER] // self.block.n]]
        aged[:, 2 + TTL] -= 1
        gone = aged[:, 2 + TTL] <= 0
        self.expired += self.block.per_episode(agents=aged[gone, RECEIVER])
        rows = aged[~gone]
        self.arrived = rows[:0]
        if self.staged is not None:
            (step, writers, traces), self.staged = self.staged, None
            arrived = self._arrivals(step, writers, traces, writer, receiver, handles)
            if running is not None:
                arrived = arrived[running[arrived[:, RECEIVER] // self.block.n]]
            self.delivered.append((step, arrived))
            self.arrived = arrived
            replaced = np.isin(
                rows[:, RECEIVER] * (1 << 20) + rows[:, 2 + CHANNEL],
                arrived[:, RECEIVER] * (1 << 20) + arrived[:, 2 + CHANNEL],
            )
            rows = np.concatenate([rows[~replaced], arrived])
        self.rows = rows
        # a key per handle of every agent, drawn afresh: its records in the order of their channels' keys
        # (a uniform permutation of them, whatever order they were kept in)
        rank = self.rng.random((self.block.agents, self.pool.shape[1]))[rows[:, RECEIVER], rows[:, 2 + CHANNEL] - 1]
        return Incident(rows[np.lexsort((rank, rows[:, RECEIVER]))])

    def _arrivals(
        self,
        step: int,
        writers: np.ndarray,
        traces: np.ndarray,
        writer: np.ndarray,
        receiver: np.ndarray,
        handles: np.ndarray,
    ) -> np.ndarray:
        """The staged traces as their receivers hold them: one row per (deposit, contact it reaches)."""
        order = np.argsort(writer, kind="stable")
        writer, receiver, handles = writer[order], receiver[order], handles[order]
        start, stop = np.searchsorted(writer, writers), np.searchsorted(writer, writers, side="right")
        counts = stop - start
        deposit = np.repeat(np.arange(len(writers)), counts)
        contact = np.repeat(start - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
        to, by = receiver[contact], writer[contact]
        wanted = traces[deposit, CHANNEL]
        if (wanted > 0).any():  # a trace on one channel: the contact the writer holds by that handle
            own = self.channel(by, to)
            keep = (wanted == 0) | (own == wanted)
            deposit, contact, to, by = deposit[keep], contact[keep], to[keep], by[keep]
        rows = np.empty((len(deposit), WIDTH), dtype=np.int64)
        rows[:, RECEIVER], rows[:, WRITER] = to, by
        rows[:, PARTS] = traces[deposit]
        rows[:, WRITTEN] = step
        rows[:, 2 + CHANNEL] = handles[contact]
        return rows

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """(rounds, agents): traces written and traces delivered, by the round they were written."""
        sent = np.zeros((rounds, self.block.agents), dtype=np.int16)
        for step, writers in self.sent_by:
            np.add.at(sent[step], writers, 1)
        received = np.zeros((rounds, self.block.agents), dtype=np.int16)
        for step, rows in self.delivered:
            received[step] = np.bincount(rows[:, RECEIVER], minlength=self.block.agents)
        return {"sent": sent, "received": received}

    def counts(self, episode: int) -> dict[str, int]:
        n = self.block.n
        written = sum(int((w // n == episode).sum()) for _, w in self.sent_by)
        delivered = sum(int((rows[:, RECEIVER] // n == episode).sum()) for _, rows in self.delivered)
        return {"traces_written": written, "trace_deliveries": delivered, "traces_expired": int(self.expired[episode])}

    def tables(self, episode: int) -> dict[str, pa.Table]:
        """`traces`: one row per trace delivered: the round it was written, writer and receiver (within
        the episode), then the record as its receiver holds it."""
        n = self.block.n
        parts = [
            (np.full(len(mine), step), mine)
            for step, rows in self.delivered
            for mine in [rows[rows[:, RECEIVER] // n == episode]]
        ]
        step = np.concatenate([s for s, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
        rows = np.concatenate([r for _, r in parts]) if parts else self.rows[:0]
        columns = {"step": step, "writer": rows[:, WRITER] % n, "receiver": rows[:, RECEIVER] % n}
        columns |= {part: rows[:, 2 + i] for i, part in enumerate(TRACE_PARTS)}
        return {
            "traces": pa.table({f.name: pa.array(columns[f.name], f.type) for f in TRACE_SCHEMA}, schema=TRACE_SCHEMA)
        }
