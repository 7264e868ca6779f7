"""An agent's local view as a controller reads it: "exactly six components: a task contract, private
state, benchmark-native private proposal, incident fields, local commitment, and remaining-budget
bin", and the check that no identity, roster, population size or global state is in it.

"Recursive schema validation rejects identity, roster, population-size, non-neighbor, global-state,
and global-transcript keys."
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.waggle.runtime.records import BIN_MAX, COMPASS, DIRECTION, NONE, TRACE_PARTS, forbidden_keys

PARTS = ("task_contract", "private_state", "worker_proposal", "incident_fields", "local_commitment", "budget_bin")


def budget_bin(step: int, rounds: int) -> int:
    """The remaining rounds in five equal bins: 4 in the episode's first fifth, 0 in its last (over 10
    rounds: 4, 4, 3, 3, 2, 2, 1, 1, 0, 0)."""
    return BIN_MAX - min(BIN_MAX, (BIN_MAX + 1) * step // max(rounds, 1))


def trace_json(trace: np.ndarray) -> dict[str, Any]:
    record = {part: int(v) for part, v in zip(TRACE_PARTS[:DIRECTION], trace)}
    if trace[DIRECTION] != NONE:
        record["direction"] = COMPASS[int(trace[DIRECTION])]
    return record


def trace_values(record: dict[str, Any]) -> list[int]:
    """A trace as a view shows it, back to its seven numbers (trace_json's inverse)."""
    direction = COMPASS.index(record["direction"]) if "direction" in record else NONE
    return [*(int(record[part]) for part in TRACE_PARTS[:DIRECTION]), direction]


def local_view(
    contract: dict[str, Any],
    private: dict[str, Any],
    proposal: str,
    incident: np.ndarray,
    commitment: np.ndarray,
    budget: int,
) -> dict[str, Any]:
    """The six parts; `incident` (records, 7) in the order the field shuffled them; `commitment`
    (claim, confidence) or NONE."""
    held = None if commitment[0] == NONE else {"claim": int(commitment[0]), "confidence_bin": int(commitment[1])}
    view = dict(zip(PARTS, (contract, private, proposal, [trace_json(t) for t in incident], held, budget)))
    forbidden = forbidden_keys(view)
    if forbidden:
        raise ValueError(f"a local view holds forbidden keys: {forbidden}")
    return view
