"""The validator: a record's parts checked against the agent's local view, the invalid ones deleted
(the conservative projection: the action falls back to the private proposal, an inconsistent deposit
or commitment is dropped), and the record's mode derived.

"The validator derives the mode after checking consistency with the local view. In particular, a relay
must match incident evidence, a challenge must contain positive conflict, and an abstaining wait cannot
write or commit." Here:

- the action must be legal for the agent now;
- a deposit's claim is one the agent sees itself (its evidence) or holds on an incident channel (a
  relay), never one it has not met; its channel is 0 (every contact) or a handle it holds;
- a relay is bounded by one incident trace of its claim ("relayable without increasing trace
  components"): novelty, support and conflict at most that trace's, TTL below it (so a trace cannot
  bounce between two agents for ever);
- novelty 4 marks first-hand evidence: a relay carries less (else any relay of a first-hand trace
  would pass for its writer's own, and Silo-Bench's compilation spares a port that reports, first
  hand, that it holds every shard);
- a trace whose conflict is positive and above what the agent holds on the claim is a challenge: that
  the agent verifies it is the formal system's verified-conflict inhibition (formal.py), not the
  validator's;
- a commitment's claim is one the agent sees or holds;
- WAIT writes nothing and commits to nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from hivebench.waggle.runtime.adapter import Evidence
from hivebench.waggle.runtime.field import Incident
from hivebench.waggle.runtime.records import (
    BIN_MAX,
    CHALLENGE,
    CHANNEL,
    CLAIM,
    CONFLICT,
    DEPOSIT,
    NONE,
    NOVELTY,
    PRIVATE_WORK,
    RELAY,
    SUPPORT,
    SYNTHESIZE,
    TTL,
    WAIT,
    WAITING,
    Decisions,
)

KEY = 1 << 32  # (agent, claim) as one integer: agent * KEY + claim
# Why the local view refuses part of a record: a code per rejection (the schema's: records.CODES)
REFUSALS = {
    "action": "a task action the agent may not take now",
    "claim": "a claim the agent neither sees nor holds on an incident channel (a deposit or a commitment)",
    "channel": "a channel the agent does not hold",
    "relay": "a relay no single incident trace of its claim bounds (novelty, support, conflict at most, TTL below)",
    "first_hand": "a relay that keeps novelty 4, which marks what the writer sees itself",
    "conflict": "a claim its own view refutes, written without conflict (a challenge without positive conflict)",
    "wait": "a WAIT that writes or commits",
}


@dataclass(frozen=True)
class Admitted:
    decisions: Decisions
    invalid: np.ndarray  # (agents,) bool: something in the record was deleted or replaced
    mode: np.ndarray  # (agents,) an index into MODES
    relay: np.ndarray  # (agents,) bool: its deposit relays incident evidence
    codes: list[str | None]  # per agent, why its record was cut (REFUSALS), or None


def keys(agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
    return agent.astype(np.int64) * KEY + claim


def found(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per value, whether it is in `sorted_keys` (ascending, unique) and where (np.isin without sorting
    the keys again)."""
    if not len(sorted_keys):
        return np.zeros(len(values), dtype=bool), np.zeros(len(values), dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, values), len(sorted_keys) - 1)
    return sorted_keys[at] == values, at


def _bounded(trace: np.ndarray, key: np.ndarray, held: np.ndarray, traces: np.ndarray) -> np.ndarray:
    """Per deposit (its `key`), whether one incident trace of its claim (`held`: the sorted keys of
    `traces`) bounds it: novelty, support and conflict at most that trace's, TTL below it."""
    start, stop = np.searchsorted(held, key), np.searchsorted(held, key, side="right")
    counts = stop - start
    deposit = np.repeat(np.arange(len(key)), counts)
    row = np.repeat(start - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
    parts = [NOVELTY, SUPPORT, CONFLICT]
    fits = (trace[deposit][:, parts] <= traces[row][:, parts]).all(axis=1) & (trace[deposit, TTL] < traces[row, TTL])
    return np.bincount(deposit, weights=fits, minlength=len(key)) > 0


def admit(
    decisions: Decisions,
    proposal: np.ndarray,
    legal: np.ndarray,
    evidence: Evidence,
    incident: Incident,
    refutes: Callable[[np.ndarray, np.ndarray], np.ndarray],  # per (agent, claim), the adapter's
    holds: Callable[[np.ndarray, np.ndarray], np.ndarray],  # per (agent, handle): a channel it holds
) -> Admitted:
    d = replace(
        decisions, action=decisions.action.copy(), deposit=decisions.deposit.copy(), commit=decisions.commit.copy()
    )
    agents = np.arange(len(d.action))
    illegal = ~legal[agents, d.action]
    d.action[illegal] = proposal[illegal]

    own = np.unique(keys(evidence.agent, evidence.claim))
    held = keys(incident.receiver, incident.traces[:, CLAIM])
    order = np.argsort(held, kind="stable")
    held, traces = held[order], incident.traces[order]
    group, first = np.unique(held, return_index=True)
    most = np.maximum.reduceat(traces, first, axis=0) if len(held) else traces[:0]

    writer = np.flatnonzero(d.deposits)
    trace = d.deposit[writer]
    key = keys(writer, trace[:, CLAIM])
    seen = found(own, key)[0]
    in_field, at = found(group, key)
    bound = most[at] if len(group) else np.zeros_like(trace)
    # conflict beyond what the agent holds on the claim is its own challenge; a relay passes on what it holds
    challenge = (trace[:, CONFLICT] > 0) & ~(in_field & (trace[:, CONFLICT] <= bound[:, CONFLICT]))
    relay = ~seen & in_field & ~challenge
    within = _bounded(trace, key, held, traces)
    refuted = refutes(writer, trace[:, CLAIM]) if len(writer) else np.zeros(0, dtype=bool)
    channel_ok = trace[:, CHANNEL] == 0
    if not channel_ok.all():
        channel_ok[~channel_ok] = holds(writer[~channel_ok], trace[~channel_ok, CHANNEL])
    # each deposit's first failing check, in this order
    failing = [
        ("claim", ~(seen | in_field)),
        ("channel", ~channel_ok),
        ("relay", relay & ~within),
        ("first_hand", relay & (trace[:, NOVELTY] >= BIN_MAX)),
        ("conflict", (trace[:, CONFLICT] == 0) & refuted),  # what the writer's own view refutes, unchallenged
        ("wait", d.intent[writer] == WAIT),
    ]
    ok = ~np.any([bad for _, bad in failing], axis=0) if len(writer) else np.ones(0, dtype=bool)
    d.deposit[writer[~ok]] = NONE

    committer = np.flatnonzero(d.commit[:, 0] != NONE)
    ckey = keys(committer, d.commit[committer, 0])
    known = found(own, ckey)[0] | found(group, ckey)[0]
    waiting = d.intent[committer] == WAIT
    d.commit[committer[~known | waiting]] = NONE

    codes: list[str | None] = [None] * len(agents)
    for code, who in [
        ("action", np.flatnonzero(illegal)),
        *((code, writer[bad]) for code, bad in failing),
        ("claim", committer[~known]),
        ("wait", committer[waiting]),
    ][::-1]:  # the first failing check of each agent's record wins: written last
        for agent in who.tolist():
            codes[agent] = code
    invalid = np.array([code is not None for code in codes], dtype=bool)
    is_relay = np.zeros(len(agents), dtype=bool)
    is_relay[writer[ok & relay]] = True
    mode = np.full(len(agents), PRIVATE_WORK)
    mode[d.intent == WAIT] = WAITING
    mode[d.deposits] = DEPOSIT
    mode[is_relay] = RELAY
    mode[d.commit[:, 0] != NONE] = SYNTHESIZE
    mode[d.deposits & (d.deposit[:, CONFLICT] > 0)] = CHALLENGE
    return Admitted(d, invalid, mode, is_relay, codes)
