"""The rule teacher: an offline teacher that answers each of the paper's eight local-situation classes
the way its training appendix describes them ("deposit fresh evidence, relay admissible evidence with
a lower TTL, challenge verified conflict, reopen on contradiction, commit on readiness, WAIT or private
otherwise"), reading nothing but the six-part local view.

A view's class is the first that holds, in this order (a view may fit several; the record answers
the first):

- reopen: the agent's commitment (in the view, or the one it held when it last decided: the runtime
  reopens a contradicted commitment before the view) is to a claim its own view refutes (verified
  counterevidence): a challenge on the claim (conflict 4, unless the field holds one that strong
  already), no commitment;
- conflict: an incident claim its own view refutes, not committed to: a challenge on it, as for reopen;
- synthesis: an incident claim passes the candidate-ready gate (the runtime's: two channels, support
  8, no conflict, coherence 0.6): a commitment to it, its confidence from its support;
- fresh: its own evidence of a claim no incident channel carries: a first-hand deposit (novelty 4);
- relay: an incident trace the runtime's per-hop cap lets pass (novelty, support and TTL at the relay
  minimums or above, no conflict): the trace passed on, each of novelty, support and TTL one lower;
- wait: its proposal is the suite's wait (Silo-Bench's and AgentsNet's HOLD, SwarmBench's STAY): WAIT;
- unresolved: incident traces, none of the above: its private proposal;
- private: nothing incident, nothing of its own to write: its private proposal.

Every record keeps the proposal's task action ("continue useful private work").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.waggle.runtime.gate import Gate, claims
from hivebench.waggle.runtime.records import BIN_MAX
from hivebench.waggle.runtime.view import trace_values

CLASSES = ("private", "unresolved", "fresh", "relay", "conflict", "reopen", "synthesis", "wait")  # the paper's order
WAIT_ACTIONS = frozenset({"HOLD", "STAY"})  # the adapters' wait actions (Silo-Bench, AgentsNet; SwarmBench)
TTL = 4  # the lifetime of what the teacher writes itself
RELAY_MIN = {"novelty": 1, "support": 2, "ttl": 2}  # the runtime's relay minimums (relay.min_*)
GATE = Gate()  # the runtime's candidate-ready gate, its defaults


def situation(view: dict[str, Any], held_before: int | None = None) -> tuple[str, dict[str, Any] | None]:
    """(the view's class, what the record acts on: the claim, trace or evidence item; None for a class
    without one). `held_before`: the claim the agent was committed to when it last decided, where the
    caller knows it: the runtime reopens a commitment that verified counterevidence contradicts before
    it builds the view, which then shows the conflict and not the commitment."""
    incident = view["incident_fields"]
    evidence = view["private_state"]["evidence"]
    refuted = {e["claim"] for e in evidence if e.get("refuted")}
    held = view["local_commitment"]
    for claim in (held and held["claim"], held_before):
        if claim is not None and claim in refuted:
            return "reopen", {"claim": claim}
    conflicted = sorted(refuted)
    if conflicted:
        return "conflict", {"claim": conflicted[0]}
    ready = ready_claims(incident)
    ready = [r for r in ready if r["claim"] not in refuted]
    if ready:
        return "synthesis", ready[0]
    carried = {t["claim"] for t in incident}
    fresh = [e for e in evidence if not e.get("refuted") and e["claim"] not in carried]
    if fresh:
        return "fresh", fresh[0]
    relayable = [
        t for t in incident if t["conflict"] == 0 and all(t[part] >= least for part, least in RELAY_MIN.items())
    ]
    if relayable:
        return "relay", max(relayable, key=lambda t: (t["support"], t["novelty"], t["ttl"], -t["claim"], -t["channel"]))
    if view["worker_proposal"] in WAIT_ACTIONS:
        return "wait", None
    return ("unresolved" if incident else "private"), None


def ready_claims(incident: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The incident claims the candidate-ready gate passes, each with its total support, most first."""
    if not incident:
        return []
    rows = np.array([trace_values(t) for t in incident], dtype=np.int64)
    grouped = claims(np.zeros(len(rows), dtype=np.int64), rows)
    ready = grouped.ready(GATE)
    found = [{"claim": int(c), "support": int(s)} for c, s in zip(grouped.claim[ready], grouped.support[ready])]
    return sorted(found, key=lambda r: (-r["support"], r["claim"]))


def record(view: dict[str, Any], held_before: int | None = None) -> dict[str, Any]:
    """The teacher's canonical record for a view (`held_before`: as for `situation`)."""
    kind, subject = situation(view, held_before)
    out: dict[str, Any] = {"task_action": view["worker_proposal"], "response": None, "deposits": [], "commit": None}
    if kind in ("reopen", "conflict"):
        assert subject is not None
        strongest = max((t["conflict"] for t in view["incident_fields"] if t["claim"] == subject["claim"]), default=0)
        if strongest < BIN_MAX:  # a challenge says more than the field holds (at the most, it is there already)
            out["deposits"] = [trace(subject["claim"], conflict=BIN_MAX)]
    elif kind == "synthesis":
        assert subject is not None
        out["commit"] = {
            "claim": subject["claim"],
            "confidence_bin": min(BIN_MAX, subject["support"] // GATE.support + 1),
        }
    elif kind == "fresh":
        assert subject is not None
        out["deposits"] = [trace(subject["claim"], direction=subject.get("direction"))]
    elif kind == "relay":
        assert subject is not None
        lower = {part: subject[part] - 1 for part in ("novelty", "support", "ttl")}
        out["deposits"] = [{**subject, **lower, "channel": 0}]
    elif kind == "wait":
        out["execution_intent"] = "WAIT"
    return out


def trace(claim: int, conflict: int = 0, direction: str | None = None) -> dict[str, Any]:
    """A trace the teacher writes first hand, on every contact (channel 0)."""
    written = {"channel": 0, "claim": claim, "novelty": BIN_MAX, "support": BIN_MAX, "conflict": conflict, "ttl": TTL}
    return written if direction is None else {**written, "direction": direction}
