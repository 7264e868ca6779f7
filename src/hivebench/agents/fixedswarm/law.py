"""FixedSwarm: "a shared hand-coded local rule using finite-lifetime local signals and fixed support,
inhibition, quorum, reopening, decay, and expiry", writing the same decision records a controller
would, through the same validator and compiler. Each agent, each round, from its own view alone:

1. Challenge: a claim on its incident channels that its own view shows false (verified conflict) gets
   a challenge trace (`challenge`: novelty, support and conflict), once, unless one is already there.
   A claim contradicted by another of its kind that the agent cannot verify is an unverified
   challenge candidate: blocked, counted.
2. Deposit: what it sees itself (its adapter's first evidence row: what it wants, nearest first), as a
   trace (`deposit`: novelty, or `repeat_novelty` for a claim it wrote before, and support), no
   conflict, TTL `ttl`. Local-fingerprint duplicate suppression: the same claim in the same direction
   again is a spatial repeat, blocked, until `refresh_rounds` rounds after the agent last wrote it (a
   controlled refresh: moving evidence); a stationary claim is written once (`event_once`).
3. Relay: else the strongest conflict-free incident claim it neither sees, refutes, nor has written or relayed,
   each of novelty, support and TTL `relay.step` lower (per-hop cap: only a trace with support, novelty
   and TTL at least `relay.min_support`, `relay.min_novelty` and `relay.min_ttl`). An agent whose
   proposal follows its own evidence (route-active) does not relay a claim of the kind its own
   evidence is of (silenced: private-route protection).
4. Commit: to the strongest claim the candidate-ready gate passes on its channels, that it would move
   for and does not refute (verified-conflict inhibition), confidence support // `commitment.
   support_per_bin` (at most 4); the runtime renews, decays (`commitment.decay_rounds`) and reopens it.

One trace per decision: a challenge before a deposit before a relay. Every candidate is counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.agents.waggle import gate as gates
from hivebench.agents.waggle.admit import keys
from hivebench.agents.waggle.records import BIN_MAX, CLAIM, CONFLICT, NONE, NOVELTY, SUPPORT, TTL, Decisions
from hivebench.agents.waggle.runtime import Context, WaggleRuntime
from hivebench.seeding import Streams


def first_per(agent: np.ndarray) -> np.ndarray:
    """Positions of the first row of each agent among rows grouped by agent."""
    return np.flatnonzero(np.r_[True, agent[1:] != agent[:-1]]) if len(agent) else np.zeros(0, dtype=np.int64)


class FixedSwarm(WaggleRuntime):
    medium = "field"

    def __init__(self, params: dict[str, Any], rng: Streams, adapter: Any):
        super().__init__(params, rng, adapter)
        gate = params["gate"]
        self.gate = gates.Gate(int(gate["channels"]), int(gate["support"]), float(gate["coherence"]))
        self.ttl = int(params["ttl"])
        self.deposit, self.challenge, self.relay = params["deposit"], params["challenge"], params["relay"]
        self.written: dict[int, tuple[int, int]] = {}  # keys(agent, claim) -> (round, direction) it last wrote
        self.relayed: set[int] = set()  # keys(agent, claim) it has relayed
        self.challenged: set[int] = set()  # keys(agent, claim) it has challenged

    def law(self, c: Context) -> Decisions:
        adapter, live = self.adapter, c.live
        d = Decisions.private(c.proposal.action)
        grouped = gates.claims(c.incident.receiver, c.incident.traces)
        on = live[grouped.agent] if len(grouped.agent) else np.zeros(0, dtype=bool)

        refuted = np.zeros(len(grouped.agent), dtype=bool)
        if on.any():
            refuted[on] = adapter.refutes(c.observation, grouped.agent[on], grouped.claim[on])
        chosen = np.full(len(live), False)
        ev = c.evidence
        own = keys(ev.agent, ev.claim)  # (agent, claim) of what each agent sees itself
        own_kinds = keys(ev.agent, adapter.kind(ev.agent, ev.claim))  # (agent, kind) of the same
        self._challenge(c, d, grouped, on, refuted, chosen, own, own_kinds)
        self._deposit(c, d, chosen)
        self._relay(c, d, chosen, own, own_kinds)

        ready = grouped.ready(self.gate) & on & ~refuted  # verified-conflict inhibition
        if ready.any():
            ready &= adapter.wants(c.observation, grouped.agent, grouped.claim)
        best = np.flatnonzero(ready)
        if len(best):
            best = best[np.lexsort((-grouped.support[best], grouped.agent[best]))]
            best = best[first_per(grouped.agent[best])]
            per_bin = int(self.params["commitment"]["support_per_bin"])
            d.commit[grouped.agent[best], 0] = grouped.claim[best]
            d.commit[grouped.agent[best], 1] = np.minimum(BIN_MAX, grouped.support[best] // per_bin)
        return d

    def _challenge(
        self,
        c: Context,
        d: Decisions,
        grouped: gates.Claims,
        on: np.ndarray,
        refuted: np.ndarray,
        chosen: np.ndarray,
        own: np.ndarray,
        own_kinds: np.ndarray,
    ) -> None:
        if not len(grouped.agent):
            return
        kind = self.adapter.kind(grouped.agent, grouped.claim)
        # a claim is contradicted when the agent holds or sees another claim of the same kind
        agent_kind = np.concatenate([keys(grouped.agent, kind), own_kinds])
        claim_of = np.concatenate([grouped.claim, c.evidence.claim])
        pairs = np.unique(np.stack([agent_kind, claim_of], axis=1), axis=0)
        kinds, distinct = np.unique(pairs[:, 0], return_counts=True)
        contested = np.isin(keys(grouped.agent, kind), kinds[distinct > 1])
        held = keys(grouped.agent, grouped.claim)
        open_ = on & (grouped.conflict == 0) & ~np.isin(held, own) & ~np.isin(held, list(self.challenged))
        unverified = np.flatnonzero(contested & ~refuted & open_)
        c.count("unverified_challenge_candidates", grouped.agent[unverified])
        c.count("unverified_challenges_blocked", grouped.agent[unverified])  # this rule never writes one
        rows = np.flatnonzero(refuted & open_)
        c.count("candidate_writes", grouped.agent[rows])
        rows = rows[first_per(grouped.agent[rows])]
        agent = grouped.agent[rows]
        self.challenged.update(held[rows].tolist())
        ch = self.challenge
        d.deposit[agent] = np.stack(
            [np.zeros(len(rows), np.int64), grouped.claim[rows]]
            + [np.full(len(rows), int(v)) for v in (ch["novelty"], ch["support"], ch["conflict"], self.ttl, NONE)],
            axis=1,
        )
        chosen[agent] = True

    def _deposit(self, c: Context, d: Decisions, chosen: np.ndarray) -> None:
        ev = c.evidence
        rows = first_per(ev.agent)
        rows = rows[c.live[ev.agent[rows]]]
        c.count("deposit_candidates", ev.agent[rows])
        c.count("candidate_writes", ev.agent[rows])
        refresh, once = int(self.params["refresh_rounds"]), bool(self.params["event_once"])
        for row, key in zip(rows.tolist(), keys(ev.agent[rows], ev.claim[rows]).tolist()):
            agent, claim, direction = int(ev.agent[row]), int(ev.claim[row]), int(ev.direction[row])
            last = self.written.get(key)
            novelty = int(self.deposit["novelty"])
            if last is not None:
                repeat = last[1] == direction
                if (not ev.moving[row] and once) or (repeat and c.step - last[0] < refresh):
                    c.count("spatial_repeats_blocked", [agent])
                    continue
                novelty = int(self.deposit["repeat_novelty"])
            if chosen[agent]:  # its challenge goes first
                continue
            if last is not None and last[1] == direction:
                c.count("refreshes", [agent])
            self.written[key] = (c.step, direction)
            d.deposit[agent] = (0, claim, novelty, int(self.deposit["support"]), 0, self.ttl, direction)
            chosen[agent] = True

    def _relay(self, c: Context, d: Decisions, chosen: np.ndarray, own: np.ndarray, own_kinds: np.ndarray) -> None:
        traces, receiver = c.incident.traces, c.incident.receiver
        if not len(traces):
            return
        held = keys(receiver, traces[:, CLAIM])
        relay, step = self.relay, int(self.relay["step"])
        open_ = (
            c.live[receiver]
            & (traces[:, CONFLICT] == 0)
            & (traces[:, SUPPORT] >= max(int(relay["min_support"]), step))
            & (traces[:, NOVELTY] >= max(int(relay["min_novelty"]), step))
            & (traces[:, TTL] >= max(int(relay["min_ttl"]), step + 1))
            & ~np.isin(held, own)
            & ~np.isin(held, [*self.relayed, *self.written])
        )
        rows = np.flatnonzero(open_)
        rows = rows[
            ~self.adapter.refutes(c.observation, receiver[rows], traces[rows, CLAIM])
        ]  # never pass on what it knows false
        rows = rows[np.lexsort((-traces[rows, SUPPORT], receiver[rows]))]
        rows = rows[first_per(receiver[rows])]  # each agent's strongest
        agent = receiver[rows]
        c.count("candidate_writes", agent)
        route = c.proposal.route[agent]
        c.count("relay_candidates_route_active", agent[route])
        # private-route protection: an agent on its own route does not pass on a rival claim of its kind
        rival = route & np.isin(keys(agent, self.adapter.kind(agent, traces[rows, CLAIM])), own_kinds)
        c.count("relays_silenced", agent[rival])
        keep = ~rival & ~chosen[agent]
        rows, agent = rows[keep], agent[keep]
        lowered = traces[rows].copy()
        lowered[:, 0] = 0
        lowered[:, [NOVELTY, SUPPORT, TTL]] -= step
        d.deposit[agent] = lowered
        chosen[agent] = True
        self.relayed.update(keys(agent, lowered[:, CLAIM]).tolist())
