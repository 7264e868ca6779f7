"""The identifier-free decision summary ρ(d): "12 factorized labels: task-action class, execution
intent, derived semantic act, communication act, claim source, channel scope, novelty, support,
conflict, TTL, commitment action, and commitment confidence. Every inapplicable factor has an explicit
null class" (class 0 of each here).

The paper names the factors, not their classes; these are hivebench's, read from the record and the
view it answers (nothing in them names a channel or a claim, so an orbit partner has the same ones):

- task_action: the proposal kept, the suite's wait action instead, or another action;
- execution_intent: the record's (AUTO, its omission, is null);
- semantic_act: the mode the validator derives on the view (null: a record the schema refuses);
- communication_act: the deposit's kind: first hand, relay (the validator's: bounded by an incident
  trace), challenge (positive conflict); null without a deposit;
- claim_source: where the claim the record acts on (its deposit's, else its commitment's) is in the
  view: the agent's own evidence, an incident trace, both, or only its held commitment;
- channel_scope: the deposit on every contact (channel 0) or on one channel;
- novelty, support, conflict (bins 0-4), ttl (1-8): the deposit's;
- commitment_action: adopt (none held), renew (the held claim), switch (another claim); null: no
  commitment written (the held one stands);
- commitment_confidence: the written commitment's bin (0-4).
"""

from __future__ import annotations

from typing import Any

from hivebench.train.teacher import WAIT_ACTIONS
from hivebench.waggle.runtime.records import BIN_MAX, INTENTS, MODES, TTL_MAX, Decisions, RecordError, parse
from hivebench.waggle.study.viewset import ViewBlock

NULL = "null"
BINS = tuple(str(b) for b in range(BIN_MAX + 1))
# factor -> its classes, the null class first
FACTORS: dict[str, tuple[str, ...]] = {
    "task_action": (NULL, "proposal", "wait", "other"),
    "execution_intent": (NULL, *INTENTS[1:]),
    "semantic_act": (NULL, *MODES),
    "communication_act": (NULL, "first_hand", "relay", "challenge"),
    "claim_source": (NULL, "evidence", "incident", "evidence_and_incident", "commitment"),
    "channel_scope": (NULL, "all", "one"),
    "novelty": (NULL, *BINS),
    "support": (NULL, *BINS),
    "conflict": (NULL, *BINS),
    "ttl": (NULL, *(str(t) for t in range(1, TTL_MAX + 1))),
    "commitment_action": (NULL, "adopt", "renew", "switch"),
    "commitment_confidence": (NULL, *BINS),
}
NAMES = tuple(FACTORS)


def factors(view: dict[str, Any], record: dict[str, Any], actions: tuple[str, ...]) -> list[int]:
    """ρ(d): each factor's class index (FACTORS' order) for `record` answering `view`."""
    return factors_of(ViewBlock([view], actions), 0, record)


def factors_of(block: ViewBlock, agent: int, record: dict[str, Any]) -> list[int]:
    """ρ(d) of agent `agent`'s view in `block` (a block of many views checks them at once elsewhere)."""
    view, actions = block.views[agent], block.actions
    out = dict.fromkeys(NAMES, NULL)
    try:
        action, deposit, commit, intent, _ = parse(record, actions)
    except RecordError:
        return [0] * len(NAMES)  # nothing of a record the schema refuses is read
    decisions = Decisions.private(block.proposal)
    decisions.put(agent, (action, deposit, commit, intent, None))
    admitted = block.check(decisions)
    task = actions[action]
    out["task_action"] = "proposal" if task == view["worker_proposal"] else "wait" if task in WAIT_ACTIONS else "other"
    out["execution_intent"] = INTENTS[intent] if intent else NULL
    out["semantic_act"] = MODES[int(admitted.mode[agent])]
    held = view["local_commitment"]
    if record.get("deposits"):
        trace = record["deposits"][0]
        conflict = trace["conflict"] > 0
        out["communication_act"] = "challenge" if conflict else "relay" if admitted.relay[agent] else "first_hand"
        out["channel_scope"] = "all" if trace["channel"] == 0 else "one"
        for part in ("novelty", "support", "conflict", "ttl"):
            out[part] = str(trace[part])
    if record.get("commit") is not None:
        written = record["commit"]["claim"]
        out["commitment_action"] = "adopt" if held is None else "renew" if held["claim"] == written else "switch"
        out["commitment_confidence"] = str(record["commit"]["confidence_bin"])
    subject = record["deposits"][0]["claim"] if record.get("deposits") else (record.get("commit") or {}).get("claim")
    if subject is not None:
        out["claim_source"] = claim_source(view, subject)
    return [FACTORS[name].index(out[name]) for name in NAMES]


def claim_source(view: dict[str, Any], claim: int) -> str:
    """Where `claim` is in the view; null where nowhere (the validator refuses such a claim)."""
    own = any(e["claim"] == claim for e in view["private_state"]["evidence"])
    incident = any(t["claim"] == claim for t in view["incident_fields"])
    if own or incident:
        return "evidence_and_incident" if own and incident else "evidence" if own else "incident"
    held = view["local_commitment"]
    return "commitment" if held is not None and held["claim"] == claim else NULL
