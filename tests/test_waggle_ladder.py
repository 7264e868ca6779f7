"""The admission ladder on hand-made replies, each rung, and a property test of 10^4 fuzzed replies
(random JSON, truncated JSON, forbidden keys nested deep, out-of-range bins, a WAIT that writes, a
relay without incident evidence, an unknown channel): every reply lands on one rung, nothing crashes,
and no write or commitment the validator refuses survives. And what a controller is asked: the one
instruction, the actions and the view; the record's JSON Schema against the validator."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from conftest import soak_count
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from hivebench.agents.waggle.ladder import RUNGS, Ladder, project, unwrap
from hivebench.agents.waggle.prompt import INSTRUCTION, messages, record_schema
from hivebench.waggle.runtime.adapter import Evidence
from hivebench.waggle.runtime.admit import admit
from hivebench.waggle.runtime.field import Incident
from hivebench.waggle.runtime.records import NONE, Decisions, RecordError, parse

ACTIONS = ("STAY", "UP", "DOWN")
AGENTS = 6
OWN = [(0, 3), (1, 3), (2, 5)]  # (agent, claim) each sees itself
HELD = [(a, [1, 4, 4, 4, 0, 3, NONE]) for a in range(AGENTS)]  # every agent holds claim 4 on channel 1


def check(decisions: Decisions):
    """The validator over a block of six agents: claims 3 and 5 seen, claim 4 held on channel 1, the
    action DOWN illegal, no channel held by handle."""
    legal = np.ones((AGENTS, len(ACTIONS)), dtype=bool)
    legal[:, 2] = False
    evidence = Evidence(
        np.array([a for a, _ in OWN]), np.array([c for _, c in OWN]), np.full(len(OWN), NONE), np.zeros(len(OWN), bool)
    )
    rows = np.array([[a, 9, *t] for a, t in HELD], dtype=np.int64)
    return admit(
        decisions,
        np.zeros(AGENTS, dtype=np.int64),
        legal,
        evidence,
        Incident(rows),
        lambda agent, claim: np.zeros(len(agent), dtype=bool),
        lambda agent, handle: np.zeros(len(agent), dtype=bool),
    )


def ladder() -> Ladder:
    return Ladder(ACTIONS, np.zeros(AGENTS, dtype=np.int64), check)


def record(**parts: Any) -> dict[str, Any]:
    return {"task_action": "UP", "response": None, "deposits": [], "commit": None, **parts}


def deposit(claim: int = 3, **parts: Any) -> dict[str, Any]:
    return {"channel": 0, "claim": claim, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3, **parts}


def never(agents: list[int], notes: list[str]) -> list[str]:
    raise AssertionError("no regeneration expected")


def test_a_valid_record_is_executable_as_it_comes():
    texts = [json.dumps(record(deposits=[deposit()]))] + [None] * (AGENTS - 1)
    admitted, rungs, first = ladder().admit(texts, never)
    assert rungs[0] == "executable" and first[0] is None and rungs[1:] == [None] * (AGENTS - 1)
    assert admitted.decisions.deposit[0, 1] == 3 and admitted.decisions.action[0] == 1


def test_an_envelope_is_taken_off():
    inner = json.dumps(record(deposits=[deposit()]))
    for text in (
        f"```json\n{inner}\n```",
        f"Here it is: {inner} (done)",
        f"[{inner}]",
        json.dumps({"record": json.loads(inner)}),
    ):
        admitted, rungs, first = ladder().admit([text] + [None] * (AGENTS - 1), never)
        assert rungs[0] == "normalised", text
        assert first[0] in ("json", "object", "keys")
        assert admitted.decisions.deposit[0, 1] == 3


def test_a_regeneration_is_asked_with_the_validators_code():
    asked: list[tuple[list[int], list[str]]] = []

    def regenerate(agents: list[int], notes: list[str]) -> list[str]:
        asked.append((agents, notes))
        return [json.dumps(record(deposits=[deposit()]))]

    bad = json.dumps(record(deposits=[deposit(ttl=9)]))
    admitted, rungs, first = ladder().admit([bad] + [None] * (AGENTS - 1), regenerate)
    assert asked == [([0], ["range: deposits.ttl: expected an integer from 1 to 8, got 9"])]
    assert rungs[0] == "repaired" and first[0] == "range"
    assert admitted.decisions.deposit[0, 5] == 3  # the regenerated trace's TTL


def test_what_fails_again_is_projected_deleting_only_the_invalid_content():
    first_reply = json.dumps(record(deposits=[deposit(claim=8)], commit={"claim": 4, "confidence_bin": 2}, mood=1))
    again = json.dumps(
        record(task_action="DOWN", deposits=[deposit(claim=8)], commit={"claim": 4, "confidence_bin": 2})
    )
    admitted, rungs, first = ladder().admit([first_reply] + [None] * (AGENTS - 1), lambda a, n: [again])
    assert rungs[0] == "projected" and first[0] == "keys"
    d = admitted.decisions
    assert d.deposit[0, 1] == NONE  # claim 8: never met, deleted
    assert d.commit[0].tolist() == [4, 2]  # the held claim's commitment stays: controller-authored
    assert d.action[0] == 0  # DOWN is illegal: the private proposal
    assert admitted.codes[0] == "action"  # what the projection deleted last
    assert check(d).codes[0] is None  # what is left passes


def test_nothing_parseable_falls_back_to_the_private_proposal():
    admitted, rungs, first = ladder().admit(["{not json"] + [None] * (AGENTS - 1), lambda a, n: ["still not"])
    assert rungs[0] == "fallback" and first[0] == "json"
    assert admitted.decisions.action[0] == 0 and not admitted.decisions.deposits[0]


def test_projection_deletes_and_never_invents():
    messy = record(
        deposits=[deposit(), deposit(claim=5)],
        commit={"claim": 4},
        execution_intent="AUTO",
        agent_id=3,
        response=7,
    )
    assert project(messy) == record(deposits=[deposit()])
    assert unwrap("no record here") is None


# Fuzzed replies ------------------------------------------------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.text(max_size=6))
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["roster", "agent_id", "claim", "ttl", "x", "world", "population_size"]), inner, max_size=3
        ),
    ),
    max_leaves=8,
)
traces = st.fixed_dictionaries(
    {
        "channel": st.integers(-1, 3),
        "claim": st.sampled_from([3, 4, 5, 8, 0]),
        "novelty": st.integers(-1, 5),
        "support": st.integers(-1, 5),
        "conflict": st.integers(-1, 5),
        "ttl": st.integers(0, 9),
    },
    optional={"direction": st.sampled_from(["N", "SE", "UP", 3]), "roster": json_value},
)
records = st.fixed_dictionaries(
    {"task_action": st.sampled_from([*ACTIONS, "FLY", 3])},
    optional={
        "response": st.one_of(st.none(), st.text(max_size=5), st.integers()),
        "deposits": st.one_of(st.lists(traces, max_size=2), json_value),
        "commit": st.one_of(
            st.none(),
            st.fixed_dictionaries({"claim": st.sampled_from([3, 4, 8]), "confidence_bin": st.integers(-1, 5)}),
            json_value,
        ),
        "execution_intent": st.sampled_from(["PRIVATE", "FIELD", "WAIT", "AUTO", "SOON"]),
        "global_state": json_value,
    },
)


@st.composite
def replies(draw) -> str:
    value = draw(records)
    text = json.dumps(value)
    shape = draw(st.sampled_from(["bare", "truncated", "fenced", "listed", "garbage", "random"]))
    if shape == "truncated":
        return text[: draw(st.integers(0, max(len(text) - 1, 0)))]
    if shape == "fenced":
        return f"```json\n{text}\n```"
    if shape == "listed":
        return json.dumps([value])
    if shape == "garbage":
        return draw(st.text(max_size=20))
    if shape == "random":
        return json.dumps(draw(json_value))
    return text


@pytest.mark.slow  # about 10 s at CI's sample
@pytest.mark.soak  # 400 blocks of 6 (2,400 replies, as many regenerations); 1,700 under `make soak`
@settings(max_examples=soak_count(400, 1700), deadline=None)
@given(
    first=st.lists(replies(), min_size=AGENTS, max_size=AGENTS),
    again=st.lists(replies(), min_size=AGENTS, max_size=AGENTS),
)
def test_every_fuzzed_reply_lands_on_one_rung_and_nothing_unvalidated_survives(first, again):
    asked: list[int] = []

    def regenerate(agents: list[int], notes: list[str]) -> list[str]:
        asked.extend(agents)
        assert all(":" in note for note in notes)  # each with its code and reason
        return [again[a] for a in agents]

    admitted, rungs, codes = ladder().admit(first, regenerate)
    assert all(rung in RUNGS for rung in rungs)
    assert [a for a, rung in enumerate(rungs) if rung in ("repaired", "projected", "fallback")] == sorted(asked)
    assert [c is None for c in codes] == [rung == "executable" for rung in rungs]
    d = admitted.decisions
    # only a projection deletes; what the ladder admitted, the validator passes whole
    assert all(code is None for code, rung in zip(admitted.codes, rungs) if rung != "projected")
    again_checked = check(d)
    assert again_checked.codes == [None] * AGENTS
    assert (again_checked.decisions.deposit == d.deposit).all() and (again_checked.decisions.commit == d.commit).all()
    for agent, rung in enumerate(rungs):
        if rung == "fallback":
            assert d.action[agent] == 0 and not d.deposits[agent] and d.commit[agent, 0] == NONE


# What a controller is asked ---------------------------------------------------------------------------


def test_a_controller_gets_the_one_instruction_then_the_actions_and_its_view():
    view = {
        "task_contract": {"task": "pursuit"},
        "private_state": {},
        "worker_proposal": "UP",
        "incident_fields": [],
        "local_commitment": None,
        "budget_bin": 4,
    }
    system, user = messages(view, list(ACTIONS))
    assert system == {"role": "system", "content": INSTRUCTION}
    assert INSTRUCTION.startswith("You are one anonymous member of a changing local network.")
    actions_line, view_line = user["content"].split("\n")
    assert json.loads(actions_line.removeprefix("Actions: ")) == list(ACTIONS)
    assert json.loads(view_line.removeprefix("Local view: ")) == view


def test_canonical_records_satisfy_the_record_schema():
    d = Decisions.private(np.array([0, 1, 2]))
    d.deposit[1] = [0, 3, 4, 4, 0, 3, 2]
    d.commit[2] = (4, 2)
    d.intent[2] = 3  # WAIT
    schema = Draft202012Validator(record_schema(list(ACTIONS)))
    assert all(schema.is_valid(d.to_json(a, ACTIONS)) for a in range(3))


canonical = st.fixed_dictionaries(
    {
        "task_action": st.sampled_from(ACTIONS),
        "response": st.one_of(st.none(), st.text(max_size=5)),
        "deposits": st.lists(traces, max_size=2),
        "commit": st.one_of(
            st.none(), st.fixed_dictionaries({"claim": st.integers(0, 5), "confidence_bin": st.integers(-1, 5)})
        ),
    },
    optional={"execution_intent": st.sampled_from(["PRIVATE", "FIELD", "WAIT", "AUTO"])},
)


@settings(max_examples=400, deadline=None)
@given(value=canonical)
def test_the_record_schema_and_the_validator_agree(value):
    try:
        parse(value, ACTIONS)
        parsed = True
    except RecordError:
        parsed = False
    assert Draft202012Validator(record_schema(list(ACTIONS))).is_valid(value) == parsed
