"""Orbit pairs (the paper's SCD, Eq. 5): "For each decision example and epoch, we sample a view-local
bijection over opaque channel and claim identifiers together with an independent incident-record
permutation. The mapping is applied consistently to every schema-designated identifier occurrence in
the private proposal and evidence, incident traces, local-event claim fields, commitment, and
structured teacher record; free-form task content and native action tokens are unchanged. ... A pair is
admitted only when schema validation and all local freshness, relay, challenge, and target-matching
relations agree with those of the source pair."

The bijection and permutation are the view-set orbit's (`viewset.orbit`), drawn from (training seed,
epoch, example); the teacher record goes through the same maps (`viewset.relabel`). `relations` is
what admission compares: the validator's verdict on the record (what it cut, the mode it derives, a
relay's bound), the 12 factors (which hold the freshness of a deposit's claim, its source and scope),
whether the claim the record acts on is refuted by the agent's own view (a challenge's verification)
and held, and the identifier-free values of the incident traces that carry it (target matching).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hivebench.train.factors import claim_source, factors_of
from hivebench.waggle.runtime.records import Decisions, parse
from hivebench.waggle.study.viewset import ViewBlock, orbit, relabel

Pair = tuple[dict[str, Any], dict[str, Any]]  # a view and its teacher record


def partner(view: dict[str, Any], record: dict[str, Any], rng: np.random.Generator) -> Pair:
    """The view relabelled and reshuffled, and the record through the same maps."""
    moved, maps = orbit(view, rng)
    return moved, relabel(record, maps)


def relations(view: dict[str, Any], record: dict[str, Any], actions: tuple[str, ...]) -> tuple[Any, ...]:
    """What a record says of its view without naming an identifier (equal on a view and its orbit
    partner when the pair is sound)."""
    block = ViewBlock([view], actions)
    decisions = Decisions.private(block.proposal)
    decisions.put(0, parse(record, actions))
    admitted = block.check(decisions)
    subject = record["deposits"][0]["claim"] if record["deposits"] else (record["commit"] or {}).get("claim")
    refuted = {e["claim"] for e in view["private_state"]["evidence"] if e.get("refuted")}
    held = view["local_commitment"]
    carried = sorted(
        tuple(v for k, v in sorted(t.items()) if k not in ("channel", "claim"))
        for t in view["incident_fields"]
        if t["claim"] == subject
    )
    return (
        admitted.codes[0],
        int(admitted.mode[0]),
        bool(admitted.relay[0]),
        tuple(factors_of(block, 0, record)),
        None if subject is None else claim_source(view, subject),
        subject in refuted,
        held is not None and held["claim"] == subject,
        tuple(carried),
    )


def admitted(source: Pair, moved: Pair, actions: tuple[str, ...]) -> bool:
    """Whether `moved` is an orbit partner of `source` that training may use: its record passes the
    schema and every relation agrees with the source's."""
    try:
        return relations(*moved, actions) == relations(*source, actions)
    except ValueError:  # the schema refuses the moved record (a RecordError), or its view is not whole
        return False


def rng_for(seed: int, epoch: int, example: int) -> np.random.Generator:
    """The draw of one example's partner in one epoch: the same in every arm of a factorial ("orbit
    transforms follow the same deterministic seed schedule")."""
    return np.random.default_rng([seed, epoch, example, 0x0B17])
