"""The suites' differences from their reference code as settings: `compat: reference` selects the
reference's rules (SwarmBench: its Pursuit prey, its messages, its Flocking and Foraging; AgentsNet:
uncapped messages), each rule on its own behaves as the reference's code does, and hivebench's own
cells keep their identity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from hivebench.engine.block import Block
from hivebench.engine.media.outbox import Outbox
from hivebench.engine.media.radius import RadiusBroadcast
from hivebench.seeding import stream
from hivebench.suite import TaskParamError
from hivebench.suites import agentsnet, swarmbench
from hivebench.suites.swarmbench import SUITE, physics, rules
from hivebench.suites.swarmbench.levels import FLOOR, FOOD, NEST, WALL, Level, level, walled
from hivebench.suites.swarmbench.task import SwarmActions, SwarmTask
from hivebench.suites.swarmbench.world import ACTIONS, Worlds

A = {name: i for i, name in enumerate(ACTIONS)}
HOOKS = SUITE.tasks["swarmbench"].hooks


def pursuit_at(size: int, agents: list[tuple[int, int]], prey: tuple[int, int], **settings) -> rules.Pursuit:
    chosen = {**rules.HIVEBENCH, **settings}
    worlds = Worlds(
        [Level(walled(size), np.array(agents), prey=prey)], margin=2, pushable_prey=chosen["prey_pushable"] == "first"
    )
    level_ = Level(walled(size), np.zeros((len(agents), 2)), prey=prey)
    return rules.Pursuit(worlds, [level_], [0], rounds=20, settings=chosen)


def test_compat_reference_takes_every_reference_value_and_hivebench_cells_keep_their_identity():
    base = {"task": "pursuit", "rounds": 100}
    assert HOOKS.resolve(dict(base), None) == {**base, "to_sender": False}  # as cells stored it before
    assert HOOKS.resolve({**base, "compat": "hivebench"}, None) == {**base, "to_sender": False}
    reference = HOOKS.resolve({**base, "compat": "reference"}, None)
    assert reference == {
        **base,
        "to_sender": True,
        "message_cut": "ellipsis",
        "prey_danger": "reference",
        "prey_compares": "left_cell",
        "prey_respawn": "sampled",
        "prey_pushable": "first",
        "level_draws": "reference",
    }  # the Flocking and Foraging settings cannot act on Pursuit: not stored
    assert HOOKS.resolve({"task": "flocking", "compat": "reference"}, None) == {
        "task": "flocking",
        "to_sender": True,
        "message_cut": "ellipsis",
        "flocking_distance": "paired_shifts",
        "flocking_level": "fixed",
        "level_draws": "reference",
    }
    with pytest.raises(TaskParamError, match=r"only Foraging has this rule \(task: pursuit\)"):
        HOOKS.resolve({**base, "foraging_maze": "reference"}, None)  # given, it could not act: refused
    # the reference's levels are its own: its maze, its Flocking seed
    cases = [
        ("foraging", "foraging_maze", "reference", "serpentine"),
        ("flocking", "flocking_level", "fixed", "seeded"),
    ]
    for task, key, needed, ours in cases:
        params = HOOKS.resolve({"task": task, "view": 5, "level_draws": "reference"}, None)
        assert list(HOOKS.problems(params)) == [
            f"{key}: level_draws: reference plays the reference's own {task} levels, whose {key} is {needed} "
            f"(set {key}: {needed}, or compat: reference), not {ours}"
        ]
    assert swarmbench.behaviour(reference) == "reference"
    assert swarmbench.behaviour({**base, "to_sender": True}) == "to_sender: True"
    assert swarmbench.behaviour(HOOKS.resolve(dict(base), None)) == "hivebench"
    # one setting spelt out is one cell, whichever way it is given; a setting given wins over the mode
    assert HOOKS.resolve({**base, "prey_compares": "left_cell"}, None) == {
        **base,
        "to_sender": False,
        "prey_compares": "left_cell",
    }
    explicit = {**base, **{k: v for k, v in reference.items() if k not in base}}
    assert HOOKS.resolve(explicit, None) == reference
    mixed = HOOKS.resolve({**base, "compat": "reference", "to_sender": False}, None)
    assert mixed["to_sender"] is False and mixed["prey_pushable"] == "first"


def test_agentsnet_reference_messages_have_no_cap():
    hooks = agentsnet.SUITE.tasks["agentsnet"].hooks
    base = {"problem": "coloring", "family": "delaunay", "rounds": "paper", "instances": None}
    assert hooks.resolve(dict(base), None) == {**base, "message_chars": 1000}  # as cells stored it before
    assert hooks.resolve({**base, "compat": "reference"}, None) == {**base, "message_chars": None}
    assert hooks.resolve({**base, "compat": "reference", "message_chars": 500}, None)["message_chars"] == 500
    assert list(hooks.method_problems({**base, "message_chars": None}, "distributed", [16])) == []
    assert list(hooks.method_problems({**base, "message_chars": 5}, "distributed", [16]))  # under its need


def test_the_reference_prey_weighs_its_moves_against_the_cell_left_of_it():
    """Five agents in reach of the cell left of the prey, not of the prey's own cell: against that
    cell's danger the calm cell two to the right is better, so the reference's prey moves there."""
    agents = [(6, 3), (7, 3), (8, 3), (9, 3), (10, 3)]
    own = pursuit_at(16, agents, prey=(8, 8))
    own.update(0, np.zeros(5, dtype=np.int8))
    assert own.prey[0].tolist() == [8, 8]
    left = pursuit_at(16, agents, prey=(8, 8), prey_compares="left_cell")
    left.update(0, np.zeros(5, dtype=np.int8))
    assert left.prey[0].tolist() == [8, 10]


def test_the_reference_danger_window_runs_four_cells_before_and_three_after():
    """An agent 4 rows below a cell is in hivebench's window of it and not in the reference's; one 4
    rows above is in both. Weights: hivebench 10 per agent, 9 per wall; the reference 1 and 0.9."""
    below = pursuit_at(16, [(12, 8)], prey=(2, 2))
    above = pursuit_at(16, [(4, 8)], prey=(2, 2))
    assert below._danger()[0, 8 + 2, 8 + 2] == 10 and above._danger()[0, 8 + 2, 8 + 2] == 10
    below_ref = pursuit_at(16, [(12, 8)], prey=(2, 2), prey_danger="reference")
    above_ref = pursuit_at(16, [(4, 8)], prey=(2, 2), prey_danger="reference")
    assert below_ref._danger()[0, 8 + 2, 8 + 2] == 0 and above_ref._danger()[0, 8 + 2, 8 + 2] == 1
    # a cell beside the top-left corner: the reference's window holds walls rows 0..4 x columns 0..5
    # of the map, of which row 0 (6 cells) and column 0 (4 more) are walls: 10 x 0.9
    assert below_ref._danger()[0, 1 + 2, 2 + 2] == pytest.approx(9.0)


def test_the_reference_first_prey_is_pushed_and_the_respawned_one_is_static():
    pursuit = pursuit_at(10, [(5, 3), (5, 4)], prey=(5, 5), prey_pushable="first")
    worlds = pursuit.worlds
    assert worlds.grid[0, 5 + 2, 5 + 2] == worlds.agents  # the prey is a body, after the agents
    worlds.move(np.array([A["RIGHT"], A["RIGHT"]]))  # two pushers move one idle body behind them: the prey
    pursuit._pushed()
    assert pursuit.prey[0].tolist() == [5, 6] and worlds.position.tolist() == [[5, 4], [5, 5]]
    static = pursuit_at(10, [(5, 3), (5, 4)], prey=(5, 5))
    static.worlds.move(np.array([A["RIGHT"], A["RIGHT"]]))  # against a static prey nothing moves
    assert static.worlds.position.tolist() == [[5, 3], [5, 4]]

    caught = pursuit_at(10, [(4, 5), (6, 5), (5, 4), (5, 6)], prey=(5, 5), prey_pushable="first")
    caught.update(0, np.zeros(4, dtype=np.int8))
    assert caught.score.tolist() == [1.0] and caught.pushable.tolist() == [False]
    row, col = caught.prey[0] + 2
    assert caught.worlds.grid[0, row, col] == physics.STATIC


def danger_by_hand(size: int, agents: list[tuple[int, int]]) -> np.ndarray:
    """hivebench's danger of each map cell, counted cell by cell: 10 per agent and 9 per wall within
    Chebyshev distance 4."""
    walls = walled(size) == WALL
    danger = np.zeros((size, size), dtype=np.int64)
    for r in range(size):
        for c in range(size):
            near = [(i, j) for i in range(r - 4, r + 5) for j in range(c - 4, c + 5) if 0 <= i < size and 0 <= j < size]
            danger[r, c] = sum(10 * ((i, j) in agents) + 9 * walls[i, j] for i, j in near)
    return danger


def test_the_reference_respawn_takes_the_first_least_dangerous_of_its_samples():
    """The cell seed's prey stream draws H x W samples of the free cells; the prey goes to the first
    sample of least danger among them."""
    agents = [(4, 5), (6, 5), (5, 4), (5, 6)]
    caught = pursuit_at(10, agents, prey=(5, 5), prey_respawn="sampled")
    caught.update(0, np.zeros(4, dtype=np.int8))
    free = (walled(10) == FLOOR).ravel()
    free[[r * 10 + c for r, c in agents]] = False
    cells = np.flatnonzero(free)
    samples = cells[stream(0, "prey").integers(len(cells), size=100)]
    danger = danger_by_hand(10, agents).ravel()[samples]
    expected = samples[list(danger).index(danger.min())]
    assert tuple(caught.prey[0]) == divmod(int(expected), 10)
    assert caught.score.tolist() == [1.0]


def test_a_cut_message_ends_with_the_reference_ellipsis_and_reaches_its_sender():
    medium = RadiusBroadcast(Block(2, 1), radius=1, max_chars=3, to_sender=True, marker="...")
    medium.send(0, Outbox(np.array([0]), np.array([-1]), pa.array(["abcdef"])))
    heard = medium.deliver((np.array([[1, 1], [1, 2]]), np.array([True, True])))
    assert heard.receiver.tolist() == [0, 1] and heard.texts().to_pylist() == ["abc...", "abc..."]
    assert medium.counts(0)["truncated_messages"] == 1


def test_the_reference_flocking_distance_tries_only_the_paired_shifts():
    """Agents (1,0), (1,3), (3,0); shape (2,0), (1,2), (1,1). Unshifted, each agent is one step from
    its own shape cell: 3. No agent-minus-shape-cell difference is (0, 0), so the reference never
    tries that shift; its best is 4 (e.g. shift (0, 1): 0 + 2 + 2)."""
    agents = np.array([(1, 0), (1, 3), (3, 0)])
    target = np.array([(2, 0), (1, 2), (1, 1)])
    assert rules.shape_distance(agents, target)[0] == 3
    assert rules.paired_shift_distance(agents, target) == 4


def test_the_reference_foraging_maze_on_a_16_map():
    """Two walls (rows 4 and 8, or the columns): row 4 from the left edge to column 10 (`-16 // 3 + 1`
    is -5), row 8 from column 5 (16 // 3) to the right edge; the food and the nest in opposite corners."""
    for seed in range(6):
        terrain = level("foraging", 12, seed, 16, maze="reference").terrain
        if (terrain[:, 4] == WALL).sum() > 8:  # walls across the columns
            terrain = terrain.T
        assert (terrain[4, :11] == WALL).all() and (terrain[4, 11:15] != WALL).all()
        assert (terrain[8, 5:] == WALL).all() and (terrain[8, 1:5] != WALL).all()
        corners = {(r, c) for r, c in np.argwhere((terrain == FOOD) | (terrain == NEST)).tolist()}
        assert len(corners) == 8
        assert {tuple(np.argwhere(terrain == code).min(axis=0)) for code in (FOOD, NEST)} in (
            {(1, 1), (13, 13)},
            {(1, 13), (13, 1)},
        )


def test_the_reference_foraging_maze_is_hivebenchs_up_to_a_12_map():
    for size in (10, 12):
        for seed in range(8):
            ours = level("foraging", 8, seed, size).terrain
            theirs = level("foraging", 8, seed, size, maze="reference").terrain
            assert ((ours == WALL) == (theirs == WALL)).all(), (size, seed)  # the same walls, not transposed


def test_flocking_fixed_plays_one_level_for_every_seed():
    params = {"task": "flocking", "rounds": 2, "view": 5, "grid": "auto", "message_chars": 120}
    starts = []
    for flocking_level in ("seeded", "fixed"):
        task = SwarmTask(HOOKS.resolve({**params, "flocking_level": flocking_level}, None), 8)
        task.reset([0, 1, 2])
        starts.append(task.worlds.position.reshape(3, 8, 2))
    assert not (starts[0][0] == starts[0][1]).all()
    assert (starts[1][0] == starts[1][1]).all() and (starts[1][1] == starts[1][2]).all()


def test_a_reference_mode_pursuit_episode_plays_to_the_end():
    params = HOOKS.resolve(
        {"task": "pursuit", "rounds": 30, "view": 5, "grid": "auto", "message_chars": 120, "compat": "reference"},
        None,
    )
    task = SwarmTask(params, 12)
    task.reset([0, 1])
    rng = np.random.default_rng(0)
    while not task.done:
        task.step(SwarmActions(rng.integers(0, 5, task.worlds.agents)))
    records = task.record()
    assert [len(r.summary["prey_path"]) for r in records] == [31, 31]
    for record in records:  # the prey never shares a cell with an agent, pushed or not
        path = np.array(record.summary["prey_path"])
        agents = np.stack([record.agents["row"], record.agents["col"]], axis=1).reshape(31, 12, 2)
        assert not (agents == path[:, None, :]).all(axis=2).any()
        assert record.summary["compat"] == "reference"


def shown(value: object) -> str:
    """A setting's value as the README tables write it (YAML)."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("suite", [swarmbench, agentsnet])
def test_every_difference_is_in_the_schema_without_a_default_and_in_the_readme_table(suite):
    package = Path(suite.__file__).parent
    schema = yaml.safe_load((package / "schema.yaml").read_text())["$defs"][f"{suite.SUITE.name}_task"]["properties"]
    readme = (package / "README.md").read_text()
    assert schema["compat"]["enum"] == ["hivebench", "reference"] and "default" not in schema["compat"]
    for d in suite.DIFFERENCES:
        assert "default" not in schema[d.key]  # a default would enter every cell's identity
        assert f"| `{d.key}`: `{shown(d.ours)}` / `{shown(d.reference)}` |" in readme


def test_the_reports_keep_each_rules_rows_apart():
    from hivebench.suites.agentsnet.report import summary_table as agentsnet_table
    from hivebench.suites.swarmbench.report import summary_table as swarmbench_table

    episodes = pd.DataFrame(
        {
            "swarm_task": ["pursuit"] * 4,
            "problem": ["coloring"] * 4,
            "family": ["delaunay"] * 4,
            "population": [12] * 4,
            "method": ["random"] * 4,
            "score": [0.0, 1.0, 3.0, 5.0],
            "solved": [0.0, 1.0, 1.0, 1.0],
            "rounds": [4] * 4,
            "compat": [None, None, "reference", "reference"],
        }
    )
    swarm = swarmbench_table(episodes, 200, 0.95, 0, {})
    assert swarm["task"].tolist() == ["pursuit", "pursuit (reference)"] and swarm["score"].tolist() == [0.5, 4.0]
    net = agentsnet_table(episodes, 200, 0.95, 0)
    assert net["problem"].tolist() == ["coloring", "coloring (reference)"] and net["score"].tolist() == [0.5, 4.0]
    assert swarmbench_table(episodes.drop(columns="compat"), 200, 0.95, 0, {})["task"].tolist() == ["pursuit"]
