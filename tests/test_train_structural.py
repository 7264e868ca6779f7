"""Stage two's parts that need no model: the 12 factors against hand-labelled records, orbit pairs and
their admission, Eq. 6's targets on hand-made next views, the transition strata, and the losses of
heads.py against hand computation."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
import torch
from test_train_teacher import ACTIONS, CASES, C, D, trace, view
from test_train_teacher import admitted as validated

from hivebench.train.factors import FACTORS, NAMES, factors
from hivebench.train.field import eventful, stratified, targets
from hivebench.train.heads import factor_terms, field_loss, symmetric_kl
from hivebench.train.orbit import admitted, partner, rng_for
from hivebench.train.teacher import record as teacher_record
from hivebench.waggle.runtime.records import parse

NULL = dict.fromkeys(NAMES, "null")


def labelled(**named: str) -> list[int]:
    return [FACTORS[name].index({**NULL, **named}[name]) for name in NAMES]


deposit = {"channel_scope": "all", "ttl": "4"}
HAND = {  # the teacher's record on each class's view, labelled by hand
    "reopen": labelled(task_action="proposal", semantic_act="challenge", communication_act="challenge",
                       claim_source="evidence_and_incident", novelty="4", support="4", conflict="4", **deposit),
    "conflict": labelled(task_action="proposal", semantic_act="challenge", communication_act="challenge",
                         claim_source="evidence_and_incident", novelty="4", support="4", conflict="4", **deposit),
    "synthesis": labelled(task_action="proposal", semantic_act="synthesize", claim_source="incident",
                          commitment_action="adopt", commitment_confidence="2"),
    "fresh": labelled(task_action="proposal", semantic_act="deposit", communication_act="first_hand",
                      claim_source="evidence", novelty="4", support="4", conflict="0", **deposit),
    "relay": labelled(task_action="proposal", semantic_act="relay", communication_act="relay",
                      claim_source="incident", channel_scope="all", novelty="1", support="2", conflict="0", ttl="2"),
    "wait": labelled(task_action="proposal", execution_intent="WAIT", semantic_act="wait"),
    "unresolved": labelled(task_action="proposal", semantic_act="private"),
    "private": labelled(task_action="proposal", semantic_act="private"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_factors_of_the_teachers_record_are_the_hand_labelled_ones(case: str) -> None:
    v, _ = CASES[case]
    assert factors(v, teacher_record(v), ACTIONS) == HAND[case]


def test_the_factors_of_a_record_no_teacher_writes() -> None:
    """A wait action instead of the proposal, FIELD, a relay on one channel and a switched commitment."""
    v = view([trace(C, 9)], commitment={"claim": D, "confidence_bin": 1})
    relay = {"channel": 9, "claim": C, "novelty": 3, "support": 3, "conflict": 0, "ttl": 3}
    rec = {"task_action": "HOLD", "response": None, "deposits": [relay], "commit": {"claim": C, "confidence_bin": 2}}
    rec["execution_intent"] = "FIELD"
    expected = labelled(task_action="wait", execution_intent="FIELD", semantic_act="synthesize",
                        communication_act="relay", claim_source="incident", channel_scope="one", novelty="3",
                        support="3", conflict="0", ttl="3", commitment_action="switch",
                        commitment_confidence="2")  # fmt: skip
    assert factors(v, rec, ACTIONS) == expected
    renewed = {**rec, "deposits": [], "commit": {"claim": D, "confidence_bin": 0}}
    assert factors(v, renewed, ACTIONS)[NAMES.index("commitment_action")] == FACTORS["commitment_action"].index("renew")
    assert factors(v, renewed, ACTIONS)[NAMES.index("claim_source")] == FACTORS["claim_source"].index("commitment")
    assert factors(v, {"task_action": "JUMP"}, ACTIONS) == [0] * len(NAMES)  # the schema refuses it: all null


def relabelled_back(moved: dict[str, Any], maps: dict[str, dict[int, int]]) -> dict[str, Any]:
    back = {kind: {b: a for a, b in m.items()} for kind, m in maps.items()}
    return json.loads(json.dumps(moved), object_hook=lambda o: unmap(o, back))


def unmap(obj: dict[str, Any], back: dict[str, dict[int, int]]) -> dict[str, Any]:
    out = dict(obj)
    if "claim" in out and isinstance(out["claim"], int):
        out["claim"] = back["claim"][out["claim"]]
    if "channel" in out and out["channel"] in back["channel"]:
        out["channel"] = back["channel"][out["channel"]]
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_orbit_partner_is_a_valid_record_on_a_view_of_the_same_relations(case: str) -> None:
    from hivebench.waggle.study.viewset import orbit

    v, mode = CASES[case]
    rec = teacher_record(v)
    moved_view, moved_rec = partner(v, rec, rng_for(3, 1, 7))
    parse(moved_rec, ACTIONS)  # the schema's
    assert validated(moved_view, moved_rec) == (None, mode)  # nothing cut, the same mode
    assert admitted((v, rec), (moved_view, moved_rec), ACTIONS)
    assert teacher_record(moved_view) == moved_rec  # one subject each: the teacher is equivariant here
    # a bijection: the inverse maps give the view back (its incident records in another order)
    again, maps = orbit(v, rng_for(3, 1, 7))
    assert again == moved_view
    for kind in ("channel", "claim"):
        assert len(set(maps[kind].values())) == len(maps[kind])
    back = relabelled_back(moved_view, maps)
    key = lambda t: json.dumps(t, sort_keys=True)  # noqa: E731
    assert sorted(back["incident_fields"], key=key) == sorted(v["incident_fields"], key=key)
    assert {**back, "incident_fields": []} == {**v, "incident_fields": []}


def test_admission_refuses_a_pair_whose_relations_disagree() -> None:
    # fresh evidence of D, a weak trace of C: the teacher deposits D first hand
    v = view([trace(C, 7, support=2)], [{"claim": D, "direction": "N"}])
    rec = teacher_record(v)
    moved_view, moved_rec = partner(v, rec, rng_for(0, 0, 0))
    assert admitted((v, rec), (moved_view, moved_rec), ACTIONS)
    # the record's claims mapped crosswise: the deposit now names the incident claim (a schema-valid
    # record, but a relay of a trace it would raise, and its claim's source another)
    moved_c = moved_view["incident_fields"][0]["claim"]
    crossed = {**moved_rec, "deposits": [{**moved_rec["deposits"][0], "claim": moved_c}]}
    parse(crossed, ACTIONS)
    assert not admitted((v, rec), (moved_view, crossed), ACTIONS)
    # the source's record on the moved view: its claim is no longer there
    assert not admitted((v, rec), (moved_view, rec), ACTIONS)
    # a schema-invalid partner
    assert not admitted((v, rec), (moved_view, {**moved_rec, "deposits": [{"claim": 0}]}), ACTIONS)


def test_native_message_frames_move_with_their_channels() -> None:
    v = view([trace(C, 7), trace(C, 9)])
    v["private_state"]["frames"] = [{"channel": 7, "intent": "SEND"}, {"channel": 9, "intent": "HOLD"}]
    moved_view, _ = partner(v, teacher_record(v), rng_for(1, 0, 0))
    by_intent = {f["intent"]: f["channel"] for f in moved_view["private_state"]["frames"]}
    incident = {t["channel"] for t in moved_view["incident_fields"]}
    assert set(by_intent.values()) == incident and 7 not in incident | {9}
    assert [f["channel"] for f in moved_view["private_state"]["frames"]] == sorted(by_intent.values())


def test_eq6_targets_of_a_hand_made_next_view() -> None:
    nxt = view(
        [trace(C, 7, novelty=4, support=4, conflict=0, ttl=4), trace(C, 9, novelty=2, support=4, conflict=1, ttl=8)],
        commitment={"claim": C, "confidence_bin": 2},
    )
    t = targets(nxt)
    assert t.histograms["novelty"].tolist() == [0, 0, 0, 0.5, 0, 0.5]
    assert t.histograms["support"].tolist() == [0, 0, 0, 0, 0, 1]
    assert t.histograms["conflict"].tolist() == [0, 0.5, 0.5, 0, 0, 0]
    assert t.histograms["ttl"].tolist() == [0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0.5]
    assert t.states == {"readiness": 0, "commitment": 3}  # conflict 1: the gate does not pass
    empty = targets(view())
    assert {k: h.tolist() for k, h in empty.histograms.items()} == {
        "novelty": [1, 0, 0, 0, 0, 0],
        "support": [1, 0, 0, 0, 0, 0],
        "conflict": [1, 0, 0, 0, 0, 0],
        "ttl": [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    assert empty.states == {"readiness": 0, "commitment": 0}
    assert targets(view([trace(C, 7), trace(C, 9)])).states == {"readiness": 1, "commitment": 0}
    # the widths do not depend on how many traces there are, nor on their order
    many = view([trace(C, c, novelty=c % 5) for c in range(1, 40)])
    shuffled = {**many, "incident_fields": many["incident_fields"][::-1]}
    assert all(np.array_equal(targets(many).histograms[k], targets(shuffled).histograms[k]) for k in t.histograms)


def test_eventful_transitions_and_the_stratified_sampler() -> None:
    quiet = view([trace(C, 7, support=1)])
    private = teacher_record(quiet)
    assert not eventful(quiet, private, quiet)
    conflict = CASES["conflict"][0]
    assert eventful(conflict, teacher_record(conflict), quiet)  # verified conflict and a challenge
    ready = CASES["synthesis"][0]
    assert eventful(ready, teacher_record(ready), ready)  # a commitment written
    held = view(commitment={"claim": C, "confidence_bin": 0})
    assert eventful(held, teacher_record(held), view())  # the commitment expired
    flags = np.array([True, False, False, False, True, False])
    drawn = stratified(flags, 8, 0.5, np.random.default_rng(0))
    assert len(drawn) == 8 and flags[drawn].sum() == 4
    assert sorted(drawn[:4].tolist()) == [0, 0, 4, 4] and set(drawn[4:].tolist()) <= {1, 2, 3, 5}
    ordinary_only = stratified(np.zeros(3, dtype=bool), 4, 0.5, np.random.default_rng(0))
    assert len(ordinary_only) == 4 and set(ordinary_only.tolist()) <= {0, 1, 2}


def test_the_symmetric_kl_against_hand_computation() -> None:
    p, q = torch.tensor([[0.0, math.log(3)]]), torch.tensor([[0.0, 0.0]])  # (1/4, 3/4) and (1/2, 1/2)
    by_hand = 0.5 * (0.25 * math.log(0.5) + 0.75 * math.log(1.5)) + 0.5 * (0.5 * math.log(2) + 0.5 * math.log(2 / 3))
    assert symmetric_kl(p, q).item() == pytest.approx(by_hand, rel=1e-6)
    assert symmetric_kl(q, p).item() == pytest.approx(by_hand, rel=1e-6)
    assert symmetric_kl(p, p).item() == 0.0


def test_the_factor_terms_against_hand_computation() -> None:
    """One pair: every factor's logits uniform on the original side; on the moved side uniform but for
    the first factor, whose two-to-one odds favour class 0."""
    original = {name: torch.zeros(1, len(classes)) for name, classes in FACTORS.items()}
    moved = dict(original)
    moved["task_action"] = torch.tensor([[math.log(2), 0.0, 0.0, 0.0]])  # (2/5, 1/5, 1/5, 1/5)
    labels = torch.zeros(1, len(FACTORS), dtype=torch.long)
    cross, agree = factor_terms(original, moved, labels)
    uniform = [math.log(len(c)) for c in FACTORS.values()]
    by_hand = (sum(2 * u for u in uniform) - uniform[0] - math.log(2 / 5)) / len(FACTORS)
    assert cross.item() == pytest.approx(by_hand, rel=1e-6)
    p, q = [1 / 4] * 4, [2 / 5, 1 / 5, 1 / 5, 1 / 5]
    skl = 0.5 * sum(a * math.log(a / b) for a, b in zip(p, q)) + 0.5 * sum(b * math.log(b / a) for a, b in zip(p, q))
    assert agree.item() == pytest.approx(skl / len(FACTORS), rel=1e-6)


def test_the_grouped_field_loss_against_hand_computation() -> None:
    """Eq. 7 on one row: uniform logits everywhere but readiness (odds 1:3 for ready, the target)."""
    widths = {"novelty": 6, "support": 6, "conflict": 6, "ttl": 10, "readiness": 2, "commitment": 6}
    predicted = {name: torch.zeros(1, w) for name, w in widths.items()}
    predicted["readiness"] = torch.tensor([[0.0, math.log(3)]])
    histograms = {name: torch.full((1, widths[name]), 1 / widths[name]) for name in ("novelty", "support", "conflict")}
    histograms["ttl"] = torch.tensor([[0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0.5]])
    states = torch.tensor([[1, 4]])
    by_hand = (3 * math.log(6) + math.log(10)) / 4 + (-math.log(3 / 4) + math.log(6)) / 2
    assert field_loss(predicted, histograms, states).item() == pytest.approx(by_hand, rel=1e-6)


def test_orbit_agreement_counts_the_factors_two_records_share() -> None:
    import pandas as pd

    from hivebench.ids import canonical_json
    from hivebench.train.diagnostics import orbit_agreement

    v, _ = CASES["relay"]
    moved_view, moved_rec = partner(v, teacher_record(v), rng_for(0, 0, 0))
    frame = lambda views: pd.DataFrame({"actions": [json.dumps(ACTIONS)] * len(views), "view": views})  # noqa: E731
    test, orbit = frame([canonical_json(v)] * 2), frame([canonical_json(moved_view)] * 2)
    records = pd.Series([canonical_json(teacher_record(v))] * 2)
    # the second orbit record relays with one lower TTL: one factor of twelve differs
    lower = {**moved_rec, "deposits": [{**moved_rec["deposits"][0], "ttl": 1}]}
    moved = pd.Series([canonical_json(moved_rec), canonical_json(lower)])
    assert orbit_agreement(test, records, orbit, moved).tolist() == [1.0, 11 / 12]


def test_the_factorial_table_against_hand_computation() -> None:
    """Two arms, two paired seeds: the means, the difference in points and the eventful change."""
    from hivebench.train.diagnostics import factorial_table

    def probe(losses: list[float]) -> dict[str, Any]:
        return {"test_losses": losses, "test_eventful": [True, False, True]}

    decision = ({0: np.array([0.5, 0.5]), 1: np.array([0.75, 0.25])}, {0: probe([2, 1, 2]), 1: probe([4, 1, 4])})
    joint = ({0: np.array([1.0, 0.5]), 1: np.array([1.0, 0.5])}, {0: probe([1, 1, 1]), 1: probe([2, 1, 2])})
    table = factorial_table({"d": decision, "j": joint}, "d", 200, 0.95, 0).set_index("arm")
    assert table.loc["d", "orbit agreement (%)"] == 50.0  # (0.5 + 0.5 + 0.75 + 0.25) / 4
    assert table.loc["j", "orbit agreement (%)"] == 75.0
    assert table.loc["j", "orbit agreement vs d (points)"] == 25.0
    assert table.loc["d", "probe loss, eventful"] == 3.0  # (2 + 2 + 4 + 4) / 4
    assert table.loc["j", "eventful probe loss vs d (%)"] == -50.0  # 1.5 against 3
    assert table.loc["j", "probe loss"] == pytest.approx(8 / 6)
    low, high = table.loc["j", ["orbit agreement vs d (points) low", "orbit agreement vs d (points) high"]]
    assert low <= 25.0 <= high
    assert table.index[-1].startswith("paper")
