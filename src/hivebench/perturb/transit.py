"""An unreliable medium: the suite's own medium, wrapped (hivebench.engine.api.Medium), records every
message as sent; on the way to its receivers a message is lost, late or delivered twice, by draws of
the cell's seed alone (streams `perturbation/medium/...`, one per setting, so that turning one setting
on shifts no other's draws).

A message's fate is drawn once when it is sent (`unit: message`: every delivery of a broadcast shares
it) or for each delivery (`unit: delivery`). A truncated message arrives cut to `truncate_chars`
characters; one carried as a classical algorithm's payload, which a cut leaves unreadable, never
arrives (counted as cut). A message sent in round t normally arrives at the start
of round t + 1; delayed by d rounds it arrives at the start of round t + 1 + d (with whatever else
arrives then, earlier messages first); a duplicate arrives once more one round after the message.
A message still on its way when the block ends never arrives. A shared store (Silo-Bench's `store`)
delivers nothing: a write is lost when it is sent, and it cannot be late.

Per episode the summary counts `lost_messages`, `delayed_messages`, `duplicated_messages` and
`cut_messages` (the suite's medium counts those it cuts to its cap, `truncated_messages`) and
`max_in_flight` (the most deliveries on their way at once, past a round's delivery), and the
`transit` table holds one row per delivery the medium changed: the round it was sent in, sender and
receiver (-1: a lost store write), its fate and the round at whose start it arrives (-1: never). The
cell keeps that table in its per-agent file's metadata rather than a file of its own
(hivebench.paths.inline_tables): a second file cost a sub-millisecond classical cell more than the
perturbation itself did (benchmarks/bench_perturb.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import Medium
from hivebench.engine.media import exchange
from hivebench.perturb import inboxes
from hivebench.seeding import Streams

TRANSIT_SCHEMA = pa.schema(
    [
        ("step", pa.int32()),
        ("sender", pa.int32()),
        ("receiver", pa.int32()),
        ("fate", pa.dictionary(pa.int8(), pa.string())),
        ("arrival", pa.int32()),
    ]
)
FATES = ("lost", "delayed", "duplicated", "cut")
LOST, DELAYED, DUPLICATED, CUT = range(4)


class UnreliableMedium:
    """A `Medium` around `inner`, under the `medium` part of a perturbation (its schema's settings)."""

    def __init__(self, inner: Medium, settings: dict[str, Any], streams: Streams):
        self.inner, self.block = inner, inner.block
        self.loss, self.duplicate, self.reorder = settings["loss"], settings["duplicate"], settings["reorder"]
        self.delay = (settings["delay"], settings.get("delay_max", settings["delay"]))
        self.per_message = settings["unit"] == "message"
        self.store = isinstance(inner, exchange.SharedStore)
        if self.store and (self.delay[1] or self.duplicate or self.reorder or settings.get("truncate")):
            raise ValueError(
                "a shared store delivers nothing: its writes can be lost (medium.loss), not late, doubled, reordered"
                " or cut"
            )
        self.truncate, self.chars = settings.get("truncate", 0), settings.get("truncate_chars", 0)
        self.transit = settings.get("transit", True)  # write the `transit` table
        self.streams = {name: streams.child(name) for name in ("loss", "delay", "duplicate", "reorder", "truncate")}
        self.now = 0  # the round whose messages the next delivery brings
        # this round's messages: sender, receiver, (lost, delay, duplicated, cut)
        self.fates: tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]] | None = None
        self.held: list[tuple[int, inboxes.Inbox]] = []  # (due round, deliveries), in the order held
        # (step, fate, sender, receiver, arrival): a round's deliveries of one fate (arrival: one for all, or each's)
        self.events: list[tuple[int, int, np.ndarray, np.ndarray, Any]] = []
        self.received: list[tuple[int, np.ndarray]] = []  # (round, receivers) of each delivery made

    def send(self, step: int, outbox: Any) -> None:
        if self.store and self.loss:
            lost = self._draw("loss", outbox.sender) < self.loss
            self._record(step, outbox.sender, np.full(len(lost), -1), lost, LOST, -1)
            outbox = outbox.take(np.flatnonzero(~lost))
        elif self.per_message:  # a message's fate, drawn as it is sent; its deliveries find it by sender and receiver
            self.fates = (outbox.sender, outbox.receiver, self._fates(outbox.sender))
        self.inner.send(step, outbox)

    def deliver(self, where: Any = None) -> Any:
        inbox, step = self.inner.deliver(where), self.now
        self.now += 1
        sender, receiver = inboxes.ends(inbox)
        if len(sender) and not self.store:
            inbox = self._delivered(step, inbox, sender, receiver)
        due = [held for when, held in self.held if when <= step]
        self.held = [(when, held) for when, held in self.held if when > step]
        inbox = inboxes.concat(due, inbox)
        if self.reorder:
            inbox = self._shuffled(inbox)
        self.received.append((step, inboxes.ends(inbox)[1]))
        return inbox

    def _delivered(self, step: int, inbox: Any, sender: np.ndarray, receiver: np.ndarray) -> Any:
        """This round's deliveries that arrive now; the others recorded, the late ones held."""
        if self.per_message and self.fates is not None and sender is self.fates[0] and receiver is self.fates[1]:
            lost, delay, doubled, cut = self.fates[2]  # the outbox itself delivered (named neighbour messages)
        elif self.per_message and self.fates is not None:
            keys, draws = _keys(self.fates[0], self.fates[1], self.block.agents), self.fates[2]
            own = _find(keys, _keys(sender, receiver, self.block.agents))
            broadcast = own < 0  # a delivery of a message sent to whoever the medium reaches (receiver -1)
            own[broadcast] = _find(keys, _keys(sender[broadcast], np.full(int(broadcast.sum()), -1), self.block.agents))
            lost, delay, doubled, cut = (d[own] for d in draws)
        else:
            lost, delay, doubled, cut = self._fates(receiver)
        cut = cut & ~lost  # not in place: the drawn fates stay as drawn
        if cut.any():
            inbox, unreadable = inboxes.truncated(inbox, cut, self.chars)
            self._record(step, sender, receiver, cut, CUT, np.where(unreadable, -1, step + 1 + delay))
            lost = lost | unreadable
            self._record(step, sender, receiver, lost & ~cut, LOST, -1)
        else:
            self._record(step, sender, receiver, lost, LOST, -1)
        late = ~lost & (delay > 0)
        self._record(step, sender, receiver, late, DELAYED, step + 1 + delay)
        twice = ~lost & doubled
        self._record(step, sender, receiver, twice, DUPLICATED, step + 2 + delay)
        if (late | twice).any():
            for d in self._delays(delay[late]):
                if (rows := np.flatnonzero(late & (delay == d))).size:
                    self.held.append((step + int(d), inboxes.take(inbox, rows)))
            for d in self._delays(delay[twice]):
                self.held.append((step + int(d) + 1, inboxes.take(inbox, np.flatnonzero(twice & (delay == d)))))
            self.held.sort(key=lambda held: held[0])  # stable: what was held first arrives first
        return inboxes.take(inbox, np.flatnonzero(~lost & (delay == 0)))

    def _delays(self, delay: np.ndarray) -> Any:
        """The distinct delays among some deliveries' (a fixed delay: that one, unless there are none)."""
        low, high = self.delay
        return np.unique(delay) if high > low else (low,) if len(delay) else ()

    def _fates(self, agents: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lost, delay, duplicated, truncated) of messages or deliveries owned by `agents` (a setting
        that is off draws nothing)."""
        m = len(agents)
        lost = self._draw("loss", agents) < self.loss if self.loss else np.zeros(m, dtype=bool)
        low, high = self.delay
        delay = np.full(m, low, dtype=np.int64)
        if high > low:
            delay = low + np.floor(self._draw("delay", agents) * (high - low + 1)).astype(np.int64)
        doubled = self._draw("duplicate", agents) < self.duplicate if self.duplicate else np.zeros(m, dtype=bool)
        cut = self._draw("truncate", agents) < self.truncate if self.truncate else np.zeros(m, dtype=bool)
        return lost, delay, doubled, cut

    def _draw(self, name: str, agents: np.ndarray) -> np.ndarray:
        """One double per row, each from the stream of its agent's episode."""
        return self.streams[name].random_by_episode(agents // self.block.n)

    def _shuffled(self, inbox: Any) -> Any:
        _, receiver = inboxes.ends(inbox)
        keys = self._draw("reorder", receiver)
        return inboxes.take(inbox, np.lexsort((keys, receiver // self.block.n)))

    def _record(
        self, step: int, sender: np.ndarray, receiver: np.ndarray, rows: np.ndarray, fate: int, arrival: Any
    ) -> None:
        """Keep the deliveries `rows` (a mask) selects, with their fate and arrival (one for all, or per delivery)."""
        if rows.any():
            arrivals = arrival if np.isscalar(arrival) else arrival[rows]
            self.events.append((step, fate, sender[rows], receiver[rows], arrivals))

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """The inner medium's counts, with what each agent received as this medium delivered it."""
        return inboxes.received_traffic(self.inner.traffic(rounds), self.received, rounds, self.block.agents)

    def counts(self, episode: int) -> dict[str, int]:
        return {
            **self.inner.counts(episode),
            **{f"{fate}_messages": int(self._log.counts[episode, i]) for i, fate in enumerate(FATES)},
            "max_in_flight": int(self._log.in_flight[episode]),
        }

    def tables(self, episode: int) -> dict[str, pa.Table | Callable[[], pa.Table]]:
        if not self.transit:
            return self.inner.tables(episode)
        log = self._log
        return {
            **self.inner.tables(episode),
            "transit": log.table.slice(log.bounds[episode], log.bounds[episode + 1] - log.bounds[episode]),
        }

    @cached_property
    def _log(self) -> Log:
        """What the medium changed, once the block has ended: one table, sorted by episode."""
        sizes = [len(event[2]) for event in self.events]
        step = np.repeat(np.array([event[0] for event in self.events], dtype=np.int64), sizes)
        fate = np.repeat(np.array([event[1] for event in self.events], dtype=np.int64), sizes)
        sender, receiver, arrival = (np.zeros(0, np.int64),) * 3
        if self.events:
            sender = np.concatenate([event[2] for event in self.events])
            receiver = np.concatenate([event[3] for event in self.events])
            arrival = np.concatenate([np.full(n, a) if np.isscalar(a) else a for (*_, a), n in zip(self.events, sizes)])
        episode = sender // self.block.n
        order = np.argsort(episode, kind="stable")
        base = (episode * self.block.n)[order]
        table = pa.table(
            [
                step[order].astype(np.int32),
                (sender[order] - base).astype(np.int32),
                np.where(receiver[order] < 0, -1, receiver[order] - base).astype(np.int32),
                pa.DictionaryArray.from_arrays(pa.array(fate[order].astype(np.int8)), pa.array(FATES)),
                arrival[order].astype(np.int32),
            ],
            schema=TRANSIT_SCHEMA,
        )
        counts = np.zeros((self.block.episodes, len(FATES)), dtype=np.int64)
        np.add.at(counts, (episode, fate), 1)
        bounds = np.searchsorted(episode[order], np.arange(self.block.episodes + 1))
        return Log(table, bounds, counts, self._in_flight(episode, step, fate, arrival))

    def _in_flight(self, episode: np.ndarray, step: np.ndarray, fate: np.ndarray, arrival: np.ndarray) -> np.ndarray:
        """Per episode, the most deliveries on their way at once: a late or second copy sent in round s
        that arrives at the start of round a is held past the deliveries of rounds s..a-2 (and past the
        last one made, if a lies beyond it). An episode that has ended sends nothing more, so its
        maximum does not depend on its block."""
        rounds = len(self.received)
        held = (fate == DELAYED) | (fate == DUPLICATED)
        change = np.zeros((self.block.episodes, rounds + 1), dtype=np.int64)
        np.add.at(change, (episode[held], step[held]), 1)
        np.add.at(change, (episode[held], np.minimum(arrival[held] - 1, rounds)), -1)
        return np.cumsum(change, axis=1)[:, :rounds].max(axis=1, initial=0)


@dataclass(frozen=True)
class Log:
    table: pa.Table  # every changed delivery, by episode
    bounds: np.ndarray  # (episodes + 1,) episode s's rows: bounds[s]..bounds[s + 1]
    counts: np.ndarray  # (episodes, fates)
    in_flight: np.ndarray  # (episodes,) the most deliveries on their way at once


def _find(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The position of each wanted key in `keys` (unique), or -1."""
    if not len(keys):
        return np.full(len(wanted), -1)
    order = np.argsort(keys)
    at = order[np.minimum(np.searchsorted(keys, wanted, sorter=order), len(keys) - 1)]
    return np.where(keys[at] == wanted, at, -1)


def _keys(sender: np.ndarray, receiver: np.ndarray, agents: int) -> np.ndarray:
    """One number per (sender, receiver) pair (receiver -1: a broadcast)."""
    return sender.astype(np.int64) * (agents + 1) + receiver + 1
