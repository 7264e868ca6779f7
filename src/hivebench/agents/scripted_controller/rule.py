"""A scripted controller: a fixed rule that reads only each agent's six-part local view and answers
with canonical JSON records, through `ViewRuntime` (the slot a learned controller takes). It is what
the relabelling check (hivebench.engine.conformance.check_relabelling) runs beside FixedSwarm: the
whole view-to-record path, with no model.

Each agent writes the first thing it sees itself (`private_state.evidence`), else relays the
strongest incident trace it can lower (every part one down); it commits to the first claim (by
handle) that two channels carry, with FIELD intent; its task action is its proposal. It proposes; the
runtime's formal system decides what of it goes through (hivebench.waggle.runtime.formal). It never
challenges.
"""

from __future__ import annotations

from typing import Any

from hivebench.waggle.runtime.policy import ViewRuntime


def record_for(view: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"task_action": view["worker_proposal"], "response": None, "deposits": [], "commit": None}
    traces = sorted(view["incident_fields"], key=lambda t: (-t["support"], t["claim"], t["channel"]))
    own = [e for e in view["private_state"]["evidence"] if not e.get("refuted")]
    lowerable = [t for t in traces if min(t["support"], t["novelty"]) >= 1 and t["ttl"] >= 2 and not t["conflict"]]
    if own:
        record["deposits"] = [{"channel": 0, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3, **own[0]}]
    elif lowerable:
        t = lowerable[0]
        record["deposits"] = [
            {**t, "channel": 0, "support": t["support"] - 1, "novelty": t["novelty"] - 1, "ttl": t["ttl"] - 1}
        ]
    channels: dict[int, set[int]] = {}
    for t in traces:
        channels.setdefault(t["claim"], set()).add(t["channel"])
    ready = sorted(claim for claim, held in channels.items() if len(held) >= 2)
    if ready:
        record["commit"] = {"claim": ready[0], "confidence_bin": 2}
        record["execution_intent"] = "FIELD"
    return record


class ScriptedController(ViewRuntime):
    def reply(self, views: list[dict[str, Any]]) -> list[Any]:
        return [record_for(view) for view in views]
