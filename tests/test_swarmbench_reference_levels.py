"""`level_draws: reference` plays the SwarmBench reference's own level for each seed: for every task,
seeds 0-99 and four map settings, the map, the agents' cells in order, the prey, the lights and the
box are what the reference's code drew (tests/data/swarmbench_reference_levels.json.gz, recorded by
scripts/record_reference_levels.py from RUC-GSAI/YuLan-SwarmIntell's swarmbench/task.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from hivebench.suites.swarmbench import TASKS
from hivebench.suites.swarmbench.levels import FLOOR, FOOD, NEST, WALL, reference_level

RECORDED = json.loads(gzip.open(Path(__file__).parent / "data" / "swarmbench_reference_levels.json.gz", "rt").read())
TERRAIN = {"W": WALL, "N": NEST, "F": FOOD}  # everything else lies on the floor: agents, prey, box


@pytest.mark.parametrize("task", TASKS)
def test_each_seeds_level_is_the_references(task):
    checked = 0
    for key, recorded in RECORDED.items():
        name, n, size, seed = key.split("/")
        if name != task:
            continue
        level = reference_level(task, int(n), int(seed), int(size))
        grid = np.array([list(row) for row in recorded["grid"]])
        where = f"{key}: hivebench's level differs from the reference's"
        assert level.agents.tolist() == recorded["agents"], where
        assert level.terrain.tolist() == np.vectorize(lambda c: TERRAIN.get(c, FLOOR))(grid).tolist(), where
        if task == "pursuit":
            assert list(level.prey) == recorded["prey"], where
        if task == "synchronization":
            assert level.lights.tolist() == recorded["lights"], where
        if task == "transport":
            box = sorted(map(tuple, np.argwhere(grid == "B").tolist()))
            assert sorted(map(tuple, level.box.tolist())) == box, where
        checked += 1
    assert checked == 400  # seeds 0-99 on each of four (N, map side) settings
