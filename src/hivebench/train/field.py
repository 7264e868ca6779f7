"""The field predictor's targets (the paper's Eq. 6) and the transition sampler's strata.

"Hist_n, Hist_s, and Hist_x are six-way normalized histograms with one null class and bins 0–4;
Hist_T has one null class and TTL bins 0–8. A view with no incident traces places all histogram mass
on the null class. Readiness has two classes (not-ready/ready), and commitment has six classes (empty
or confidence 0–4), so the target width is independent of population size and incident ordering and
invariant to opaque aliases." All of them are read from the next view ℓ_{t+1} alone.

Readiness is the runtime's candidate-ready gate on the next view's incident traces (a claim its own
view refutes is not ready, as the teacher reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hivebench.train.teacher import ready_claims
from hivebench.waggle.runtime.records import BIN_MAX, TTL_MAX

# target -> its classes' count (the null class first in the histograms; readiness not/ready;
# commitment empty, then confidence 0-4)
HISTOGRAMS = {"novelty": BIN_MAX + 2, "support": BIN_MAX + 2, "conflict": BIN_MAX + 2, "ttl": TTL_MAX + 2}
STATES = {"readiness": 2, "commitment": BIN_MAX + 2}


@dataclass(frozen=True)
class Targets:
    histograms: dict[str, np.ndarray]  # target -> (classes,) a distribution
    states: dict[str, int]  # target -> its class


def targets(next_view: dict[str, Any]) -> Targets:
    """Eq. 6 on the next view."""
    incident = next_view["incident_fields"]
    histograms = {}
    for part, width in HISTOGRAMS.items():
        mass = np.zeros(width)
        if not incident:
            mass[0] = 1.0
        else:
            # bin b is class b + 1 (TTL's bins 0-8 too: a trace's TTL is 1-8 as written, 0 once it expires)
            np.add.at(mass, [min(t[part], width - 2) + 1 for t in incident], 1.0)
            mass /= len(incident)
        histograms[part] = mass
    refuted = {e["claim"] for e in next_view["private_state"]["evidence"] if e.get("refuted")}
    ready = any(r["claim"] not in refuted for r in ready_claims(incident))
    held = next_view["local_commitment"]
    return Targets(
        histograms, {"readiness": int(ready), "commitment": 0 if held is None else 1 + held["confidence_bin"]}
    )


def eventful(view: dict[str, Any], record: dict[str, Any], next_view: dict[str, Any]) -> bool:
    """An update the sampler draws as eventful ("verified conflict, challenge, commitment, reopening,
    and expiry transitions"): the view holds verified conflict (its own evidence refutes a claim), the
    record challenges (positive conflict) or commits, or the commitment changes by the next view (one
    made, reopened, expired or switched)."""
    verified = any(e.get("refuted") for e in view["private_state"]["evidence"])
    challenge = any(d["conflict"] > 0 for d in record["deposits"])
    held = [(v["local_commitment"] or {}).get("claim") for v in (view, next_view)]
    return verified or challenge or record["commit"] is not None or held[0] != held[1]


def stratified(eventful_flags: np.ndarray, count: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """`count` transition indices: round(share * count) drawn from the eventful ones and the rest from
    the ordinary, each stratum without replacement while it lasts (then again from its start); one
    stratum empty, all from the other."""
    eventful_rows, ordinary_rows = np.flatnonzero(eventful_flags), np.flatnonzero(~eventful_flags)
    wanted = round(share * count) if len(eventful_rows) and len(ordinary_rows) else count * bool(len(eventful_rows))
    drawn = [_draw(eventful_rows, wanted, rng), _draw(ordinary_rows, count - wanted, rng)]
    return np.concatenate(drawn).astype(np.int64)


def _draw(rows: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    passes = -(-count // len(rows))
    return np.concatenate([rng.permutation(rows) for _ in range(passes)])[:count]
