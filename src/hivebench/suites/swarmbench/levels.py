"""SwarmBench levels: each task's map, objects and starting cells, from the cell seed alone.

The map is a square walled grid whose side follows the population (`side`). Levels follow the
reference (RUC-GSAI/YuLan-SwarmIntell, task.py) with these choices, each made where the reference's
code does something its description does not:

- Pursuit: the prey starts in the far (bottom-right) quadrant, the agents in the near one, rows and
  columns each drawn from their own range (the reference swaps height and width there).
- Synchronization: each agent's light is drawn on or off; agents anywhere inside.
- Foraging: a serpentine maze: walls every 4 rows (or columns) across the map, each leaving a 2-cell
  gap at alternate ends; the 2 x 2 food in the first band, the 2 x 2 nest in the last, each in the
  corner away from that band's opening. The reference's walls' spans follow `-size // 3 + 1` (an
  operator-precedence slip) and its food and nest go to opposite corners (`foraging_maze: reference`,
  `reference_foraging`); up to a 12 x 12 map (N <= 16) the two have
  the same walls and the same possible food and nest corners.
- Flocking: agents anywhere inside; the target is a hollow square of side N // 4 + 1. The level is
  drawn from the seed (the reference always uses seed 42 there).
- Transport: one of the reference's 8 box shapes (13 cells: a 3 x 3 body and a 4-cell bar lying in
  the wall), in a corner; the wall under the bar is the gap. The bar is one cell off the body, so the
  box must first be pushed one cell along the wall, then out.

Those are hivebench's draws, from the cell seed's stream: a level from the reference's distribution.
`level_draws: reference` plays the reference's own level for the seed instead, its generator's draws
from Python's random.Random(seed) reproduced draw for draw (`reference_level`, below).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from random import Random
from typing import Any

import numpy as np

from hivebench.engine.block import carried
from hivebench.seeding import stream
from hivebench.suites.swarmbench import BAND, TASKS, side

FLOOR, WALL, FOOD, NEST = 0, 1, 2, 3
FIXED_SEED = 42  # `flocking_level: fixed`: the seed every Flocking episode's level comes from (the reference's)

# Transport's box shapes ('B' box, '.' not) and where each sits: (row, column) of its top-left cell,
# negative from the far edge (the reference's 8 templates).
BOXES = (
    (("BBB..", "BBB..", "BBB..", ".BBBB"), (-4, -5)),
    (("..BBB", "..BBB", "..BBB", "BBBB."), (-4, 0)),
    (("...B", "...B", "BBBB", "BBBB", "BBB."), (0, -4)),
    (("BBB.", "BBBB", "BBBB", "...B", "...B"), (-5, -4)),
    (("B...", "B...", "BBBB", "BBBB", ".BBB"), (0, 0)),
    ((".BBB", "BBBB", "BBBB", "B...", "B..."), (-5, 0)),
    (("BBBB.", "..BBB", "..BBB", "..BBB"), (0, 0)),
    ((".BBBB", "BBB..", "BBB..", "BBB.."), (0, -5)),
)


def ring(n: int) -> np.ndarray:
    """Flocking's target: the cells (row, column) of a hollow square of side n // 4 + 1."""
    s = n // 4 + 1
    cells = [(r, c) for r in range(s) for c in range(s) if r in (0, s - 1) or c in (0, s - 1)]
    return np.array(cells, dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True)
class Level:
    terrain: np.ndarray  # (size, size) FLOOR, WALL, FOOD or NEST
    agents: np.ndarray  # (n, 2) each agent's starting cell
    prey: tuple[int, int] | None = None  # Pursuit
    lights: np.ndarray | None = None  # Synchronization: (n,) each agent's light at the start
    box: np.ndarray | None = None  # Transport: (cells, 2)


def box_cells(template: int, size: int) -> np.ndarray:
    """(13, 2) the cells of Transport's box shape `template` where it starts on a map of this side."""
    shape, (row, col) = BOXES[template]
    cells = np.array([(r, c) for r, line in enumerate(shape) for c, ch in enumerate(line) if ch == "B"])
    return cells + (row % size, col % size)


def walled(size: int) -> np.ndarray:
    terrain = np.full((size, size), FLOOR, dtype=np.int8)
    terrain[[0, -1], :] = WALL
    terrain[:, [0, -1]] = WALL
    return terrain


def spread(rng: np.random.Generator, free: np.ndarray, n: int) -> np.ndarray:
    """n distinct cells drawn uniformly among the True cells of `free`."""
    cells = np.flatnonzero(free)
    if len(cells) < n:
        raise ValueError(f"{n} agents do not fit in the {len(cells)} free cells of this level")
    chosen = rng.choice(cells, size=n, replace=False)
    return np.stack(np.unravel_index(chosen, free.shape), axis=1).astype(np.int64)


def level(task: str, n: int, seed: int, size: int | None = None, maze: str = "serpentine") -> Level:
    """The level of a task for n agents on the cell seed's map (of side `side(n)` unless given);
    `maze`: Foraging's, hivebench's serpentine or the reference's."""
    size = size or side(n)
    rng = stream(seed, f"level/{task}")
    terrain = walled(size)
    if task == "pursuit":
        half = size // 2
        prey = (int(rng.integers(half + 1, size - 1)), int(rng.integers(half + 1, size - 1)))
        near = np.zeros_like(terrain, dtype=bool)
        near[1 : half + 1, 1 : half + 1] = True  # the prey's quadrant starts at half + 1
        return Level(terrain, spread(rng, near & (terrain == FLOOR), n), prey=prey)
    if task == "synchronization":
        lights = rng.random(n) < 0.5
        return Level(terrain, spread(rng, terrain == FLOOR, n), lights=lights)
    if task == "foraging":
        return foraging(rng, terrain, n) if maze == "serpentine" else reference_foraging(rng, terrain, n)
    if task == "flocking":
        return Level(terrain, spread(rng, terrain == FLOOR, n))
    if task == "transport":
        box = box_cells(int(rng.integers(len(BOXES))), size)
        terrain[box[:, 0], box[:, 1]] = FLOOR  # the gap: the wall under the bar
        free = terrain == FLOOR
        free[box[:, 0], box[:, 1]] = False
        return Level(terrain, spread(rng, free, n), box=box)
    raise ValueError(f"unknown SwarmBench task {task!r}; choose one of {TASKS}")


def relabelled(level: Level, sigma: np.ndarray) -> Level:
    """The level with agent i starting where agent sigma^-1(i) would (its cell and its light)."""
    lights = None if level.lights is None else carried(level.lights, sigma)
    return Level(level.terrain, carried(level.agents, sigma), level.prey, lights, level.box)


def played_level(task: str, n: int, seed: int, size: int, settings: Mapping[str, Any]) -> Level:
    """The level an episode of the cell seed plays under the suite's settings (`compat.settings`): the
    reference's own (`level_draws: reference`), or hivebench's with Flocking's fixed level and
    Foraging's maze as set."""
    if settings["level_draws"] == "reference":
        return reference_level(task, n, seed, size)
    fixed = task == "flocking" and settings["flocking_level"] == "fixed"
    return level(task, n, FIXED_SEED if fixed else seed, size, maze=settings["foraging_maze"])


def foraging(rng: np.random.Generator, terrain: np.ndarray, n: int) -> Level:
    size = len(terrain)
    walls = list(range(BAND, size - BAND, BAND))
    for i, row in enumerate(walls):
        terrain[row, 1:-1] = WALL
        gap = (size - 3, size - 2) if i % 2 == 0 else (1, 2)  # alternate ends: a serpentine
        terrain[row, list(gap)] = FLOOR
    # Each end lies in the corner away from its band's opening: the first band opens at the first
    # wall's gap (right), the last band at the last wall's (right for an even index, else left).
    far_end = 1 if (len(walls) - 1) % 2 == 0 else size - 3
    first, last = (FOOD, NEST) if rng.random() < 0.5 else (NEST, FOOD)
    terrain[1:3, 1:3] = first
    terrain[size - 3 : size - 1, far_end : far_end + 2] = last
    if rng.random() < 0.5:  # walls across the columns instead
        terrain = terrain.T.copy()
    return Level(terrain, spread(rng, terrain == FLOOR, n))


def reference_foraging(rng: np.random.Generator, terrain: np.ndarray, n: int) -> Level:
    """The reference's Foraging level (its task.py, `Foraging.reset`): walls every 4 rows, the even
    ones from the left edge to `-size // 3 + 1` (an operator-precedence slip: -(size) // 3), the odd
    ones from `size // 3` to the right edge; the 2 x 2 food and nest in opposite corners, both in the
    first column when the wall count is odd; walls across the columns instead half the time."""
    size = len(terrain)
    food = [int(rng.choice([1, size - 3])), int(rng.choice([1, size - 3]))]
    nest = [size - 3 if food[0] == 1 else 1, size - 3 if food[1] == 1 else 1]
    walls = list(range(BAND, size - BAND, BAND))
    if len(walls) % 2 == 1:
        food[1] = nest[1] = 1
    for i, row in enumerate(walls):
        if i % 2 == 0:
            terrain[row, : -size // 3 + 1] = WALL
        else:
            terrain[row, size // 3 :] = WALL
    terrain[nest[0] : nest[0] + 2, nest[1] : nest[1] + 2] = NEST
    terrain[food[0] : food[0] + 2, food[1] : food[1] + 2] = FOOD
    if rng.random() < 0.5:  # walls across the columns instead
        terrain = terrain.T.copy()
    return Level(terrain, spread(rng, terrain == FLOOR, n))


# The reference's own draws ---------------------------------------------------------------------------
#
# SwarmBench's levels as the reference draws them (`level_draws: reference`): the reference's
# generator (RUC-GSAI/YuLan-SwarmIntell, `swarmbench/task.py`, each task's `reset`) draw for draw, so
# that a seed is the reference's map, agents and objects, not only a level from the same distribution.
#
# Every task of the reference draws from its own `random.Random(seed)` (Flocking's constructor drops the
# seed: Random(42) for every episode), in this order:
#
# - `spread` (every task): agent by agent, a column then a row, each `randint(lo, hi)` (both ends in),
#   drawn again until the cell is free ('.' on the grid: no wall, object or earlier agent);
# - Pursuit: the prey's row `randint(H // 2 + 1, H - 2)` and column `randint(W // 2 + 1, W - 2)`, then
#   the agents' columns in 1 .. max(H // 2, 5) and rows in 1 .. max(W // 2, 5) (the reference's swap);
# - Synchronization: each agent's light `bool(randint(0, 1))`, in agent order, then the agents;
# - Foraging: the food's row and column `choice([1, H - 3])`, `choice([1, W - 3])` (the nest in the
#   opposite corner), then `randint(0, 1)`: 0 puts walls every 4 rows, the even ones from the left edge
#   to `-W // 3 + 1` (an operator-precedence slip), the odd ones from `W // 3` on, and an odd wall count
#   puts food and nest in column 1; 1 does the same across the columns (in row 1); then the agents;
# - Transport: one of the 8 box templates `choice(boxes)` (BOXES, in the reference's order), its gap
#   cut in the wall, then the agents;
# - Flocking: the agents.
#
# `tests/test_swarmbench_reference_levels.py` checks every task's levels for seeds 0-99 on four map
# settings against what the reference's own code drew (`scripts/record_reference_levels.py`).


def reference_spread(rng: Random, taken: np.ndarray, n: int, columns: int, rows: int) -> np.ndarray:
    """(n, 2) the agents' cells as the reference's `spread(env, 1, columns, 1, rows, rng)` draws them:
    `taken` (size, size) is True where the grid is not '.', and becomes True under each agent."""
    cells = []
    for _ in range(n):
        while True:
            col, row = rng.randint(1, columns), rng.randint(1, rows)
            if not taken[row, col]:
                taken[row, col] = True
                cells.append((row, col))
                break
    return np.array(cells, dtype=np.int64).reshape(n, 2)


def reference_level(task: str, n: int, seed: int, size: int) -> Level:
    """The reference's level of `task` for n agents on a size x size map, for this seed."""
    rng = Random(FIXED_SEED if task == "flocking" else seed)  # its Flocking(seed) drops the seed
    terrain = walled(size)
    inner = size - 2
    if task == "pursuit":
        prey = (rng.randint(size // 2 + 1, size - 2), rng.randint(size // 2 + 1, size - 2))
        taken = terrain != FLOOR
        taken[prey] = True
        agents = reference_spread(rng, taken, n, max(size // 2, 5), max(size // 2, 5))
        return Level(terrain, agents, prey=prey)
    if task == "synchronization":
        lights = np.array([bool(rng.randint(0, 1)) for _ in range(n)])
        return Level(terrain, reference_spread(rng, terrain != FLOOR, n, inner, inner), lights=lights)
    if task == "foraging":
        terrain = reference_foraging_terrain(rng, size)
        return Level(terrain, reference_spread(rng, terrain != FLOOR, n, inner, inner))
    if task == "flocking":
        return Level(terrain, reference_spread(rng, terrain != FLOOR, n, inner, inner))
    if task == "transport":
        box = box_cells(rng.randrange(8), size)  # choice(boxes): one draw below 8
        terrain[box[:, 0], box[:, 1]] = FLOOR  # the gap: the wall under the bar
        taken = terrain != FLOOR
        taken[box[:, 0], box[:, 1]] = True
        return Level(terrain, reference_spread(rng, taken, n, inner, inner), box=box)
    raise ValueError(f"unknown SwarmBench task {task!r}")


def reference_foraging_terrain(rng: Random, size: int) -> np.ndarray:
    """The reference's Foraging maze, food and nest (`Foraging.reset`, before its agents)."""
    terrain = walled(size)
    food = [rng.choice([1, size - 3]), rng.choice([1, size - 3])]
    nest = [size - 3 if food[0] == 1 else 1, size - 3 if food[1] == 1 else 1]
    across_rows = rng.randint(0, 1) == 0
    walls = list(range(BAND, size - BAND, BAND))
    odd = len(walls) % 2 == 1
    if across_rows and odd:
        food[1] = nest[1] = 1
    if not across_rows and odd:
        food[0] = nest[0] = 1
    for i, line in enumerate(walls):
        span = slice(None, -size // 3 + 1) if i % 2 == 0 else slice(size // 3, None)
        if across_rows:
            terrain[line, span] = WALL
        else:
            terrain[span, line] = WALL
    terrain[nest[0] : nest[0] + 2, nest[1] : nest[1] + 2] = NEST
    terrain[food[0] : food[0] + 2, food[1] : food[1] + 2] = FOOD
    return terrain
