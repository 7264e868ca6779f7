"""The Waggle runtime's parts on hand-made inputs: the trace field's rules (staging, channels, expiry,
replacement, shuffling), the candidate-ready gate, the record's schema and its admission, and the
six-part view's forbidden keys."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from hivebench.engine.block import Block
from hivebench.seeding import Streams
from hivebench.waggle.runtime import gate as gates
from hivebench.waggle.runtime.adapter import Evidence
from hivebench.waggle.runtime.admit import admit, keys
from hivebench.waggle.runtime.field import POOL, Incident, TraceField
from hivebench.waggle.runtime.records import (
    CHALLENGE,
    DEPOSIT,
    NONE,
    PRIVATE_WORK,
    RELAY,
    SYNTHESIZE,
    WAIT,
    WAITING,
    Decisions,
    RecordError,
    from_json,
    parse,
)
from hivebench.waggle.runtime.view import budget_bin, forbidden_keys, local_view

ACTIONS = ("STAY", "UP", "DOWN")


def trace(
    claim: int,
    support: int = 4,
    ttl: int = 3,
    novelty: int = 4,
    conflict: int = 0,
    direction: int = NONE,
    channel: int = 0,
):
    return [channel, claim, novelty, support, conflict, ttl, direction]


def field(n: int = 4, episodes: int = 1, seeds: tuple[int, ...] | None = None) -> TraceField:
    return TraceField(Block(n, episodes), Streams(list(seeds or range(episodes)), "field"), n - 1)


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    w, r = np.nonzero(~np.eye(n, dtype=bool))
    return w, r


def test_a_write_is_staged_until_the_next_update_and_then_reaches_every_contact():
    f = field()
    first = f.deliver(all_pairs(4))
    assert len(first.rows) == 0
    f.send(0, (np.array([1]), np.array([trace(7)])))
    assert len(f.rows) == 0  # staged, not yet incident
    incident = f.deliver(all_pairs(4))
    assert sorted(incident.receiver.tolist()) == [0, 2, 3]  # not its writer
    assert (incident.traces[:, 1] == 7).all()


def test_a_trace_reaches_only_the_writers_contacts():
    f = field()
    f.send(0, (np.array([0]), np.array([trace(5)])))
    incident = f.deliver((np.array([0, 1]), np.array([1, 0])))  # 0 and 1 in contact, 2 and 3 apart
    assert incident.receiver.tolist() == [1]


def test_channel_handles_are_fixed_in_the_episode_distinct_per_receiver_and_from_the_pool():
    f = field(n=6)
    pairs = all_pairs(6)
    f.send(0, (np.arange(6), np.array([trace(c) for c in range(1, 7)])))
    first = f.deliver(pairs)
    f.send(1, (np.arange(6), np.array([trace(c) for c in range(1, 7)])))
    second = f.deliver(pairs)

    def handles(incident: Incident) -> dict[tuple[int, int], int]:
        writer = incident.rows[:, 1]
        return {(int(r), int(w)): int(h) for r, w, h in zip(incident.receiver, writer, incident.traces[:, 0])}

    assert handles(first) == handles(second)
    for receiver in range(6):
        own = [h for (r, _), h in handles(first).items() if r == receiver]
        assert len(set(own)) == 5 and all(1 <= h <= POOL for h in own)
    # randomised per node: receivers do not all give a writer the same handle
    assert len({h for (_, w), h in handles(first).items() if w == 0}) > 1


def test_a_trace_lives_for_its_ttl_updates_then_expires():
    f = field(n=2)
    contacts = (np.array([0, 1]), np.array([1, 0]))
    f.send(0, (np.array([0]), np.array([trace(3, ttl=2)])))
    assert len(f.deliver(contacts).rows) == 1  # TTL 2: this update
    assert len(f.deliver(contacts).rows) == 1  # and the next
    assert len(f.deliver(contacts).rows) == 0  # then gone
    assert f.counts(0)["traces_expired"] == 1


def test_a_new_trace_replaces_the_one_its_channel_held():
    f = field(n=2)
    contacts = (np.array([0, 1]), np.array([1, 0]))
    f.send(0, (np.array([0]), np.array([trace(3, ttl=8)])))
    f.deliver(contacts)
    f.send(1, (np.array([0]), np.array([trace(4, ttl=8)])))
    incident = f.deliver(contacts)
    assert incident.traces[:, 1].tolist() == [4]


def test_a_trace_on_one_channel_reaches_that_contact_alone():
    f = field(n=4)
    pairs = all_pairs(4)
    f.deliver(pairs)  # every contact gets its handles
    to_two = f.channel(np.array([0]), np.array([2]))[0]  # agent 0's handle for its contact 2
    f.send(0, (np.array([0]), np.array([trace(9, channel=int(to_two))])))
    incident = f.deliver(pairs)
    assert incident.receiver.tolist() == [2]


def test_incident_records_are_shuffled_at_each_update_from_the_seed():
    def orders(seed: int) -> list[list[int]]:
        f = field(n=9, seeds=(seed,))
        pairs = all_pairs(9)
        f.send(0, (np.arange(1, 9), np.array([trace(c, ttl=8) for c in range(1, 9)])))
        out = []
        for _ in range(4):
            incident = f.deliver(pairs)
            out.append(incident.traces[incident.receiver == 0][:, 1].tolist())
        return out

    a = orders(3)
    assert a == orders(3)  # the seed decides
    assert len({tuple(o) for o in a}) > 1  # a new order at each update
    assert a != orders(4)


def test_the_shuffle_is_a_uniform_permutation_of_an_agents_records():
    """Five records on agent 0, 3,000 updates: every one of the 120 orders comes up, as often as a
    uniform draw would have it (chi-square over the orders, and each record's place)."""
    f = field(n=6, seeds=(11,))
    pairs = all_pairs(6)
    counts: dict[tuple[int, ...], int] = {}
    place = np.zeros((5, 5), dtype=np.int64)  # record (its claim - 1) x place
    for step in range(3000):
        f.send(step, (np.arange(1, 6), np.array([trace(c, ttl=2) for c in range(1, 6)])))
        incident = f.deliver(pairs)
        order = tuple(incident.traces[incident.receiver == 0][:, 1].tolist())
        counts[order] = counts.get(order, 0) + 1
        place[np.array(order) - 1, np.arange(5)] += 1
    assert len(counts) == 120
    assert chisquare(list(counts.values())).pvalue > 1e-3
    assert chisquare(place.ravel()).pvalue > 1e-3


def test_the_gate_on_hand_made_fields():
    def ready(*traces_: list[int]) -> bool:
        rows = np.array(traces_)
        grouped = gates.claims(np.zeros(len(rows), dtype=np.int64), rows)
        return bool(grouped.ready(gates.Gate())[0])

    assert ready(trace(1, 4, channel=1), trace(1, 4, channel=2))
    assert not ready(trace(1, 4, channel=1), trace(1, 3, channel=2))  # support 7
    assert not ready(trace(1, 4, channel=1), trace(1, 4, channel=1))  # one channel
    assert not ready(trace(1, 4, channel=1), trace(1, 4, channel=2, conflict=1))
    assert ready(trace(1, 4, channel=1, direction=0), trace(1, 4, channel=2, direction=2))  # N + E: 0.707
    assert not ready(trace(1, 4, channel=1, direction=0), trace(1, 4, channel=2, direction=3))  # N + SE: 0.383
    assert not ready(trace(1, 4, channel=1, direction=0), trace(1, 4, channel=2, direction=4))  # opposite
    assert ready(
        trace(1, 4, channel=1, direction=0), trace(1, 4, channel=2, direction=0), trace(1, 2, channel=3, direction=4)
    )


def test_coherence_is_the_support_weighted_mean_resultant_length():
    rows = np.array([trace(1, 4, channel=1, direction=0), trace(1, 2, channel=2, direction=2)])
    grouped = gates.claims(np.zeros(2, dtype=np.int64), rows)
    assert grouped.coherence[0] == pytest.approx(np.hypot(4, 2) / 6)


def test_a_record_holds_at_most_one_trace_and_only_the_schemas_keys():
    ok = {"task_action": "UP", "response": None, "deposits": [trace_json(3)], "commit": None}
    assert parse(ok, ACTIONS)[0] == 1
    refused = {
        "deposits": {**ok, "deposits": [trace_json(3), trace_json(4)]},
        "keys": {**ok, "mood": "calm"},
        "forbidden": {**ok, "deposits": [{**trace_json(3), "roster": [1, 2]}]},  # at any depth
        "range": {**ok, "deposits": [{**trace_json(3), "ttl": 9}]},
        "intent": {**ok, "execution_intent": "AUTO"},  # AUTO is the omission
        "action": {**ok, "task_action": "FLY"},
        "object": [ok],
    }
    for code, record in refused.items():
        with pytest.raises(RecordError) as error:
            parse(record, ACTIONS)
        assert error.value.code == code, (code, str(error.value))


def trace_json(claim: int) -> dict[str, int]:
    return {"channel": 0, "claim": claim, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3}


def test_canonical_json_round_trips():
    d = Decisions.private(np.array([0, 1, 2]))
    d.deposit[1] = trace(5, direction=3)
    d.commit[2] = (5, 2)
    d.intent[2] = WAIT
    records = [d.to_json(a, ACTIONS) for a in range(3)]
    assert "execution_intent" not in records[0] and records[2]["execution_intent"] == "WAIT"
    assert records[1]["deposits"][0]["direction"] == "SE"
    back, errors = from_json(records, ACTIONS, np.zeros(3, dtype=np.int64))
    assert errors == [None] * 3
    assert [back.to_json(a, ACTIONS) for a in range(3)] == records


def admitted(decisions: Decisions, own: list[tuple[int, int]], held: list[tuple[int, list[int]]], refuted=()):
    evidence = Evidence(
        np.array([a for a, _ in own], dtype=np.int64),
        np.array([c for _, c in own], dtype=np.int64),
        np.full(len(own), NONE),
        np.zeros(len(own), dtype=bool),
    )
    rows = np.array([[r, 9, *t] for r, t in held], dtype=np.int64).reshape(-1, 9)
    legal = np.ones((len(decisions.action), len(ACTIONS)), dtype=bool)
    legal[:, 2] = False
    return admit(
        decisions,
        np.zeros(len(decisions.action), dtype=np.int64),
        legal,
        evidence,
        Incident(rows),
        lambda agent, claim: np.isin(keys(agent, claim), [keys(np.array([a]), np.array([c]))[0] for a, c in refuted]),
        lambda agent, handle: np.zeros(len(agent), dtype=bool),  # no agent holds a channel by handle here
    )


def test_admission_keeps_a_consistent_record_and_derives_its_mode():
    d = Decisions.private(np.array([1, 0, 0, 0, 0]))
    d.deposit[0] = trace(3)  # its own evidence: a deposit
    d.deposit[1] = trace(4, support=3, novelty=3, ttl=2)  # below what it holds: a relay
    d.commit[2] = (4, 2)  # a claim it holds: synthesis
    d.deposit[3] = trace(6, conflict=4)  # verified: a challenge
    d.intent[4] = WAIT
    a = admitted(d, own=[(0, 3)], held=[(1, trace(4)), (2, trace(4)), (3, trace(6))], refuted=[(3, 6)])
    assert not a.invalid.any()
    assert a.mode.tolist() == [DEPOSIT, RELAY, SYNTHESIZE, CHALLENGE, WAITING]


def test_admission_deletes_what_the_local_view_does_not_back():
    d = Decisions.private(np.array([2, 0, 0, 0, 0, 0, 0]))  # agent 0: an illegal action
    d.deposit[1] = trace(4, support=4, ttl=5)  # a relay that raises the TTL it holds
    d.deposit[2] = trace(8)  # a claim it has never met
    d.deposit[3] = trace(6, support=3, ttl=2)  # a relay that keeps novelty 4: first-hand, forged
    d.deposit[4] = trace(3)
    d.intent[4] = WAIT  # a wait that writes
    d.deposit[5] = trace(7, ttl=2, novelty=3)  # a relay of a claim its own view refutes, without conflict
    d.commit[6] = (9, 2)  # a commitment to a claim it has never met
    held = [(1, trace(4, ttl=3)), (3, trace(6)), (5, trace(7))]
    a = admitted(d, own=[(4, 3)], held=held, refuted=[(5, 7)])
    assert a.codes == ["action", "relay", "claim", "first_hand", "wait", "conflict", "claim"]
    assert a.invalid.all()
    assert a.decisions.action[0] == 0  # the private proposal
    assert not a.decisions.deposits.any() and (a.decisions.commit[:, 0] == NONE).all()
    assert a.mode.tolist() == [PRIVATE_WORK] * 4 + [WAITING] + [PRIVATE_WORK] * 2


def test_a_view_has_six_parts_and_refuses_identity_roster_and_global_keys():
    view = local_view({"task": "pursuit"}, {"view": []}, "UP", np.array([trace(2)]), np.array([NONE, NONE]), 4)
    assert list(view) == [
        "task_contract",
        "private_state",
        "worker_proposal",
        "incident_fields",
        "local_commitment",
        "budget_bin",
    ]
    with pytest.raises(ValueError, match="private_state.agent_id"):
        local_view({"task": "pursuit"}, {"agent_id": 3}, "UP", np.zeros((0, 7), int), np.array([NONE, NONE]), 4)
    assert forbidden_keys({"a": [{"b": {"Population_Size": 8}}], "roster": []}) == ["a[0].b.Population_Size", "roster"]


def test_the_budget_bin_falls_from_four_to_zero_in_five_equal_bins():
    assert [budget_bin(t, 10) for t in range(10)] == [4, 4, 3, 3, 2, 2, 1, 1, 0, 0]
    assert [budget_bin(t, 20) for t in range(20)] == [b for b in (4, 3, 2, 1, 0) for _ in range(4)]
    assert [budget_bin(t, 3) for t in range(3)] == [4, 3, 1]  # a third, two thirds of the episode gone


def test_an_unverified_challenge_passes_the_validator_for_the_formal_system_to_inhibit():
    d = Decisions.private(np.array([0, 0]))
    d.deposit[0] = trace(6, conflict=4)  # conflict its own view does not verify
    a = admitted(d, own=[], held=[(0, trace(6))])
    assert a.codes == [None, None] and a.mode[0] == CHALLENGE


def test_a_deposit_on_one_channel_needs_a_channel_the_writer_holds():
    d = Decisions.private(np.array([0, 0]))
    d.deposit[0] = trace(3, channel=17)
    d.deposit[1] = trace(4, channel=18)
    evidence = Evidence(np.array([0, 1]), np.array([3, 4]), np.full(2, NONE), np.zeros(2, dtype=bool))
    a = admit(
        d,
        np.zeros(2, dtype=np.int64),
        np.ones((2, len(ACTIONS)), dtype=bool),
        evidence,
        Incident(np.zeros((0, 9), dtype=np.int64)),
        lambda agent, claim: np.zeros(len(agent), dtype=bool),
        lambda agent, handle: (agent == 0) & (handle == 17),  # agent 0 holds channel 17; agent 1 no 18
    )
    assert a.invalid.tolist() == [False, True]
    assert a.decisions.deposit[0, 0] == 17 and not a.decisions.deposits[1]


def test_a_relay_must_fit_under_one_incident_trace_with_a_lower_ttl():
    held = [(0, trace(4, novelty=4, ttl=2)), (0, trace(4, novelty=1, ttl=8))]

    def relayed(**parts) -> bool:
        d = Decisions.private(np.array([0]))
        d.deposit[0] = trace(4, **parts)
        return not admitted(d, own=[], held=held).invalid[0]

    assert relayed(novelty=1, ttl=7)  # under the second trace
    assert relayed(novelty=3, ttl=1)  # under the first
    assert not relayed(novelty=3, ttl=5)  # novelty of the first, TTL of the second: under neither
    assert not relayed(novelty=1, ttl=8)  # the same TTL: a trace could bounce for ever


def test_an_agent_may_have_more_contacts_than_the_pool_holds_by_default():
    n = POOL + 40
    f = field(n=n)
    incident = f.deliver(all_pairs(n))
    f.send(0, (np.arange(n), np.array([trace(c) for c in range(1, n + 1)])))
    incident = f.deliver(all_pairs(n))
    mine = incident.traces[incident.receiver == 0][:, 0]
    assert len(mine) == n - 1 and len(set(mine.tolist())) == n - 1 and mine.max() <= n - 1
