"""The formal system around the controller slot, the same for every controller (a fixed law, a
scripted rule, a model through the ladder): "local-fingerprint duplicate suppression + per-hop-capped
relay + fixed native action compilation + verified-conflict inhibition", with the candidate-ready gate,
Pursuit's refresh of moving evidence and Foraging's event-once evidence ("fixed adapter settings held
constant across the formal matrix, not learned controller parameters"). The compilation is the
round's (policy.py); this module decides which of a controller's candidate writes and which
commitment go through, and counts the paper's Table 11 telemetry as it does.

A controller proposes candidate writes in its order of preference (a model's record: its one deposit;
FixedSwarm: its challenges, its own evidence, its relay); each is classified from the agent's own view
and counted, and the first that passes every part is the agent's one trace this round:

- a challenge (conflict above what the agent holds on the claim) passes only where the agent's own
  view refutes the claim (`inhibition`); else it is an unverified challenge candidate, blocked;
- its own evidence (a claim it sees itself) is a deposit candidate; the same claim in the same
  direction again is a spatial repeat, blocked until `refresh_rounds` rounds after the agent last wrote
  it (a controlled refresh), and a stationary claim is written once (`event_once`) (`suppression`);
- anything else relays incident evidence: a relay candidate. Its source is an incident trace of its
  claim with support, novelty and TTL at least the minimums; the relay is capped at the source less
  `step` in each (a relay above the cap is lowered to it; one with no source is blocked), a claim is
  relayed once per agent (`relay`), and an agent whose proposal follows its own evidence does not relay
  a claim of that evidence's kind (private-route protection, `relay.route_protection`).

A commitment is kept only where the gate passes on the agent's incident channels (`gate`) and its own
view does not refute the claim (`inhibition`).

Every candidate is counted, also after the agent's trace was chosen: `candidate_writes` (every
candidate but an unverified challenge), `deposit_candidates`, `spatial_repeats_blocked`, `refreshes`
(a kept repeat), `unverified_challenge_candidates`, `unverified_challenges_blocked`,
`relay_candidates_route_active`, `relays_silenced`; beside them `challenge_repeats_blocked`,
`relay_repeats_blocked`, `relays_capped` (blocked by the cap), `commits_gated`, `commits_inhibited`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from hivebench.waggle.runtime import gate as gates
from hivebench.waggle.runtime.admit import keys
from hivebench.waggle.runtime.records import (
    CLAIM,
    CONFLICT,
    DIRECTION,
    NONE,
    NOVELTY,
    SUPPORT,
    TRACE_PARTS,
    TTL,
    Decisions,
)

# What the formal system counts, every episode (the paper's Table 11 counters first)
COUNTERS = (
    "candidate_writes",
    "deposit_candidates",
    "spatial_repeats_blocked",
    "refreshes",
    "unverified_challenge_candidates",
    "unverified_challenges_blocked",
    "relay_candidates_route_active",
    "relays_silenced",
    "challenge_repeats_blocked",
    "relay_repeats_blocked",
    "relays_capped",
    "commits_gated",
    "commits_inhibited",
)
CHALLENGE, OWN, RELAY = range(3)  # what a candidate write is, from the writer's view
CAPPED = [NOVELTY, SUPPORT, TTL]


@dataclass(frozen=True)
class RelayCap:
    step: int
    min_support: int
    min_novelty: int
    min_ttl: int
    route_protection: bool

    def sources(self, traces: np.ndarray) -> np.ndarray:
        """Per incident trace, whether it may be relayed: support, novelty and TTL at least the minimums."""
        return (
            (traces[:, SUPPORT] >= self.min_support)
            & (traces[:, NOVELTY] >= self.min_novelty)
            & (traces[:, TTL] >= self.min_ttl)
        )


@dataclass(frozen=True)
class Settings:
    """The formal system's parts as a method's `formal` parameters set them (None: switched off)."""

    gate: gates.Gate | None
    refresh_rounds: int | None  # None: no duplicate suppression
    event_once: bool
    relay: RelayCap | None
    inhibition: bool

    @staticmethod
    def of(formal: dict[str, Any]) -> Settings:
        gate, suppression, relay = formal["gate"], formal["suppression"], formal["relay"]
        return Settings(
            gates.Gate(int(gate["channels"]), int(gate["support"]), float(gate["coherence"]))
            if gate["enabled"]
            else None,
            int(suppression["refresh_rounds"]) if suppression["enabled"] else None,
            bool(suppression["enabled"] and suppression["event_once"]),
            RelayCap(
                int(relay["step"]),
                int(relay["min_support"]),
                int(relay["min_novelty"]),
                int(relay["min_ttl"]),
                bool(relay["route_protection"]),
            )
            if relay["enabled"]
            else None,
            bool(formal["inhibition"]["enabled"]),
        )


@dataclass(frozen=True)
class Writes:
    """Candidate writes, in each agent's order of preference: `agent` (block agents) and `trace` (rows, 7)."""

    agent: np.ndarray
    trace: np.ndarray

    @staticmethod
    def of(decisions: Decisions) -> Writes:
        """A record's own deposit, one candidate per writer."""
        writer = np.flatnonzero(decisions.deposits)
        return Writes(writer, decisions.deposit[writer])


class Fingerprints:
    """What each agent has written (the local fingerprints duplicate suppression reads): per (agent,
    claim), the round and direction it last wrote its own evidence, and the claims it has relayed and
    challenged."""

    def __init__(self) -> None:
        self.written: dict[int, tuple[int, int]] = {}
        self.relayed: set[int] = set()
        self.challenged: set[int] = set()


class Formal:
    """The formal system of one block: its settings, the agents' fingerprints, its counters."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.prints = Fingerprints()

    def choose(self, context: Any, writes: Writes) -> np.ndarray:
        """(agents, 7): each agent's one trace this round (NONE: none), the first of its candidates that
        passes, every candidate counted."""
        agents = len(context.live)
        chosen = np.full((agents, len(TRACE_PARTS)), NONE, dtype=np.int64)
        live = context.live[writes.agent]
        agent, trace = writes.agent[live], writes.trace[live]
        if not len(agent):
            return chosen
        what, refuted = self._classify(context, agent, trace)
        settings, prints = self.settings, self.prints
        tally: dict[str, list[int]] = defaultdict(list)
        suppress, cap = settings.refresh_rounds is not None, settings.relay
        key = keys(agent, trace[:, CLAIM])
        ev, adapter = context.evidence, context.runtime.adapter
        moving = dict(zip(keys(ev.agent, ev.claim).tolist()[::-1], ev.moving.tolist()[::-1]))  # its first row's
        route = context.proposal.route[agent]
        rival = route & np.isin(
            keys(agent, adapter.kind(agent, trace[:, CLAIM])), keys(ev.agent, adapter.kind(ev.agent, ev.claim))
        )
        within = self._within_cap(context, agent, trace, what == RELAY)
        taken = np.zeros(agents, dtype=bool)
        for i, (a, k, kind) in enumerate(zip(agent.tolist(), key.tolist(), what.tolist())):
            if kind == CHALLENGE:
                if not refuted[i]:
                    tally["unverified_challenge_candidates"].append(a)
                    if settings.inhibition:
                        tally["unverified_challenges_blocked"].append(a)
                        continue
                else:
                    tally["candidate_writes"].append(a)
                if suppress and k in prints.challenged:
                    tally["challenge_repeats_blocked"].append(a)
                    continue
                if taken[a]:
                    continue
                prints.challenged.add(k)
            elif kind == OWN:
                tally["deposit_candidates"].append(a)
                tally["candidate_writes"].append(a)
                direction = int(trace[i, DIRECTION])
                last = prints.written.get(k)
                repeat = last is not None and last[1] == direction
                if suppress and last is not None:
                    if (settings.event_once and not moving[k]) or (
                        repeat and context.step - last[0] < settings.refresh_rounds
                    ):
                        tally["spatial_repeats_blocked"].append(a)
                        continue
                if taken[a]:
                    continue
                if repeat and suppress:
                    tally["refreshes"].append(a)
                prints.written[k] = (context.step, direction)
            else:
                tally["candidate_writes"].append(a)
                if route[i]:
                    tally["relay_candidates_route_active"].append(a)
                if cap is not None and cap.route_protection and rival[i]:
                    tally["relays_silenced"].append(a)
                    continue
                if suppress and (k in prints.relayed or k in prints.written):
                    tally["relay_repeats_blocked"].append(a)
                    continue
                if not within[i]:
                    tally["relays_capped"].append(a)
                    continue
                if taken[a]:
                    continue
                prints.relayed.add(k)
            taken[a] = True
            chosen[a] = trace[i]
        for name, counted in tally.items():
            context.count(name, counted)
        return chosen

    @staticmethod
    def _classify(context: Any, agent: np.ndarray, trace: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per candidate: a challenge (conflict above the most the agent holds on the claim), the agent's
        own evidence or a relay; and whether the agent's view refutes its claim."""
        incident = context.incident
        key = keys(agent, trace[:, CLAIM])
        held_keys = keys(incident.receiver, incident.traces[:, CLAIM])
        conflict = np.zeros(len(agent), dtype=np.int64)
        in_field = np.isin(key, held_keys)
        if in_field.any():
            order = np.argsort(held_keys, kind="stable")
            sorted_keys = held_keys[order]
            groups, first = np.unique(sorted_keys, return_index=True)
            most = np.maximum.reduceat(incident.traces[order][:, CONFLICT], first)
            at = np.searchsorted(groups, key[in_field])
            conflict[in_field] = most[at]
        challenge = (trace[:, CONFLICT] > 0) & ~(in_field & (trace[:, CONFLICT] <= conflict))
        seen = np.isin(key, keys(context.evidence.agent, context.evidence.claim))
        what = np.where(challenge, CHALLENGE, np.where(seen, OWN, RELAY))
        return what, context.refutes(agent, trace[:, CLAIM])

    def _within_cap(self, context: Any, agent: np.ndarray, trace: np.ndarray, relay: np.ndarray) -> np.ndarray:
        """Per candidate, whether the per-hop cap lets it through: a relay needs an incident trace of its
        claim with the minimums (its source) that bounds it a hop below, support, novelty and TTL at most
        the source's less `step`, conflict at most the source's. The cap deletes a relay, never lowers
        it ("wrapper operations are limited to deleting invalid content"). True for what is no relay,
        and for everything with the cap off."""
        ok = np.ones(len(agent), dtype=bool)
        cap = self.settings.relay
        rows = np.flatnonzero(relay)
        if cap is None or not len(rows):
            return ok
        incident = context.incident
        source = cap.sources(incident.traces)
        held = keys(incident.receiver[source], incident.traces[source, CLAIM])
        order = np.argsort(held, kind="stable")
        held, traces = held[order], incident.traces[source][order]
        key = keys(agent[rows], trace[rows, CLAIM])
        start, stop = np.searchsorted(held, key), np.searchsorted(held, key, side="right")
        counts = stop - start
        candidate = np.repeat(np.arange(len(rows)), counts)  # each (candidate, source of its claim) pair
        at = np.repeat(start - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
        relays, sources = trace[rows][candidate], traces[at]
        fits = (relays[:, CAPPED] <= sources[:, CAPPED] - cap.step).all(axis=1) & (
            relays[:, CONFLICT] <= sources[:, CONFLICT]
        )
        ok[rows] = np.bincount(candidate, weights=fits, minlength=len(rows)) > 0
        return ok

    def commitment(self, context: Any, decisions: Decisions) -> None:
        """Drop each commitment the gate does not pass or the agent's own view refutes (in place)."""
        committer = np.flatnonzero((decisions.commit[:, 0] != NONE) & context.live)
        if not len(committer):
            return
        claim = decisions.commit[committer, 0]
        keep = np.ones(len(committer), dtype=bool)
        if self.settings.gate is not None:
            grouped = gates.claims(context.incident.receiver, context.incident.traces)
            ready = keys(grouped.agent, grouped.claim)[grouped.ready(self.settings.gate)]
            passes = np.isin(keys(committer, claim), ready)
            context.count("commits_gated", committer[~passes])
            keep &= passes
        if self.settings.inhibition:
            refuted = context.refutes(committer, claim) & keep
            context.count("commits_inhibited", committer[refuted])
            keep &= ~refuted
        decisions.commit[committer[~keep]] = NONE
