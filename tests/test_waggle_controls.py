"""The interface-matched controls (nocomm, nativemsg, fixedswarm) as methods: the conformance checks on
SwarmBench and Silo-Bench, what each sends, the `traces` side table, and the config errors for a
suite without a Waggle adapter and for Silo-Bench off p2p ports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine import conformance
from hivebench.engine.loop import play_block
from hivebench.suites.swarmbench import TASKS

CONTROLS = ["nocomm", "nativemsg", "fixedswarm"]


@pytest.mark.parametrize("kind", CONTROLS)
def test_each_control_passes_the_conformance_checks(kind):
    cells = conformance.example_cells("swarmbench", kind, seeds=3)
    assert conformance.cell_problems(cells) == []


def play(task: str, kind: str, seeds=(0, 1), n: int = 12, rounds: int = 30):
    cells = conformance.example_cells("swarmbench", kind, seeds=len(seeds), population=n)
    for cell in cells:
        cell["task"]["params"] = {**cell["task"]["params"], "task": task, "rounds": rounds}
    return play_block(cells)


@pytest.mark.parametrize("task", TASKS)
def test_nocomm_sends_nothing_and_fixedswarm_writes_only_traces(task):
    for record in play(task, "nocomm"):
        assert record.summary["messages"] == 0 and record.summary["delivered_per_agent"] == 0
        assert "traces" not in record.tables
    for record in play(task, "fixedswarm"):
        assert record.summary["messages"] == 0  # nothing on the task's own medium
        traces = record.table("traces")
        assert traces.num_rows == record.summary["trace_deliveries"]
        assert record.summary["delivered_frames"] == record.summary["trace_deliveries"]  # one trace per frame
        assert record.summary["delivered_per_agent"] == record.summary["trace_deliveries"] / 12
        assert record.summary["model_calls"] == 0 and record.summary["invalid_records"] == 0
        if task in ("pursuit", "foraging", "transport") and traces.num_rows:
            assert set(traces.column_names) >= {"step", "writer", "receiver", "channel", "claim", "ttl"}
            assert (np.array(traces["ttl"]) >= 1).all() and (np.array(traces["support"]) <= 4).all()


def test_nativemsg_sends_the_heuristics_messages_over_the_tasks_contacts():
    records = play("pursuit", "nativemsg", seeds=(0, 1, 2))
    assert sum(r.summary["messages"] for r in records) > 0
    for record in records:
        decided = np.asarray(record.agents["step"]) < 30  # the last state's messages reach no decision
        heard = int(np.sum(np.asarray(record.agents["heard"])[decided]))
        assert record.summary["native_deliveries"] == heard  # what the task delivered, counted by receivers


def test_fixedswarm_keeps_the_papers_counters_consistent():
    for task in ("pursuit", "foraging", "transport"):
        for record in play(task, "fixedswarm", seeds=(0, 1, 2), n=16, rounds=60):
            s = record.summary
            assert s["writes_kept"] <= s["candidate_writes"]
            assert s["spatial_repeats_blocked"] <= s["deposit_candidates"]
            assert s["unverified_challenges_blocked"] == s["unverified_challenge_candidates"]  # it writes none
            assert s["relays_silenced"] <= s["relay_candidates_route_active"]
            # the per-agent columns (from the field's traffic) against the summary's counts
            assert int(np.sum(record.agents["traces_sent"])) == s["traces_written"]
            assert int(np.sum(record.agents["traces_heard"])) == s["trace_deliveries"]
            modes = record.agents["mode"].to_pylist()
            written = sum(m in ("deposit", "relay", "challenge") for m in modes)
            assert written <= s["writes_kept"] <= written + modes.count("synthesize")  # a commit outranks its write


@pytest.mark.parametrize("kind", CONTROLS)
def test_a_control_on_a_suite_without_an_adapter_is_a_config_error(kind):
    config = {
        "tasks": {"ring": {"kind": "coloring"}},
        "methods": {"control": {"kind": kind}},
        "studies": {"s": {"tasks": ["ring"], "methods": ["control"], "populations": [3], "seeds": 1}},
    }
    with pytest.raises(ConfigError, match="methods.control.kind: the Waggle runtime has no adapter for loopbench"):
        validate(config, "controls.yaml")


SILO = {"kind": "silobench", "task": ["I-09", "II-11", "III-23"], "topology": "regular3", "rounds": 9}


def silo_records(kind: str, n: int = 8, seeds: int = 3, task: dict | None = None) -> list:
    config = {
        "tasks": {"silo": task or SILO},
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["silo"], "methods": ["m"], "populations": [n], "seeds": seeds}},
    }
    blocks = all_blocks(validate(config, "silo.yaml"), Path("silo.yaml").parent)["s"]
    return [record for block in blocks for record in play_block(list(block.cells()))]


@pytest.mark.parametrize("kind", CONTROLS)
@pytest.mark.parametrize("submission", ["end", "any_round"])
def test_each_control_passes_the_conformance_checks_on_silobench(kind, submission):
    task = {"protocol": "p2p", "topology": "regular3", "rounds": 6, "submission": submission}
    cells = conformance.example_cells("silobench", kind, seeds=3, task=task)
    if submission == "end":
        assert conformance.cell_problems(cells) == []
    else:  # episodes that end early: check_record expects every episode to run the horizon
        for check in ("same episode", "lockstep", "any block"):
            conformance.CHECKS[check](cells)


def test_on_silobench_nocomm_answers_as_local_and_the_talking_controls_as_the_flood():
    local, nocomm = silo_records("local"), silo_records("nocomm")
    assert [r.summary["partial"] for r in nocomm] == [r.summary["partial"] for r in local]
    assert all(r.summary["messages"] == 0 for r in nocomm)
    for kind in ("nativemsg", "fixedswarm"):
        records = silo_records(kind)
        assert [r.summary["success"] for r in records] == [r.summary["success"] for r in silo_records("distributed")]
        for record in records:
            s = record.summary
            frames = s["delivered_frames"]
            assert s["native_deliveries"] <= frames <= s["native_deliveries"] + s.get("trace_deliveries", 0)
            assert s["delivered_per_agent"] == frames / 8


def test_the_waggle_controls_run_silobench_on_p2p_ports_only():
    for protocol in ("broadcast", "store"):
        task = {**SILO, "protocol": protocol, "topology": "complete" if protocol == "store" else "regular3"}
        with pytest.raises(ConfigError, match=f"protocol: {protocol}: the Waggle runtime runs Silo-Bench on p2p ports"):
            silo_records("fixedswarm", task=task)


@pytest.mark.parametrize("kind", CONTROLS)
def test_each_control_passes_the_conformance_checks_on_agentsnet(kind):
    assert conformance.cell_problems(conformance.example_cells("agentsnet", kind, seeds=3)) == []


def net_records(kind: str, problem: str) -> list:
    config = {
        "tasks": {"net": {"kind": "agentsnet", "problem": problem, "family": "watts_strogatz"}},
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["net"], "methods": ["m"], "populations": [8], "seeds": 3}},
    }
    blocks = all_blocks(validate(config, "net.yaml"), Path("net.yaml").parent)["s"]
    return [record for block in blocks for record in play_block(list(block.cells()))]


@pytest.mark.parametrize("problem", ["coloring", "vertex_cover", "matching", "leader_election", "consensus"])
def test_on_agentsnet_nocomm_is_silent_and_the_talking_controls_send_the_algorithms_messages(problem):
    for record in net_records("nocomm", problem):
        assert record.summary["messages"] == 0
    distributed = net_records("distributed", problem)
    for kind in ("nativemsg", "fixedswarm"):
        records = net_records(kind, problem)
        assert [r.summary["messages"] for r in records] == [r.summary["messages"] for r in distributed]
        if problem in ("leader_election", "consensus", "coloring"):  # the same algorithm, exact in R rounds
            assert all(r.summary["solved"] == 1.0 for r in records)


def test_episodes_of_different_lengths_in_one_block_keep_their_own_states():
    # the paper's R follows each graph's diameter: one block, episodes of several lengths
    cells = conformance.example_cells(
        "agentsnet", "fixedswarm", seeds=6, task={"problem": "consensus", "rounds": "paper"}
    )
    assert len({c["seed"] for c in cells}) == 6
    assert conformance.cell_problems(cells) == []
    records = play_block(cells)
    assert len({r.summary["rounds"] for r in records}) > 1


def test_on_silobench_p2p_over_the_complete_topology_the_owners_send_their_own_shards():
    task = {**SILO, "topology": "complete", "rounds": 2}
    for record in silo_records("fixedswarm", n=80, seeds=1, task=task):
        assert record.summary["success"] == 1.0
        assert record.summary["messages"] == 80 * 79  # each owner to each other agent, once


def test_a_silo_shard_of_records_with_an_id_goes_into_the_view_as_text():
    """II-18's and III-29's records carry an `id` field (the task's data): the view's recursive check
    refuses the key at any depth, so those shards are shown as their JSON text, whole."""
    import json

    from hivebench.agents.waggle.estimate import shown_views

    for task in ("II-18", "III-29", "I-04"):
        config = {
            "tasks": {"t": {"kind": "silobench", "task": task, "topology": "regular3", "rounds": 1}},
            "methods": {"m": {"kind": "scripted_controller"}},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
        }
        (block,) = all_blocks(validate(config, "x.yaml"), Path("."))["s"]
        _, views = shown_views(block.shared)
        shard = views[0]["private_state"]["shard"]
        if task == "I-04":
            assert isinstance(shard, list)  # numbers stay as they are
        else:
            assert isinstance(shard, str) and "id" in json.loads(shard)[0]


def test_silobenchs_section_and_the_matrix_count_a_runtime_methods_deliveries_as_frames():
    from hivebench.suites.silobench.report import summary_table
    from hivebench.waggle.study.matrix import measures

    records = silo_records("fixedswarm", n=8, seeds=3)  # three tasks, three seeds each
    seeds = [i % 3 for i in range(len(records))]
    episodes = pd.DataFrame([r.summary for r in records]).assign(
        method="fixedswarm", suite="silobench", population=8, seed=seeds, compat="hivebench"
    )
    frames = episodes["delivered_frames"] / 8
    assert (frames != episodes["deliveries"] / 8).any()  # a trace and a task message to one receiver: one frame
    row = summary_table(episodes, 200, 0.95, 0).set_index("level").loc["all"]
    assert row["delivered_per_agent"] == pytest.approx(frames.mean())
    matrix = measures(episodes, {})
    assert matrix[matrix["measure"] == "delivered per agent"]["value"].tolist() == pytest.approx(frames.tolist())
