"""FixedSwarm: "a shared hand-coded local rule using finite-lifetime local signals and fixed support,
inhibition, quorum, reopening, decay, and expiry", writing the same decision records a controller
would, through the same formal system, validator and compiler (hivebench.waggle.runtime). What is its
own is what it proposes to write, each agent each round, from its own view alone, in this order:

1. Challenges: each claim on its incident channels that its own view shows false (verified conflict),
   and each one another claim of its kind contradicts that it cannot verify (an unverified challenge
   candidate, which the formal system's inhibition blocks), as a challenge trace (`challenge`:
   novelty, support and conflict), unless a challenge is on the claim already or the agent has
   challenged it before.
2. Its own evidence: what it sees itself (its adapter's first evidence row: what it wants, nearest
   first), as a trace (`deposit`: novelty, or `repeat_novelty` for a claim it wrote before, and
   support), no conflict, TTL `ttl`; the formal system's suppression blocks a spatial repeat until the
   refresh, and a stationary claim after its first write.
3. A relay: the strongest conflict-free incident trace the runtime's per-hop cap lets through (support,
   novelty and TTL at least the cap's minimums) of a claim it neither sees, refutes, nor has written
   or relayed, each of novelty, support and TTL lowered by the cap's `step` (by 1 with the cap off).
4. A commitment: to the strongest claim the candidate-ready gate passes on its channels (any claim, with
   the gate off), that it would move for and does not refute; confidence support //
   `commitment.support_per_bin` (at most 4); the runtime renews, decays (`commitment.decay_rounds`)
   and reopens it.

The formal system counts every candidate and keeps the first that passes (formal.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.seeding import Streams
from hivebench.waggle.runtime import gate as gates
from hivebench.waggle.runtime.admit import keys
from hivebench.waggle.runtime.formal import Writes
from hivebench.waggle.runtime.policy import Context, Draft, WaggleRuntime
from hivebench.waggle.runtime.records import BIN_MAX, CLAIM, CONFLICT, NONE, NOVELTY, SUPPORT, TTL, Decisions


def first_per(agent: np.ndarray) -> np.ndarray:
    """Positions of the first row of each agent among rows grouped by agent."""
    return np.flatnonzero(np.r_[True, agent[1:] != agent[:-1]]) if len(agent) else np.zeros(0, dtype=np.int64)


class FixedSwarm(WaggleRuntime):
    medium = "field"

    def __init__(self, params: dict[str, Any], rng: Streams, adapter: Any):
        super().__init__(params, rng, adapter)
        self.ttl = int(params["ttl"])
        self.deposit, self.challenge = params["deposit"], params["challenge"]

    def draft(self, c: Context) -> Draft:
        assert self.formal is not None
        adapter, live, settings = self.adapter, c.live, self.formal.settings
        d = Decisions.private(c.proposal.action)
        grouped = gates.claims(c.incident.receiver, c.incident.traces)
        on = live[grouped.agent] if len(grouped.agent) else np.zeros(0, dtype=bool)
        refuted = np.zeros(len(grouped.agent), dtype=bool)
        if on.any():
            refuted[on] = adapter.refutes(c.observation, grouped.agent[on], grouped.claim[on])
        own = keys(c.evidence.agent, c.evidence.claim)  # (agent, claim) of what each agent sees itself
        writes = [self._challenges(c, grouped, on, refuted, own), self._deposits(c), self._relays(c, own)]
        ready = on & ~refuted  # verified-conflict inhibition
        if settings.gate is not None:
            ready &= grouped.ready(settings.gate)
        if ready.any():
            ready &= adapter.wants(c.observation, grouped.agent, grouped.claim)
        best = np.flatnonzero(ready)
        if len(best):
            best = best[np.lexsort((-grouped.support[best], grouped.agent[best]))]
            best = best[first_per(grouped.agent[best])]
            per_bin = int(self.params["commitment"]["support_per_bin"])
            d.commit[grouped.agent[best], 0] = grouped.claim[best]
            d.commit[grouped.agent[best], 1] = np.minimum(BIN_MAX, grouped.support[best] // per_bin)
        return Draft(d, Writes(np.concatenate([w.agent for w in writes]), np.concatenate([w.trace for w in writes])))

    def _trace(self, claim: np.ndarray, parts: tuple[Any, ...]) -> np.ndarray:
        """(rows, 7): traces of `claim` on every channel; `parts`: novelty, support, conflict, TTL,
        direction (each a number or one per row)."""
        rows = len(claim)
        return np.stack(
            [np.zeros(rows, np.int64), claim, *(np.broadcast_to(np.asarray(p, np.int64), rows) for p in parts)], axis=1
        )

    def _challenges(
        self, c: Context, grouped: gates.Claims, on: np.ndarray, refuted: np.ndarray, own: np.ndarray
    ) -> Writes:
        if not len(grouped.agent):
            return Writes(np.zeros(0, np.int64), np.zeros((0, 7), np.int64))
        ev, kind = c.evidence, self.adapter.kind(grouped.agent, grouped.claim)
        # a claim is contradicted when the agent holds or sees another claim of the same kind
        agent_kind = np.concatenate([keys(grouped.agent, kind), keys(ev.agent, self.adapter.kind(ev.agent, ev.claim))])
        claim_of = np.concatenate([grouped.claim, ev.claim])
        pairs = np.unique(np.stack([agent_kind, claim_of], axis=1), axis=0)
        kinds, distinct = np.unique(pairs[:, 0], return_counts=True)
        contested = np.isin(keys(grouped.agent, kind), kinds[distinct > 1])
        held = keys(grouped.agent, grouped.claim)
        prints = self.formal.prints if self.formal is not None else None
        challenged = list(prints.challenged) if prints is not None else []
        open_ = on & (grouped.conflict == 0) & ~np.isin(held, own) & ~np.isin(held, challenged)
        rows = np.flatnonzero(open_ & (refuted | contested))
        ch = self.challenge
        trace = self._trace(grouped.claim[rows], (ch["novelty"], ch["support"], ch["conflict"], self.ttl, NONE))
        return Writes(grouped.agent[rows], trace)

    def _deposits(self, c: Context) -> Writes:
        ev = c.evidence
        rows = first_per(ev.agent)
        rows = rows[c.live[ev.agent[rows]]]
        assert self.formal is not None
        written = self.formal.prints.written
        before = np.array([k in written for k in keys(ev.agent[rows], ev.claim[rows]).tolist()], dtype=bool)
        novelty = np.where(before, int(self.deposit["repeat_novelty"]), int(self.deposit["novelty"]))
        parts = (novelty, int(self.deposit["support"]), 0, self.ttl, ev.direction[rows])
        return Writes(ev.agent[rows], self._trace(ev.claim[rows], parts))

    def _relays(self, c: Context, own: np.ndarray) -> Writes:
        traces, receiver = c.incident.traces, c.incident.receiver
        if not len(traces):
            return Writes(np.zeros(0, np.int64), np.zeros((0, 7), np.int64))
        assert self.formal is not None
        prints, cap = self.formal.prints, self.formal.settings.relay
        held = keys(receiver, traces[:, CLAIM])
        step = cap.step if cap is not None else 1
        relayable = cap.sources(traces) if cap is not None else np.ones(len(traces), dtype=bool)
        open_ = (
            c.live[receiver]
            & (traces[:, CONFLICT] == 0)
            & relayable
            & (traces[:, [SUPPORT, NOVELTY]] >= step).all(axis=1)
            & (traces[:, TTL] > step)
            & ~np.isin(held, own)
            & ~np.isin(held, [*prints.relayed, *prints.written])
        )
        rows = np.flatnonzero(open_)
        rows = rows[~c.refutes(receiver[rows], traces[rows, CLAIM])]  # never pass on what it knows false
        rows = rows[np.lexsort((-traces[rows, SUPPORT], receiver[rows]))]
        rows = rows[first_per(receiver[rows])]  # each agent's strongest
        lowered = traces[rows].copy()
        lowered[:, 0] = 0
        lowered[:, [NOVELTY, SUPPORT, TTL]] -= step
        return Writes(receiver[rows], lowered)
