"""The rule teacher, class by class: each of the paper's eight local-situation classes on a view made
for it, the record the appendix describes, admitted whole by the validator on the view alone with the
mode it should derive; and on the runtime's own views, every record admitted whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.ids import canonical_json
from hivebench.train.teacher import CLASSES, record, situation
from hivebench.waggle.runtime.records import Decisions, parse
from hivebench.waggle.study.viewset import ViewBlock

ACTIONS = ("SEND", "HOLD", "ANSWER")
C, D = 1001, 2002  # two claims


def trace(claim: int, channel: int, support: int = 4, novelty: int = 4, conflict: int = 0, ttl: int = 4, **more: Any):
    return {
        "channel": channel,
        "claim": claim,
        "novelty": novelty,
        "support": support,
        "conflict": conflict,
        "ttl": ttl,
        **more,
    }


def view(incident=(), evidence=(), commitment=None, proposal="SEND") -> dict[str, Any]:
    return {
        "budget_bin": 2,
        "incident_fields": list(incident),
        "local_commitment": commitment,
        "private_state": {"evidence": list(evidence)},
        "task_contract": {"actions": list(ACTIONS), "benchmark": "Silo-Bench", "rounds": 9, "task": "III-26"},
        "worker_proposal": proposal,
    }


CASES = {
    # a claim the agent committed to, refuted by its own view: a challenge, the commitment dropped
    "reopen": (
        view([trace(C, 7), trace(C, 9)], [{"claim": C, "refuted": True}], {"claim": C, "confidence_bin": 3}),
        "challenge",
    ),
    # an incident claim the agent's own view refutes, not committed to: a challenge
    "conflict": (view([trace(C, 7)], [{"claim": C, "refuted": True}]), "challenge"),
    # two channels, support 8, no conflict: ready; a commitment
    "synthesis": (view([trace(C, 7), trace(C, 9)]), "synthesize"),
    # its own evidence of a claim nothing incident carries: a first-hand deposit
    "fresh": (view([trace(C, 7, support=2)], [{"claim": D, "direction": "N"}]), "deposit"),
    # one channel, support 3: not ready; passed on, one lower in novelty, support and TTL
    "relay": (view([trace(C, 7, support=3, novelty=2, ttl=3)]), "relay"),
    # nothing to write and a waiting proposal: WAIT
    "wait": (view([trace(C, 7, support=1)], proposal="HOLD"), "wait"),
    # a trace too weak to pass on or commit to: private work
    "unresolved": (view([trace(C, 7, support=1)]), "private"),
    # nothing incident, nothing of its own: private work
    "private": (view(), "private"),
}


def admitted(v: dict[str, Any], rec: dict[str, Any]) -> tuple[str | None, str]:
    """(the validator's code, None where it cut nothing; the derived mode) on the view alone."""
    block = ViewBlock([v], ACTIONS)
    decisions = Decisions.private(block.proposal)
    decisions.put(0, parse(rec, ACTIONS))
    return block.check(decisions).codes[0], block.modes([canonical_json(rec)])[0]


def test_every_class_has_its_case():
    assert set(CASES) == set(CLASSES)


@pytest.mark.parametrize("kind", CLASSES)
def test_the_teacher_answers_each_situation_class_and_the_validator_admits_it_whole(kind):
    v, mode = CASES[kind]
    assert situation(v)[0] == kind
    rec = record(v)
    assert rec["task_action"] == v["worker_proposal"]  # private work goes on
    assert admitted(v, rec) == (None, mode)


def test_what_each_class_writes():
    assert record(CASES["reopen"][0])["commit"] is None
    assert record(CASES["reopen"][0])["deposits"][0] == {
        "channel": 0,
        "claim": C,
        "novelty": 4,
        "support": 4,
        "conflict": 4,
        "ttl": 4,
    }
    assert record(CASES["synthesis"][0])["commit"] == {"claim": C, "confidence_bin": 2}  # support 8
    assert record(CASES["fresh"][0])["deposits"][0]["direction"] == "N"
    relayed = record(CASES["relay"][0])["deposits"][0]
    assert (relayed["novelty"], relayed["support"], relayed["ttl"], relayed["channel"]) == (1, 2, 2, 0)
    assert record(CASES["wait"][0])["execution_intent"] == "WAIT"


def test_a_challenge_the_field_already_holds_at_full_strength_is_not_written_again():
    v = view([trace(C, 7, conflict=4)], [{"claim": C, "refuted": True}])
    rec = record(v)
    assert situation(v)[0] == "conflict" and rec["deposits"] == []
    assert admitted(v, rec) == (None, "private")


def test_the_gate_decides_readiness_as_the_runtime_does():
    seven = view([trace(C, 7, support=4), trace(C, 9, support=3)])  # support 7: not ready
    assert situation(seven)[0] == "relay"
    split = view([trace(C, 7, direction="N"), trace(C, 9, direction="S")])  # coherence 0
    assert situation(split)[0] == "relay"
    one_channel = view([trace(C, 7), trace(C, 7, support=4)])
    assert situation(one_channel)[0] != "synthesis"


def test_on_the_runtimes_own_views_every_record_is_admitted_whole():
    config = {
        "tasks": {
            "pursuit": {"kind": "swarmbench", "task": "pursuit", "rounds": 20},
            "silo": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9, "change_at": 5},
        },
        "methods": {"rule": {"kind": "scripted_controller", "keep_views": True}},
        "studies": {"s": {"tasks": ["pursuit", "silo"], "methods": ["rule"], "populations": [8], "seeds": 2}},
    }
    seen: set[str] = set()
    for block in all_blocks(validate(config, "teacher.yaml"), Path("."))["s"]:
        for episode in play_block(list(block.cells())):
            rows = episode.table("views").to_pylist()
            views = [json.loads(row["view"]) for row in rows]
            actions = tuple(json.loads(rows[0]["actions"]))
            block_of_views = ViewBlock(views, actions)
            decisions = Decisions.private(block_of_views.proposal)
            for agent, v in enumerate(views):
                decisions.put(agent, parse(record(v), actions))
                seen.add(situation(v)[0])
            assert block_of_views.check(decisions).codes == [None] * len(views)
    assert {"fresh", "relay", "synthesis", "private", "conflict"} <= seen
