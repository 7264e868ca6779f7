"""Asynchronous clocks: each agent acts on its own timer, and a decision takes time to come back.

Time runs in ticks, a tick being one synchronous round (a message sent in one arrives at the start of
the next). Each agent's timer first fires at a phase drawn in [0, period) and then every `period`
ticks plus a jitter drawn in [0, jitter]. When it fires the agent is asked on the state as it stands
then (its snapshot); its decision takes `latency` ticks (fixed, or drawn in [latency, latency_max]) and
applies in the round `latency` ticks later, against whatever the state is by then: a decision of
latency 0 applies in the round it was asked in. An agent has one call at a time: a timer that fires
while its call is pending waits for the call to apply. In the rounds it applies nothing an agent takes
the suite's idle action (keeps its state, sends nothing). A round in which an agent gives its final
answer (AgentsNet's and Silo-Bench's answer round) is a deadline: every agent is asked and answers in
it on the state as it stands, its pending call dropped. Period 1, jitter 0 and latency 0 is the
synchronous loop: every agent asked and applying every round. With `seconds_per_round` a model
method's decision takes the time its call took: its recorded seconds (`latency_s`, the same when the
call is replayed from the cache) over `seconds_per_round`, rounded up, at least one round. With
`latencies` (a response cache) any method's decision takes the seconds of one of the cache's recorded
calls, drawn uniformly per call, converted alike.

Every draw comes from one stream, `perturbation/clocks`, of each episode's seed: the phase once per
agent, then every tick one number per agent for the jitter and one for the latency, whoever fires (a
setting that is off draws nothing), so that an episode's clocks depend on its seed alone.
"""

from __future__ import annotations

import hashlib
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from hivebench.models.cache import recorded_seconds
from hivebench.seeding import Streams

AHEAD = 16  # ticks of draws made in one call (numbers drawn ahead change none of them)
UNTIMED = np.iinfo(np.int64).max  # the due tick of a call not timed yet (`timed`)


class Clocks:
    """The block's agent clocks and pending calls (`agents` agents, `streams` one per episode)."""

    def __init__(self, settings: dict[str, Any], agents: int, streams: Streams):
        self.period, self.jitter = settings.get("period", 1), settings.get("jitter", 0)
        low = settings.get("latency", 0)
        self.latency = (low, settings.get("latency_max", low))
        # a call's latency from seconds: rounds = ceil(seconds / seconds_per_round), >= 1; the seconds the
        # model call took (`by_calls`), or those of a call drawn from a cache's (`recorded`, ascending)
        self.seconds_per_round: float | None = settings.get("seconds_per_round")
        latencies = settings.get("latencies")
        self.recorded = None
        if latencies is not None:
            self.recorded = recorded_rounds(latencies["file"], latencies["sha256"], self.seconds_per_round)
        self.by_calls = self.seconds_per_round is not None and self.recorded is None
        self.draws = streams
        self.fire = np.floor(streams.random((agents,)) * self.period).astype(np.int64)
        self.drawn_latency = self.latency[1] > low or self.recorded is not None
        self.drawn = int(bool(self.jitter)) + int(self.drawn_latency)  # numbers per agent and tick
        # per episode, tick drawn ahead, agent and number drawn: the wait and latency in ticks it gives
        self.ahead = np.empty((len(streams), 0, agents // len(streams), self.drawn), dtype=np.int64)
        self.used = 0  # of the ticks drawn ahead
        self.due = np.full(agents, -1, dtype=np.int64)  # the tick its pending call applies (-1: none)
        self.asked_at = np.full(agents, -1, dtype=np.int64)  # the tick its pending call was asked in
        self.decided: deque[Any] = deque()  # the batches of the last `span` ticks, newest first
        longest = self.latency[1] if self.recorded is None else int(self.recorded[-1])
        self.span = longest + 1  # ticks of batches a pending call may still apply from (this one's included)
        self.tick = -1
        self.asking = self.applying = np.zeros(agents, dtype=bool)
        self.staleness = np.full(agents, -1, dtype=np.int64)  # this tick's applied decisions' age in ticks
        self.lost: np.ndarray | None = None  # this tick's agents whose pending call was lost (None: none)

    def next_tick(self, answering: np.ndarray | None = None, absent: np.ndarray | None = None) -> None:
        """Start a tick: who is asked (`asking`) and whose decision applies (`applying`, with its
        `staleness`); an agent `absent` from the swarm (churn) is not asked, and its pending call is lost
        (`lost`), as is one that answers now (`answering`: a deadline) before its call applied."""
        self.tick += 1
        t = self.tick
        self.lost = None
        if absent is not None and absent.any():
            self.lost = absent & (self.due >= t)
            self.due[absent] = -1
        # drawn for every agent every tick, whoever is asked, so that an episode's draws are its seed's alone
        ticks = self._ticks() if self.drawn else None
        asking = (self.due < t) & (self.fire <= t)
        if absent is not None:
            asking &= ~absent
        deadline = answering is not None and answering.any()
        if deadline:  # asked now, applied now
            dropped = answering & (self.due >= t)
            self.lost = dropped if self.lost is None else self.lost | dropped
            asking |= answering
        asked = asking.nonzero()[0]
        latency = ticks[asked, -1] if self.drawn_latency else self.latency[0]  # type: ignore[index]
        # timed by the calls: due once they have been made (`timed`), not this tick in any case
        due = UNTIMED if self.by_calls else t + latency
        if deadline:  # an answer applies now, whatever its call took
            due = np.where(answering[asked], t, due)
        self.due[asked] = due
        self.asked_at[asked] = t
        self.fire[asked] = t + (ticks[asked, 0] if self.jitter else self.period)  # type: ignore[index]
        self.asking, self.applying = asking, self.due == t
        self.staleness = np.where(self.applying, t - self.asked_at, -1)
        if self.by_calls:  # a call's rounds unbounded: back to the oldest pending one
            self.span = t + 1 - int(self.asked_at.min(where=self.due >= t, initial=t))

    def _ticks(self) -> np.ndarray:
        """(agents, drawn) this tick's wait (with jitter) and latency (drawn in a range), in ticks, from
        the stream's numbers drawn AHEAD ticks at a time (an episode's in the order of a draw a tick)."""
        episodes, ahead, n, drawn = self.ahead.shape
        if self.used == ahead:
            u = self.draws.random((episodes * AHEAD, n * drawn)).reshape(episodes, AHEAD, n, drawn)
            # a number u in [0, 1) picks among k whole ticks as int(u * k) (a truncation: the floor)
            self.ahead, self.used = np.empty(u.shape, dtype=np.int64), 0
            if self.jitter:
                self.ahead[..., 0] = self.period + (u[..., 0] * (self.jitter + 1)).astype(np.int64)
            low, high = self.latency
            if self.recorded is not None:
                self.ahead[..., -1] = self.recorded[(u[..., -1] * len(self.recorded)).astype(np.int64)]
            elif high > low:
                self.ahead[..., -1] = low + (u[..., -1] * (high - low + 1)).astype(np.int64)
        self.used += 1
        return self.ahead[:, self.used - 1].reshape(len(self.fire), drawn)

    def timed(self, seconds: np.ndarray) -> None:
        """Under `seconds_per_round`: the asked agents' calls took these seconds (per agent of the
        block; NaN: no call), so their decisions apply that many rounds later, rounded up, at least one
        (an answer at the deadline applies now all the same)."""
        asked = (self.due == UNTIMED).nonzero()[0]
        self.due[asked] = self.tick + call_rounds(seconds[asked], self.seconds_per_round)  # type: ignore[arg-type]

    def recent(self, decided: Any) -> deque[Any]:
        """Given what the method decided now: the batches decided in this tick and the ticks before it
        that a pending call may still apply from, newest (`decided`) first, so that an agent applying a
        decision of age `staleness` applies its batch `staleness` (hivebench.perturb.actions.choose)."""
        self.decided.appendleft(decided)
        while len(self.decided) > self.span:
            self.decided.pop()
        return self.decided


def recorded_rounds(file: str, sha256: str, seconds_per_round: float) -> np.ndarray:
    """The rounds each call of a response cache took (ascending): its recorded seconds over
    `seconds_per_round`, rounded up, at least one. The file as a cell holds it (its path and content
    hash); ValueError where the file is no longer what the cell was made from."""
    path = Path(file)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(
            f"clocks.latencies: {path} changed since the workflow was read (its content hash differs); "
            "run the workflow again so that the cells drawing from it rerun"
        )
    return call_rounds(np.sort(np.array(recorded_seconds(data.splitlines()), dtype=np.float64)), seconds_per_round)


def call_rounds(seconds: np.ndarray, seconds_per_round: float) -> np.ndarray:
    """The whole rounds calls of these seconds take: over a round's seconds, rounded up, at least one
    (NaN: no call, one round)."""
    return np.maximum(np.ceil(np.nan_to_num(seconds) / seconds_per_round), 1).astype(np.int64)
