"""The formal system around the controller slot (hivebench.waggle.runtime.formal), round by round, with
a controller in the slot: `Replies` answers each agent's six-part view with the record a test gives it,
through the real view, formal system, validator, compiler and field, over the hand-made adapter of
test_waggle_law (everyone in contact; claims c of kind c // 100)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_waggle_law import Script

from hivebench.agents.scripted_controller.rule import record_for
from hivebench.cells import all_blocks
from hivebench.config import ConfigError, method_entry, validate
from hivebench.engine.loop import play_block
from hivebench.seeding import Streams
from hivebench.waggle.runtime import gate as gates
from hivebench.waggle.runtime.formal import Settings
from hivebench.waggle.runtime.policy import ViewRuntime
from hivebench.waggle.runtime.records import NONE

OFF = {part: {"enabled": False} for part in ("gate", "suppression", "relay", "inhibition")}


def params(**changes: Any) -> dict[str, Any]:
    """A controller's runtime parameters as the config check fills them in, with `changes`."""
    config = {
        "tasks": {"t": {"kind": "swarmbench", "task": "pursuit"}},
        "methods": {"m": {"kind": "scripted_controller", "keep_views": True, **changes}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    return method_entry(validate(config, "formal.yaml")["methods"]["m"])


Reply = Callable[[int, int, dict[str, Any]], dict[str, Any]]  # (round, agent, view) -> record


class Replies(ViewRuntime):
    """A controller whose record for each view is `answer(round, agent, view)`."""

    def __init__(self, params: dict[str, Any], adapter: Script, answer: Reply):
        super().__init__(params, Streams([0], "policy"), adapter)
        self.answer, self.step = answer, 0
        self.views: list[dict[int, dict[str, Any]]] = []  # per round, what each agent was shown

    def decide(self, observation: Any) -> Any:
        self.step = observation
        return super().decide(observation)

    def reply(self, views: list[dict[str, Any]]) -> list[Any]:
        self.views.append(dict(enumerate(views)))
        return [self.answer(self.step, agent, view) for agent, view in enumerate(views)]


def record(commit: int | None = None, **deposit: int) -> dict[str, Any]:
    """A record that stays, writes `deposit` (on every channel) if given, and commits to `commit` if given."""
    trace = {"channel": 0, "novelty": 4, "support": 4, "conflict": 0, "ttl": 4, **deposit} if deposit else None
    return {
        "task_action": "STAY",
        "response": None,
        "deposits": [trace] if trace else [],
        "commit": None if commit is None else {"claim": commit, "confidence_bin": 2},
    }


def play(adapter: Script, answer: Reply, rounds: int, **changes: Any) -> Replies:
    runtime = Replies(params(**changes), adapter, answer)
    for step in range(rounds):
        runtime.decide(step)
    return runtime


def writes(runtime: Replies, agent: int) -> list[int]:
    return [step for step, writers in runtime.trace_field.sent_by if agent in writers.tolist()]


# The gate ------------------------------------------------------------------------------------------

N, E, S, W = 0, 2, 4, 6


def gate_passes(traces: list[tuple[int, int]], **gate: Any) -> bool:
    """Whether the config's gate (the paper's values, or `gate`) passes one agent's traces of one claim,
    each (support, direction) on a channel of its own."""
    settings = Settings.of(params(formal={"gate": gate})["formal"])
    assert settings.gate is not None
    rows = np.array([[c + 1, 7, 4, s, 0, 3, d] for c, (s, d) in enumerate(traces)], dtype=np.int64)
    return bool(gates.claims(np.zeros(len(rows), dtype=np.int64), rows).ready(settings.gate)[0])


def test_the_gate_passes_at_two_channels_and_not_at_one():
    assert gate_passes([(4, E), (4, E)], support=0)
    assert not gate_passes([(4, E)], support=0)


def test_the_gate_passes_at_total_support_eight_and_not_at_seven():
    assert gate_passes([(4, E), (4, E)])
    assert not gate_passes([(4, E), (3, E)])
    assert not gate_passes([(2, E), (2, E), (2, E), (1, E)])  # four channels do not make up for it


def test_the_gate_passes_at_coherence_six_tenths_and_not_below():
    # east 4 and west 1 leave a resultant of 3 of 5 directed support: coherence 0.6 exactly; the
    # undirected trace adds support, not direction
    assert gate_passes([(4, E), (1, W), (3, NONE)])
    # north 4, east 4, south 1: a resultant of |(4, 3)| = 5 of 9, coherence 0.556
    assert not gate_passes([(4, N), (4, E), (1, S)])
    assert gate_passes([(4, N), (4, E), (1, S)], coherence=0.5)


def test_the_gate_needs_zero_conflict():
    rows = np.array([[1, 7, 4, 4, 0, 3, E], [2, 7, 4, 4, 1, 3, E]], dtype=np.int64)
    gate = Settings.of(params()["formal"]).gate
    assert gate is not None and not gates.claims(np.zeros(2, dtype=np.int64), rows).ready(gate)[0]


def test_a_controllers_commitment_is_kept_only_where_the_gate_passes():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}  # agents 0 and 1 see claim 101; agent 2 hears both

    def answer(support: int) -> Reply:
        def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
            if step == 0 and agent < 2:
                return record(claim=101, support=support, direction="E")
            return record(commit=101) if agent == 2 and view["incident_fields"] else record()

        return reply

    strong = play(Script(3, 2, seen), answer(4), 2)  # 4 + 4 on two channels
    assert strong.commitment[2, 0] == 101 and strong.summary(0)["commits"] == 1
    weak = play(Script(3, 2, seen), answer(3), 2)  # 3 + 3: below the gate's support
    assert weak.commitment[2, 0] == NONE
    assert weak.summary(0)["commits"] == 0 and weak.summary(0)["commits_gated"] == 1
    ungated = play(Script(3, 2, seen), answer(3), 2, formal={"gate": {"enabled": False}})
    assert ungated.commitment[2, 0] == 101


def test_a_commitment_to_a_claim_its_own_view_refutes_is_not_admitted():
    seen = {0: [(0, 101, 2), (1, 101, 2)]}

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        if step == 0 and agent < 2:
            return record(claim=101, direction="E")
        return record(commit=101) if agent == 2 and view["incident_fields"] else record()

    runtime = play(Script(3, 2, seen, refuted={(2, 101)}), reply, 2)
    assert runtime.commitment[2, 0] == NONE
    summary = runtime.summary(0)
    assert summary["commits"] == 0 and summary["commits_inhibited"] == 1 and summary["mode_synthesize"] == 0


# Suppression, relays, inhibition -----------------------------------------------------------------


def test_a_controllers_repeats_are_suppressed_until_the_refresh():
    seen = {t: [(0, 101, 2)] for t in range(30)}

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        return record(claim=101, direction="E") if agent == 0 else record()  # every round, the same

    runtime = play(Script(3, 30, seen), reply, 30)
    assert writes(runtime, 0) == [0, 12, 24]
    summary = runtime.summary(0)
    assert summary["deposit_candidates"] == 30 and summary["candidate_writes"] == 30
    assert summary["spatial_repeats_blocked"] == 27 and summary["refreshes"] == 2 and summary["writes_kept"] == 3
    unsuppressed = play(Script(3, 30, seen), reply, 30, formal={"suppression": {"enabled": False}})
    assert writes(unsuppressed, 0) == list(range(30))
    stationary = play(Script(3, 30, seen, moving=False), reply, 30)
    assert writes(stationary, 0) == [0] and stationary.summary(0)["spatial_repeats_blocked"] == 29


def relayer(novelty: int, support: int, ttl: int) -> Reply:
    """Agent 0 writes what it sees in round 0; agent 1 relays it in round 1 with these parts."""

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        if step == 0 and agent == 0:
            return record(claim=101, novelty=4, support=3, ttl=4)
        if step == 1 and agent == 1:
            return record(claim=101, novelty=novelty, support=support, ttl=ttl)
        return record()

    return reply


def relayed(runtime: Replies) -> list[list[int]]:
    """The traces agent 1 wrote, as (novelty, support, ttl) on their receivers."""
    runtime.decide(len(runtime.views))  # one more update delivers them
    return [row[[4, 5, 7]].tolist() for _, rows in runtime.trace_field.delivered for row in rows if row[1] == 1]


def test_a_relay_passes_one_hop_below_its_source_and_is_deleted_above():
    seen = {0: [(0, 101, 2)]}  # agent 0's source trace: novelty 4, support 3, TTL 4
    within = play(Script(3, 2, seen), relayer(3, 2, 3), 2)  # its source less one in every part
    assert relayed(within) == [[3, 2, 3]] * 2 and within.summary(0)["relays_capped"] == 0
    above = play(Script(3, 2, seen), relayer(3, 3, 3), 2)  # support 3 keeps its source's: not a hop below
    assert relayed(above) == [] and above.summary(0)["relays_capped"] == 1
    assert above.summary(0)["candidate_writes"] == 2  # agent 0's write and the relay, each a candidate
    uncapped = play(Script(3, 2, seen), relayer(3, 3, 3), 2, formal={"relay": {"enabled": False}})
    assert relayed(uncapped) == [[3, 3, 3]] * 2  # the validator's bound alone: support at most, TTL below


def test_a_relay_of_a_source_below_the_minimums_is_blocked():
    seen = {0: [(0, 101, 2)]}
    runtime = play(Script(3, 2, seen), relayer(2, 1, 3), 2, formal={"relay": {"min_support": 4}})  # source: 3
    assert relayed(runtime) == [] and runtime.summary(0)["relays_capped"] == 1


def test_a_relay_step_that_leaves_nothing_to_relay_is_a_config_error():
    with pytest.raises(ConfigError, match=r"formal\.relay\.min_support: 1 is below what relay\.step 4 leaves"):
        params(formal={"relay": {"step": 4, "min_support": 1}})
    with pytest.raises(ConfigError, match=r"formal\.relay\.min_ttl: 2 is below"):
        params(formal={"relay": {"step": 2, "min_support": 2, "min_novelty": 2}})


def challenger(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
    """Agent 0 reports claim 101 in round 0; agent 2 challenges it in round 1."""
    if step == 0 and agent == 0:
        return record(claim=101, direction="E")
    if step == 1 and agent == 2:
        return record(claim=101, conflict=4)
    return record()


def test_a_controllers_unverified_challenge_is_blocked_and_a_verified_one_written():
    seen = {0: [(0, 101, 2)]}
    unverified = play(Script(3, 2, seen), challenger, 2)
    assert writes(unverified, 2) == []
    summary = unverified.summary(0)
    assert summary["unverified_challenge_candidates"] == 1 and summary["unverified_challenges_blocked"] == 1
    assert summary["challenges"] == 0
    verified = play(Script(3, 2, seen, refuted={(2, 101)}), challenger, 2)
    assert writes(verified, 2) == [1]
    summary = verified.summary(0)
    assert summary["challenges"] == 1 and summary["verified_challenges"] == 1 and summary["candidate_writes"] == 2
    uninhibited = play(Script(3, 2, seen), challenger, 2, formal={"inhibition": {"enabled": False}})
    assert writes(uninhibited, 2) == [1] and uninhibited.summary(0)["unverified_challenges_blocked"] == 0


def test_a_relayed_challenge_is_counted_as_the_challenge_it_is_labelled():
    seen = {0: [(0, 101, 2)]}

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        if step == 2 and agent == 1:  # passes agent 2's challenge on, a hop below it
            return record(claim=101, novelty=3, support=3, conflict=4, ttl=3)
        return challenger(step, agent, view)

    runtime = play(Script(3, 3, seen, refuted={(2, 101)}), reply, 3)
    assert writes(runtime, 1) == [2]
    summary = runtime.summary(0)
    assert summary["mode_challenge"] == 2 and summary["challenges"] == 2 and summary["verified_challenges"] == 1


def test_with_every_part_switched_off_a_controller_gets_the_validator_alone():
    seen = {t: [(0, 101, 2)] for t in range(4)}

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        if agent == 0:
            return record(claim=101, direction="E")
        return record(commit=101) if view["incident_fields"] else record()

    runtime = play(Script(2, 4, seen, refuted={(1, 101)}), reply, 4, formal=OFF)
    assert writes(runtime, 0) == [0, 1, 2, 3]
    assert runtime.commitment[1, 0] == 101  # one channel, a refuted claim: nothing stops it


def test_a_controller_on_its_own_route_is_silenced_on_a_rival_claim_of_its_kind():
    seen = {0: [(0, 101, 2)], 1: [(1, 102, 6)]}  # agent 1 follows its own claim 102, of 101's kind

    def reply(step: int, agent: int, view: dict[str, Any]) -> dict[str, Any]:
        if step == 0 and agent == 0:
            return record(claim=101, direction="E")
        if step == 1 and agent == 1:
            return record(claim=101, novelty=3, support=3, ttl=3)
        return record()

    runtime = play(Script(3, 2, seen, route=[1]), reply, 2)
    assert writes(runtime, 1) == []
    summary = runtime.summary(0)
    assert summary["relay_candidates_route_active"] == 1 and summary["relays_silenced"] == 1
    unprotected = play(Script(3, 2, seen, route=[1]), reply, 2, formal={"relay": {"route_protection": False}})
    assert writes(unprotected, 1) == [1]


# On the suites ------------------------------------------------------------------------------------

TABLE_11 = (
    "candidate_writes",
    "writes_kept",
    "deposit_candidates",
    "spatial_repeats_blocked",
    "refreshes",
    "challenges",
    "unverified_challenge_candidates",
    "unverified_challenges_blocked",
    "relay_candidates_route_active",
    "relays_silenced",
)
BEFORE = Path(__file__).parent / "data" / "scripted_controller_before_the_formal_system.json"


def swarm_records(method: dict[str, Any], task: str, seeds: int = 3, n: int = 16) -> list[Any]:
    config = {
        "tasks": {"t": {"kind": "swarmbench", "task": task}},
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [n], "seeds": seeds}},
    }
    (block,) = all_blocks(validate(config, "formal.yaml"), Path("formal.yaml").parent)["s"]
    return play_block(list(block.cells()))


@pytest.mark.parametrize("task", ["pursuit", "foraging"])
def test_with_the_formal_system_off_the_scripted_controller_plays_as_before(task):
    before = json.loads(BEFORE.read_text())["summaries"]
    for seed, record in enumerate(swarm_records({"kind": "scripted_controller", "formal": OFF}, task)):
        old = before[f"{task}/{seed}"]
        # every number as before, but the candidates, which the runtime now counts for every controller
        counted = {"candidate_writes", "deposit_candidates"}
        same = [k for k in old if k not in counted]
        assert {k: record.summary[k] for k in same} == {k: old[k] for k in same}
        assert old["candidate_writes"] == 0 and record.summary["candidate_writes"] > 0


@pytest.mark.parametrize("task", ["pursuit", "foraging"])
def test_a_model_given_the_scripted_controllers_records_gets_the_same_counters(task, tmp_path):
    """The `waggle` method (a model through the ladder) with a scripted backend that replies with what
    the scripted controller wrote: the formal system counts both alike, and its counters are non-zero."""
    (scripted,) = swarm_records({"kind": "scripted_controller", "keep_views": True}, task, seeds=1)
    views = scripted.table("views").to_pylist()
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(record_for(json.loads(row["view"]))) + "\n" for row in views))
    (model,) = swarm_records({"kind": "waggle", "backend": "scripted", "model": str(replies)}, task, seeds=1)
    assert model.summary["ladder_executable"] == len(views) and model.summary["model_calls"] == len(views)
    ours = {k: model.summary[k] for k in (*TABLE_11, "commits", "commits_gated", "score")}
    assert ours == {k: scripted.summary[k] for k in ours}
    assert all(ours[k] > 0 for k in ("candidate_writes", "writes_kept", "deposit_candidates"))
    assert ours["spatial_repeats_blocked"] > 0
    assert ours["commits_gated"] > 0  # the scripted rule commits wherever two channels carry a claim


def silo_and_net_records(kind: str) -> list[Any]:
    config = {
        "tasks": {
            "silo": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9},
            "net": {"kind": "agentsnet", "problem": "consensus", "family": "delaunay"},
        },
        "methods": {"m": {"kind": kind, "keep_views": True} if kind != "fixedswarm" else {"kind": kind}},
        "studies": {"s": {"tasks": ["silo", "net"], "methods": ["m"], "populations": [8], "seeds": 2}},
    }
    blocks = all_blocks(validate(config, "formal.yaml"), Path("formal.yaml").parent)["s"]
    return [record for block in blocks for record in play_block(list(block.cells()))]


def test_a_commitment_on_silobench_and_agentsnet_lasts_and_its_agent_sees_it():
    for record in silo_and_net_records("scripted_controller"):
        shown = [json.loads(v)["local_commitment"] for v in record.table("views").column("view").to_pylist()]
        held = sum(c is not None for c in shown)
        assert held > 0  # a commitment outlives the round it was made in, and the view shows it
        synthesised = record.summary["mode_synthesize"]
        assert record.summary["commits"] < synthesised  # a renewal is not a new commitment
    for record in silo_and_net_records("fixedswarm"):
        assert record.summary["commits"] > 0


def test_a_silobench_frame_carries_its_senders_proposal_intent_to_the_receivers_view():
    """ "A directed frame jointly carries one compact trace, proposal intent, and one task snapshot": each
    view lists the round's frames by channel, each with the proposal its sender's own view named the
    round it sent; AgentsNet's views list none."""
    matched = 0
    for record in silo_and_net_records("scripted_controller"):
        views = record.table("views").to_pandas()
        parsed = {(int(s), int(a)): json.loads(v) for s, a, v in zip(views["step"], views["agent"], views["view"])}
        if "silo_task" not in record.summary:
            assert all("frames" not in view["private_state"] for view in parsed.values())
            continue
        frames = {key: view["private_state"]["frames"] for key, view in parsed.items()}
        assert sum(map(len, frames.values())) == record.summary["delivered_frames"] > 0
        traces = record.table("traces").to_pandas()
        writer_on = dict(zip(zip(traces["receiver"], traces["channel"]), traces["writer"]))  # fixed per episode
        for (step, receiver), listed in frames.items():
            channels = [frame["channel"] for frame in listed]
            assert channels == sorted(set(channels))  # one frame per sender, by channel
            arrived = traces[(traces["step"] == step - 1) & (traces["receiver"] == receiver)]
            assert set(arrived["channel"]) <= set(channels)  # a trace comes in a frame
            for frame in listed:
                writer = writer_on.get((receiver, frame["channel"]))
                if writer is not None:
                    assert frame["intent"] == parsed[(step - 1, writer)]["worker_proposal"]
                    matched += 1
    assert matched > 0
