"""FixedSwarm's rule on the Waggle runtime, round by round, over a hand-made adapter: `Script` says
what each agent sees in each round (its evidence as claims), whom it is in contact with (everyone),
which claims it can refute and whose proposal follows its own evidence. The field, the validator, the
compiler and the law are the real ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.agents.fixedswarm.law import FixedSwarm
from hivebench.config import method_entry, validate
from hivebench.seeding import Streams
from hivebench.waggle.runtime.adapter import Evidence, Proposal
from hivebench.waggle.runtime.records import NONE


def params(**changes: Any) -> dict[str, Any]:
    """FixedSwarm's parameters as the config check fills them in (its defaults), with `changes`."""
    config = {
        "tasks": {"t": {"kind": "swarmbench", "task": "pursuit"}},
        "methods": {"m": {"kind": "fixedswarm", **changes}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    return method_entry(validate(config, "law.yaml")["methods"]["m"])


STAY, UP = 0, 1


class Script:
    """An adapter whose observation is the round number; claims c of kind c // 100."""

    actions = ("STAY", "UP")
    wait = STAY

    def __init__(self, n: int, rounds: int, seen=None, route=(), refuted=(), moving=True):
        self.n, self.rounds = n, rounds
        self.seen = seen or {}  # round -> [(agent, claim, direction)]
        self.route, self.refuted, self.moving = set(route), set(refuted), moving
        self.acted: list[np.ndarray] = []

    def start(self, observation: Any, seeds: list[int], rng: Streams, params: dict[str, Any]) -> None:
        pass

    def live(self, step: int) -> np.ndarray:
        return np.ones(self.n, dtype=bool)

    def running(self, step: int) -> np.ndarray:
        return np.ones(1, dtype=bool)

    def legal(self, step: int) -> np.ndarray:
        return np.ones((self.n, 2), dtype=bool)

    def heard(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)

    def budget(self, step: int) -> tuple[int, int]:
        return step, self.rounds

    def intervention(self, step: int) -> int:
        return -1

    def proposal(self, step: int, medium: str) -> Proposal:
        route = np.isin(np.arange(self.n), list(self.route))
        return Proposal(np.zeros(self.n, dtype=np.int64), route)

    def evidence(self, step: int) -> Evidence:
        rows = self.seen.get(step, [])
        a, c, d = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(3))
        return Evidence(a, c, d, np.full(len(rows), self.moving))

    def most_contacts(self, step: int) -> int:
        return self.n - 1

    def contacts(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        w, r = np.nonzero(~np.eye(self.n, dtype=bool))
        return w, r

    def refutes(self, step: int, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return np.array([(int(a), int(c)) in self.refuted for a, c in zip(agent, claim)], dtype=bool)

    def wants(self, step: int, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return np.ones(len(agent), dtype=bool)

    def kind(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return claim // 100

    def towards(self, step: int, agent: np.ndarray, heading: np.ndarray) -> np.ndarray:
        return np.full(len(agent), UP)

    def act(self, step: int, action: np.ndarray, messages: pa.StringArray | None, incident: Any) -> np.ndarray:
        self.acted.append(action)
        return action

    def contract(self, step: int, agent: int) -> dict[str, Any]:
        return {}

    def private_state(self, step: int, agent: int) -> dict[str, Any]:
        return {}


def run(adapter: Script, rounds: int, **changes: Any) -> FixedSwarm:
    law = FixedSwarm(params(**changes), Streams([0], "policy"), adapter)
    for step in range(rounds):
        law.decide(step)
    return law


def test_moving_evidence_in_the_same_direction_is_a_repeat_until_the_refresh():
    seen = {t: [(0, 101, 2)] for t in range(30)}  # agent 0 sees claim 101 to its east every round
    law = run(Script(3, 30, seen), 30)
    writes = [step for step, writers in law.trace_field.sent_by if 0 in writers.tolist()]
    assert writes == [0, 12, 24]  # written, then refreshed every 12 rounds
    summary = law.summary(0)
    assert summary["refreshes"] == 2 and summary["spatial_repeats_blocked"] == 27


def test_moving_evidence_in_a_new_direction_is_written_at_once():
    seen = {0: [(0, 101, 2)], 1: [(0, 101, 2)], 2: [(0, 101, 4)]}
    law = run(Script(3, 3, seen), 3)
    assert [step for step, w in law.trace_field.sent_by if 0 in w.tolist()] == [0, 2]


def test_stationary_evidence_is_written_once():
    seen = {t: [(0, 201, 2)] for t in range(30)}
    law = run(Script(3, 30, seen, moving=False), 30)
    assert [step for step, w in law.trace_field.sent_by if 0 in w.tolist()] == [0]
    assert law.summary(0)["spatial_repeats_blocked"] == 29


def test_a_relay_lowers_every_component_by_one_and_stops_at_the_cap():
    seen = {0: [(0, 101, 2)]}
    law = run(Script(2, 4, seen), 4)  # 0 writes; 1 relays it back once; 0 sees its relay but has the claim
    field = law.trace_field
    delivered = {step: rows for step, rows in field.delivered}
    first, relay = delivered[0], delivered[1]
    assert first[:, 1].tolist() == [0] and relay[:, 1].tolist() == [1]
    novelty, support, ttl = (2 + 2, 2 + 3, 2 + 5)
    assert relay[0, [novelty, support, ttl]].tolist() == [3, 3, 3]  # 4, 4, 4 lowered by one
    assert law.summary(0)["writes_kept"] == 2  # agent 1 relays a claim once


def test_relays_stop_when_support_falls_below_the_minimum():
    seen = {0: [(0, 101, 2)]}
    law = run(Script(6, 10, seen), 10, formal={"relay": {"min_support": 4}})  # only first-hand traces (support 4)
    supports = [rows[:, 2 + 3].tolist() for _, rows in law.trace_field.delivered]
    assert min(s for row in supports for s in row) == 3  # one hop, never a second


def claims_written_by(law: FixedSwarm, agent: int) -> set[int]:
    law.decide(len(law.modes))  # one more update delivers the last round's writes
    return {int(row[2 + 1]) for _, rows in law.trace_field.delivered for row in rows if row[1] == agent}


def test_an_agent_on_its_own_route_does_not_relay_a_rival_claim_of_its_kind():
    # agent 0 reports claim 101; agent 1, on its own route to claim 102 (the same kind), keeps quiet about it
    seen = {0: [(0, 101, 2)], 1: [(1, 102, 6)], 2: [(1, 102, 6)]}
    law = run(Script(3, 3, seen, route=[1]), 3)
    summary = law.summary(0)
    assert summary["relays_silenced"] == 2 and summary["relay_candidates_route_active"] == 2
    assert claims_written_by(law, 1) == {102}  # its own claim, never 101


def test_an_agent_on_its_own_route_relays_a_claim_of_another_kind():
    seen = {0: [(0, 101, 2)], 1: [(1, 202, 6)], 2: [(1, 202, 6)]}
    law = run(Script(3, 3, seen, route=[1]), 3)
    assert law.summary(0)["relays_silenced"] == 0
    assert claims_written_by(law, 1) == {202, 101}  # its own, then its relay of 101 (a round late)


def test_a_challenge_needs_verified_conflict():
    # agents 0 and 1 report two claims of one kind; agent 2 can refute 101 but not 102
    seen = {0: [(0, 101, 2), (1, 102, 6)]}
    law = run(Script(3, 3, seen, refuted={(2, 101)}), 3)
    summary = law.summary(0)
    assert summary["challenges"] == 1 and summary["unverified_challenges_blocked"] >= 1
    (_, rows) = law.trace_field.delivered[1]
    challenge = rows[rows[:, 1] == 2]
    assert challenge[:, 2 + 1].tolist() == [101, 101] and (challenge[:, 2 + 4] == 4).all()


def test_the_gate_commits_and_the_compiler_follows_the_field():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}  # two channels, support 4 + 4, one direction
    adapter = Script(3, 3, seen, route=[0, 1])
    law = run(adapter, 3)
    assert law.summary(0)["commits"] >= 1
    assert law.commitment[2, 0] == 101
    assert adapter.acted[1][2] == UP  # agent 2 moves along the field; its proposal was STAY
    assert adapter.acted[0][2] == STAY  # nothing incident yet in the first round


def test_verified_conflict_reopens_a_commitment():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}
    law = run(Script(3, 2, seen, route=[0, 1]), 2)
    assert law.commitment[2, 0] == 101
    law.adapter.refuted = {(2, 101)}
    law.decide(2)
    assert law.commitment[2, 0] == NONE
    assert law.summary(0)["reopenings"] == 1


def test_a_commitment_not_renewed_decays_and_expires():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}
    law = run(Script(3, 20, seen, route=[0, 1]), 20, commitment={"decay_rounds": 1})
    assert law.commitment[2, 0] == NONE
    assert law.summary(0)["commitments_expired"] >= 1


def test_a_commitment_loses_a_bin_every_decay_rounds_after_its_last_renewal():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}  # agent 2's gate passes while the two traces live (TTL 4)
    law = FixedSwarm(params(), Streams([0], "policy"), Script(3, 12, seen, route=[0, 1]))  # decay_rounds: 2
    confidence = []
    for step in range(12):
        law.decide(step)
        confidence.append(int(law.commitment[2, 1]) if law.commitment[2, 0] == 101 else None)
    # made in round 1 with confidence 8 // 4 = 2 and renewed to round 4, while the traces were
    # incident; then a bin lost in rounds 6, 8 and 10, where it ends
    assert confidence == [None, 2, 2, 2, 2, 2, 1, 1, 0, 0, None, None]
    assert law.summary(0)["commitments_expired"] == 1 and law.summary(0)["commits"] == 1
