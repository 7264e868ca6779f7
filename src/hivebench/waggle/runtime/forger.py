"""An adversary on the trace field (an `adversarial` fault of a method on the Waggle runtime,
hivebench.perturb): from its onset, each adversarial agent's record carries a forged trace in place
of what its controller wrote, after the formal system and before the validator, as a controller's
record reaches it. Each forgery breaks a local rule the validator enforces (admit.py): a relay
marked first-hand (novelty 4) of a claim the agent holds but does not see, or, where it holds none,
a claim it neither sees nor holds. The validator deletes them (counted in `invalid_records`); the
summary's `forged_traces` counts what was forged."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from hivebench.waggle.runtime.admit import keys
from hivebench.waggle.runtime.records import (
    BIN_MAX,
    CHANNEL,
    CLAIM,
    CLAIM_MAX,
    CONFLICT,
    DIRECTION,
    NONE,
    NOVELTY,
    SUPPORT,
    TTL,
    TTL_MAX,
    Decisions,
)


class Forger:
    """Forges the records of `agents()` (the adversarial agents this round)."""

    def __init__(self, agents: Any, episodes: int, n: int):
        self.agents, self.n = agents, n
        self.forged = np.zeros(episodes, dtype=np.int64)

    def forge(self, context: Any, decisions: Decisions) -> Decisions:
        forgers = np.flatnonzero(self.agents() & context.live)
        if not len(forgers):
            return decisions
        own = set(keys(context.evidence.agent, context.evidence.claim).tolist())
        held = context.incident.traces[:, CLAIM]
        deposit = decisions.deposit.copy()
        for agent in forgers.tolist():
            mine = held[context.incident.receiver == agent]
            relayable = [c for c in mine.tolist() if int(keys(np.array([agent]), np.array([c]))[0]) not in own]
            trace = deposit[agent]
            trace[:] = NONE
            trace[[CHANNEL, NOVELTY, SUPPORT, CONFLICT, TTL]] = (0, BIN_MAX, BIN_MAX, 0, TTL_MAX)
            trace[DIRECTION] = NONE
            if relayable:  # passed on as first-hand evidence
                trace[CLAIM] = relayable[0]
            else:  # a claim the agent has never met
                trace[CLAIM] = next(
                    c
                    for c in range(CLAIM_MAX, 0, -1)
                    if c not in set(mine.tolist()) and int(keys(np.array([agent]), np.array([c]))[0]) not in own
                )
        self.forged += np.bincount(forgers // self.n, minlength=len(self.forged))
        return replace(decisions, deposit=deposit)

    def summary(self, episode: int) -> dict[str, int]:
        return {"forged_traces": int(self.forged[episode])}
