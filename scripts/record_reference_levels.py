"""Record the SwarmBench reference's own levels (RUC-GSAI/YuLan-SwarmIntell, `swarmbench/task.py`) for
seeds 0-99, the fixture `tests/test_swarmbench_reference_levels.py` checks hivebench's
`level_draws: reference` against. Run it outside hivebench, with the reference's code:

    git clone https://github.com/RUC-GSAI/YuLan-SwarmIntell ref
    mkdir -p run/swarmbench && cp ref/swarmbench/task.py ref/swarmbench/physics.py run/swarmbench/
    touch run/swarmbench/__init__.py      # the package's own __init__ imports its LLM agent
    python -m venv venv && venv/bin/pip install numpy scipy pulp
    PYTHONPATH=run venv/bin/python scripts/record_reference_levels.py tests/data/swarmbench_reference_levels.json.gz

Each task's `reset` runs as the reference's environment calls it (`SwarmEnvironment.reset`): every
task made with the episode's seed (Flocking's constructor drops it: Random(42)), agents named
Agent_0 .. Agent_{n-1} in order, on a fresh height x width grid. What is recorded per level: each
agent's cell in order, the prey's cell, the lights, and the grid's rows as the reset leaves them
(walls W, nest N, food F, box B, prey P, agents A/a).
"""

from __future__ import annotations

import gzip
import json
import sys
from types import SimpleNamespace

import numpy as np
from swarmbench import task as reference  # the reference's task.py (see above)

TASKS = {
    "pursuit": "Pursuit",
    "synchronization": "Synchronization",
    "foraging": "Foraging",
    "flocking": "Flocking",
    "transport": "Transport",
}
# (agents, map side): hivebench's sides for N = 8, 16, 32, and the reference's own 10 agents on 10 x 10
SETTINGS = [(8, 10), (10, 10), (16, 12), (32, 16)]
SEEDS = range(100)


def reset(name: str, n: int, size: int, seed: int) -> dict:
    env = SimpleNamespace(
        width=size,
        height=size,
        grid=np.full((size, size), ".", dtype=str),
        agents={f"Agent_{i}": SimpleNamespace(valid_actions=[]) for i in range(n)},
        meshes=[],
        agent_meshes={},
        max_round=100,
    )
    env.mesh_map = np.full_like(env.grid, None, dtype=object)
    task = getattr(reference, TASKS[name])(seed)
    task.reset(env)
    level = {
        "agents": [list(map(int, env.agent_meshes[f"Agent_{i}"].pos)) for i in range(n)],
        "grid": ["".join(row) for row in env.grid],
    }
    if name == "pursuit":
        level["prey"] = list(map(int, task.prey.pos))
    if name == "synchronization":
        level["lights"] = [bool(task.agent_state[f"Agent_{i}"]) for i in range(n)]
    return level


def main(out: str) -> None:
    levels = {
        f"{name}/{n}/{size}/{seed}": reset(name, n, size, seed)
        for name in TASKS
        for n, size in SETTINGS
        for seed in SEEDS
    }
    with gzip.open(out, "wt") as f:
        json.dump(levels, f, sort_keys=True, separators=(",", ":"))
    print(f"{out}: {len(levels)} levels")


if __name__ == "__main__":
    main(sys.argv[1])
