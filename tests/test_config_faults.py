"""Configs the fault probe of issue 21 found accepted and then broken or silently wrong: each is now
refused by validation with the key named (or handled), and what held still holds."""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from conftest import REPO, write_config

from hivebench import config as config_module
from hivebench.anchors import AnchorError, load_anchors, normalise
from hivebench.cells import all_blocks
from hivebench.config import MAX_JOB_BYTES, ConfigError, held_episodes, load, validate
from hivebench.engine.jobs import summary_row
from hivebench.engine.loop import play_block
from hivebench.ids import digest


def one_task(task: dict[str, Any], method: str, populations: list[int], seeds: int = 1, **study: Any) -> dict[str, Any]:
    return {
        "tasks": {"t": task},
        "methods": {"m": {"kind": method, "seeds_per_job": 100}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": populations, "seeds": seeds, **study}},
    }


def refusal(config: dict[str, Any], tmp_path: Path) -> str:
    """The message of the ConfigError `config` gets, written to a file and loaded (as `hivebench
    validate` does)."""
    path = write_config(tmp_path / "study.yaml", config)
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message and "Traceback" not in message
    return message


def played(config: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    """(cell, record) of every cell of a validated config's study `s`."""
    filled = validate(config, "x.yaml")
    out = []
    for block in all_blocks(filled, Path("x.yaml").parent)["s"]:
        cells = list(block.cells())
        out += list(zip(cells, play_block(cells)))
    return out


# 1. A message cap below what a classical algorithm sends


def agentsnet(problem: str, cap: int, family: str = "barabasi_albert") -> dict[str, Any]:
    return {"kind": "agentsnet", "problem": problem, "family": family, "message_chars": cap, "rounds": 8}


def test_an_agentsnet_cap_below_the_distributed_algorithms_messages_is_refused_naming_the_key(tmp_path):
    message = refusal(one_task(agentsnet("coloring", 1), "distributed", [4]), tmp_path)
    assert "tasks.t.message_chars: 1 is below the 15 characters" in message
    assert "at N = 4; raise it to at least 15 (study 's', method 'm')" in message
    # random sends nothing: any cap will do
    validate(one_task(agentsnet("coloring", 1), "random", [4]), "x.yaml")


AGENTSNET_PROBLEMS = ["coloring", "vertex_cover", "matching", "leader_election", "consensus"]


@pytest.mark.parametrize("problem", AGENTSNET_PROBLEMS)
@pytest.mark.parametrize("n", [4, 12, 230])
def test_the_agentsnet_minimum_cap_is_what_the_longest_classical_message_can_take(problem, n):
    """The minimum is from the rules (worst case over seeds): the longest text the algorithm's
    dictionaries can send at n. One below it is refused; at it, every seed plays, and no message was
    longer."""
    from hivebench.suites.agentsnet import classical_message_chars
    from hivebench.suites.agentsnet.baselines import (
        SIGNALS,
        _coloring_texts,
        _independent_set_texts,
    )
    from hivebench.suites.agentsnet.names import name_pool

    longest_name = max(map(len, name_pool(n)))
    worst = {
        "coloring": max(map(len, _coloring_texts(n).to_pylist())),  # Δ + 1 colours, at most n
        "vertex_cover": max(map(len, _independent_set_texts(n).to_pylist())),
        "matching": max(map(len, SIGNALS.to_pylist())),
        "leader_election": longest_name,
        "consensus": longest_name + 2,  # "<name> <bit>"
    }[problem]
    minimum = classical_message_chars(problem, n)
    assert minimum == worst
    with pytest.raises(ConfigError, match=f"message_chars: {minimum - 1} is below the {minimum} characters"):
        validate(one_task(agentsnet(problem, minimum - 1), "distributed", [n]), "x.yaml")
    if n > 12:
        return  # playing 230 agents adds nothing the smaller ones do not check
    for _, record in played(one_task(agentsnet(problem, minimum), "distributed", [n], seeds=6)):
        assert record.summary["truncated_messages"] == 0
        sizes = record.tables["messages"]
        sizes = sizes() if callable(sizes) else sizes
        assert max(sizes.column("size").to_pylist(), default=0) <= minimum


def test_the_longest_name_is_the_longest_in_the_pool():
    from hivebench.suites.agentsnet.names import longest_name, name_pool

    for n in (1, 9, 10, 200, 201, 209, 210, 1999, 2000, 2001, 2009, 2010, 10000):
        assert longest_name(n) == max(map(len, name_pool(n))), n


def test_a_silobench_cap_that_no_shard_fits_is_refused_for_the_methods_that_send_shards(tmp_path):
    task = {"kind": "silobench", "task": "I-01", "message_chars": 1, "rounds": 2}
    for method in ("distributed", "random"):
        message = refusal(one_task(task, method, [4]), tmp_path)
        assert "tasks.t.message_chars: 1 is below the" in message and "I-01" in message
    validate(one_task(task, "local", [4]), "x.yaml")  # sends nothing


SILO_SAMPLE = ["I-01", "I-04", "I-07", "II-13", "II-18", "II-20", "III-23", "III-27", "III-29", "III-30"]


@pytest.mark.parametrize("task", SILO_SAMPLE)
def test_the_silobench_minimum_cap_is_a_bound_on_every_shard_and_enough_to_solve(task):
    """The minimum covers the widest shard the task's rules allow (every generated shard, over seeds
    and N, fits it), and at that cap `distributed` is exact on the complete topology."""
    from hivebench.suites.silobench import classical_message_chars
    from hivebench.suites.silobench.exchange import ShardTexts
    from hivebench.suites.silobench.instances import instance

    for n in (2, 5, 16):
        minimum = classical_message_chars(task, n)
        widest = max(int(ShardTexts([instance(task, n, seed).shards]).costs.max()) for seed in range(20))
        assert widest <= minimum
    params = {"kind": "silobench", "task": task, "rounds": 1, "message_chars": classical_message_chars(task, 5)}
    for cell, record in played(one_task(params, "distributed", [5], seeds=3)):
        assert record.summary["success"] == 1.0, (cell["seed"], record.summary)
    with pytest.raises(ConfigError, match="message_chars"):
        validate(one_task({**params, "message_chars": params["message_chars"] - 1}, "distributed", [5]), "x.yaml")


def test_every_silobench_task_has_a_minimum_cap():
    from hivebench.suites.silobench import classical_message_chars
    from hivebench.suites.silobench.catalogue import TASKS
    from hivebench.suites.silobench.exchange import ShardTexts
    from hivebench.suites.silobench.instances import instance

    for entry in TASKS:
        for n in (2, 7):
            widest = max(int(ShardTexts([instance(entry.id, n, seed).shards]).costs.max()) for seed in range(5))
            assert widest <= classical_message_chars(entry.id, n), entry.id


# 2. and 4. The anchors file


def swarm_study(anchors: str | None) -> dict[str, Any]:
    config = one_task({"kind": "swarmbench", "task": "pursuit", "rounds": 5}, "random", [8])
    if anchors is not None:
        config["anchors"] = anchors
    return config


def test_an_anchors_file_without_an_anchored_task_is_refused_naming_that_file(tmp_path):
    (tmp_path / "mine.yaml").write_text("swarmbench:\n  foraging:\n    8: {value: 3.8, provenance: x}\n")
    message = refusal(swarm_study("mine.yaml"), tmp_path)
    assert f"anchors: {tmp_path / 'mine.yaml'}: has no anchor for swarmbench/pursuit" in message
    assert "config/anchors.yaml" not in message
    (tmp_path / "mine.yaml").write_text("")
    assert "has no anchor for swarmbench/pursuit" in refusal(swarm_study("mine.yaml"), tmp_path)
    validate(swarm_study(None), str(REPO / "config" / "x.yaml"))  # the workbench's own file has it


def test_a_missing_anchor_at_score_time_names_the_file_it_was_read_from(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("swarmbench:\n  foraging:\n    8: {value: 3.8, provenance: x}\n")
    with pytest.raises(AnchorError) as info:
        normalise(1.0, "swarmbench", "pursuit", load_anchors(path))
    assert str(path) in str(info.value) and "config/anchors.yaml" not in str(info.value)


@pytest.mark.parametrize("key", ["'N = 2'", "2.5", "true", "0"])
def test_a_published_population_that_is_not_a_positive_integer_is_refused(tmp_path, key):
    published = (
        "published:\n  silobench:\n    populations:\n      provenance: p\n      columns: [success]\n"
        f"      rows:\n        Model: {{{key}: [61.2], 5: [48.5]}}\n"
    )
    (tmp_path / "mine.yaml").write_text("swarmbench:\n  pursuit:\n    8: {value: 6.2, provenance: x}\n" + published)
    message = refusal(swarm_study("mine.yaml"), tmp_path)
    assert f"anchors: {tmp_path / 'mine.yaml'}: published.silobench.populations.rows.Model:" in message
    assert "population" in message


# 3. A Silo-Bench study of oracle cells only


def test_a_silobench_report_of_oracle_cells_only(tmp_path):
    from hivebench.report import Section
    from hivebench.suites.silobench.report import render

    config = one_task({"kind": "silobench", "task": ["I-01", "II-13"], "oracle": True}, "distributed", [4], seeds=2)
    rows = [summary_row(cell, digest(cell), record.summary) for cell, record in played(config)]
    episodes = pd.DataFrame(rows)
    html = render(Section(episodes, tmp_path, "silobench/", 200, 0.95, 0, {}, {}))
    assert "4 episodes" in html
    table = pd.read_csv(tmp_path / "silobench.csv")
    assert set(table["topology"]) == {"none"} and table["success"].tolist() == [1.0] * len(table)


# 5. What a job allocates and computes, per topology


@pytest.mark.parametrize(
    ("topology", "n", "message"),
    [
        (
            "complete",
            20000,
            "protocol: p2p on topology: complete (the default) runs at most 500 agents, got 20,000 "
            "(docs/limits.md; topology: regular3 runs up to 5,000, protocol: store up to 5,000)",
        ),
        (
            "regular3",
            20000,
            "protocol: p2p on topology: regular3 runs at most 5,000 agents, got 20,000 (docs/limits.md)",
        ),
    ],
)
def test_silobench_populations_are_bounded_per_topology(tmp_path, topology, n, message):
    task = {"kind": "silobench", "task": "I-01", "topology": topology, "rounds": 1}
    text = refusal(one_task(task, "distributed", [8, n]), tmp_path)
    assert f"studies.s.populations[1]: {message}" in text and "(task 't')" in text


def test_silobench_limits_accept_what_they_allow():
    validate(one_task({"kind": "silobench", "task": "I-01", "rounds": 1}, "distributed", [500]), "x.yaml")
    validate(
        one_task({"kind": "silobench", "task": "I-01", "topology": "regular3", "rounds": 1}, "distributed", [5000]),
        "x.yaml",
    )


def test_the_store_is_bounded_by_its_own_cost_not_the_complete_topologys(tmp_path):
    """The store's topology is complete by default, but it has no N^2 messages a round: it runs up to
    5,000 agents (N^2 bytes per agent's holdings, as regular3), and the message names the protocol."""
    task = {"kind": "silobench", "task": "I-01", "protocol": "store", "rounds": 1}
    validate(one_task(task, "distributed", [5000]), "x.yaml")
    message = refusal(one_task(task, "distributed", [5002]), tmp_path)
    assert "studies.s.populations[0]: protocol: store runs at most 5,000 agents, got 5,002" in message
    assert "topology" not in message  # never set: the store's is always complete


def test_the_store_limit_is_within_the_job_memory_its_measured_cost_allows():
    from hivebench.suites.silobench import SiloHooks

    params = {
        "task": "I-01",
        "oracle": False,
        "topology": "complete",
        "protocol": "store",
        "rounds": 9,
        "message_chars": 16000,
    }
    assert SiloHooks().episode_bytes(params, "random", 5000) < MAX_JOB_BYTES  # 1.3 GB measured (55 N^2)


def test_a_silobench_job_is_bounded_by_the_episodes_it_holds_side_by_side(tmp_path):
    task = {"kind": "silobench", "task": "I-01", "rounds": 1}
    config = one_task(task, "distributed", [8, 500], seeds=100)
    message = refusal(config, tmp_path)
    assert "methods.m.seeds_per_job: 100 episodes of task 't' at N = 500 (study 's') side by side hold about" in message
    fits = int(message.split("the limit of a job is 8 GiB (seeds_per_job: ")[1].split(" fits)")[0])
    assert 1 < fits < 100 and "N = 8 " not in message
    config["methods"]["m"]["seeds_per_job"] = fits + 1
    assert f"{fits + 1} episodes of task 't' at N = 500" in refusal(config, tmp_path)
    config["methods"]["m"]["seeds_per_job"] = fits
    validate(config, "x.yaml")
    validate(one_task(task, "local", [500], seeds=100), "x.yaml")  # sends nothing: N^2 per episode
    flood = one_task({**task, "topology": "regular3", "rounds": 100}, "distributed", [4000])
    assert "studies.s: task 't' at N = 4,000 with method 'm' holds about" in refusal(flood, tmp_path)


# The child's own peak: VmHWM (of its own memory, unlike ru_maxrss, which an exec'd child inherits from
# pytest), reset after the imports by writing 5 to clear_refs, less the resident memory at that point.
MEASURED_JOB = """
import gc, sys
sys.path.insert(0, 'tests')
from test_config_faults import one_task, played
def status(key):
    return next(int(line.split()[1]) * 1024 for line in open('/proc/self/status') if line.startswith(key))
task = {'kind': 'silobench', 'task': sys.argv[4], 'rounds': int(sys.argv[3]), 'topology': sys.argv[1],
        'oracle': sys.argv[5] == 'oracle'}
played(one_task(task, 'distributed', [4]))  # every module imported first
gc.collect()
with open('/proc/self/clear_refs', 'w') as refs:
    refs.write('5')
before = status('VmRSS:')
played(one_task(task, 'distributed', [int(sys.argv[2])], seeds=2))
print(status('VmHWM:') - before)
"""


@pytest.mark.parametrize(
    ("topology", "n", "rounds", "task", "oracle"),
    [("complete", 300, 1, "I-01", ""), ("regular3", 800, 9, "I-01", ""), ("complete", 20000, 1, "III-27", "oracle")],
)
def test_the_silobench_memory_estimate_bounds_a_real_job(topology, n, rounds, task, oracle):
    """The job estimate (the episodes held at once, each by the episode estimate) is above what a job
    of two episodes really takes, and not far above it (within 8x): on each topology (a flood keeps
    each round's messages) and for oracle cells (III-27's scores: once 3N x 3N)."""
    from hivebench.suites.silobench import SiloHooks

    command = [sys.executable, "-c", MEASURED_JOB, topology, str(n), str(rounds), task, oracle]
    used = int(subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True).stdout)
    params = {
        "task": task,
        "oracle": bool(oracle),
        "topology": topology,
        "protocol": "p2p",
        "rounds": rounds,
        "message_chars": 16000,
    }
    estimate = held_episodes(2, n) * SiloHooks().episode_bytes(params, "distributed", n)
    assert estimate / 8 < used < estimate, (topology, used, estimate)


def test_a_job_holds_the_episodes_of_one_lockstep_group_at_once():
    """engine/jobs.py plays a job's cells LOCKSTEP_AGENTS agents at a time (the last record of a group
    still held while the next plays): what the config check counts."""
    from hivebench.engine import jobs

    assert config_module.LOCKSTEP_AGENTS == jobs.LOCKSTEP_AGENTS
    assert held_episodes(100, 1000) == 100 and held_episodes(7, 50_000) == 3 and held_episodes(1, 100_000) == 1
    assert held_episodes(100, 20_000) == 6 and held_episodes(5, 20_000) == 5


def test_job_memory_counts_the_episodes_played_at_once_not_the_seeds_per_job(monkeypatch, tmp_path):
    """100 seeds a job at N = 50,000 are played two at a time: 3 episodes of 2 GiB held (6 GiB) fit;
    at 3 GiB an episode they do not, and the hint is what fits (2, a whole group)."""
    from hivebench.suites.silobench import SiloHooks

    size = {"each": 2 * 2**30}
    monkeypatch.setattr(SiloHooks, "episode_bytes", lambda self, params, method, n: size["each"])
    config = one_task({"kind": "silobench", "task": "I-01", "oracle": True}, "distributed", [50_000], seeds=100)
    validate(config, "x.yaml")
    size["each"] = 3 * 2**30
    message = refusal(config, tmp_path)
    assert (
        "methods.m.seeds_per_job: 3 episodes of task 't' at N = 50,000 (study 's') side by side hold about 9.0 GiB"
        in message
    )
    assert "(seeds_per_job: 2 fits)" in message


def test_matrix_multiply_is_bounded_whatever_the_topology_also_as_an_oracle(tmp_path):
    task = {"kind": "silobench", "task": "III-30", "oracle": True}
    assert "III-30" in refusal(one_task(task, "distributed", [501]), tmp_path)
    validate(one_task(task, "distributed", [500]), "x.yaml")


def test_agentsnet_paper_rounds_accept_the_10000_nodes_the_readme_allows(tmp_path):
    task = {"kind": "agentsnet", "problem": "consensus", "family": "delaunay"}
    validate(one_task(task, "random", [2237, 10000]), "x.yaml")
    assert "AgentsNet graphs have at most 10,000 nodes" in refusal(one_task(task, "random", [10001]), tmp_path)


def test_agentsnet_paper_rounds_over_the_agent_steps_limit_stop_with_the_key_named(monkeypatch):
    """The diameter is known once the graph is built: an episode whose paper R would pass the
    agent-step limit stops there, naming `rounds` (a limit lowered to reach it on a small graph)."""
    from hivebench import config as config_module
    from hivebench.suite import TaskParamError
    from hivebench.suites.agentsnet.task import NetTask

    monkeypatch.setattr(config_module, "MAX_AGENT_STEPS", 100)
    task = NetTask(
        {"problem": "consensus", "family": "delaunay", "rounds": "paper", "message_chars": 1000, "instances": None}, 30
    )
    with pytest.raises(TaskParamError, match="agent-steps") as info:
        task.reset([0])
    assert info.value.key == "rounds"


# 6. Smaller


def test_a_utf16_config_is_refused_naming_the_file(config, tmp_path):
    path = tmp_path / "utf16.yaml"
    path.write_bytes(codecs.BOM_UTF16_LE + yaml.safe_dump(config).encode("utf-16-le"))
    with pytest.raises(ConfigError, match="UTF-16") as info:
        load(path)
    assert str(path) in str(info.value) and "UTF-8" in str(info.value)


@pytest.mark.parametrize(
    ("name", "mark", "codec"),
    [
        ("UTF-32", codecs.BOM_UTF32_BE, "utf-32-be"),
        ("UTF-32", codecs.BOM_UTF32_LE, "utf-32-le"),
        ("UTF-16", codecs.BOM_UTF16_BE, "utf-16-be"),
    ],
)
def test_a_utf32_or_utf16_config_is_refused_naming_its_encoding(config, tmp_path, name, mark, codec):
    path = tmp_path / "wide.yaml"
    path.write_bytes(mark + yaml.safe_dump(config).encode(codec))
    with pytest.raises(ConfigError) as info:
        load(path)
    assert f"not UTF-8: it starts with a {name} byte-order mark; save it as UTF-8" in str(info.value)


def test_a_long_string_is_shown_with_its_own_length():
    from hivebench.config import _shown

    assert _shown("x" * 200).endswith("... (200 characters)")
    assert _shown(list(range(200))).endswith("... (200 entries)")


def test_a_string_where_a_name_or_an_integer_is_allowed_is_told_both(tmp_path):
    task = {"kind": "agentsnet", "problem": "coloring", "family": "delaunay", "rounds": "3"}
    message = refusal(one_task(task, "random", [8]), tmp_path)
    assert "tasks.t.rounds: 'paper' was expected, or an integer from 1 to 10000 (got '3')" in message


def test_long_values_are_shortened_in_error_messages(config, tmp_path):
    config["studies"]["tiny"]["populations"] = list(range(3, 1004))
    message = refusal(config, tmp_path)
    assert "studies.tiny.populations:" in message and "is too long" in message
    assert "(1,001 entries)" in message and len(message) < 400


def test_what_held_still_holds_refused_with_the_key_and_no_traceback(tmp_path):
    """A sample of the probe's refused mutations of the three newer suites: each still names its key."""
    cases = [
        (
            one_task({"kind": "agentsnet", "problem": "colouring", "family": "delaunay"}, "random", [8]),
            "tasks.t.problem",
        ),
        (
            one_task(
                {"kind": "agentsnet", "problem": "coloring", "family": "delaunay", "message_chars": 0}, "random", [8]
            ),
            "tasks.t.message_chars",
        ),
        (one_task({"kind": "silobench", "task": "IV-31"}, "distributed", [4]), "tasks.t.task"),
        (
            one_task({"kind": "silobench", "task": "I-01", "topology": "regular3"}, "distributed", [5]),
            "studies.s.populations[0]",
        ),
        (one_task({"kind": "silobench", "task": "I-01", "rounds": 0}, "distributed", [4]), "tasks.t.rounds"),
        (one_task({"kind": "swarmbench", "task": "pursuit", "view": 4}, "random", [8]), "tasks.t.view"),
    ]
    for config, key in cases:
        assert f"{key}:" in refusal(config, tmp_path)
