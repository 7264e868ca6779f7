"""SwarmBench's push physics, for every episode of a block at once.

A round runs four passes, UP, DOWN, LEFT, RIGHT (the reference's order); each moves a set of bodies one
cell along its direction. In a pass a body pushing along the direction has force 2, one pushing against
it has force -2 (it resists), any other force 0. A body moves only when

- everything in front of it moves too (no overlap; nothing static in front), and
- the force reaching it covers its mass: its own force plus what the body behind it has left over
  (force in minus mass), which passes on to what is in front of it.

Of the sets of bodies that can move so, the largest moves: the reference solves this as an integer
program per pass (maximise the movers). Such sets are closed under union (more movers behind only add
force), so the largest is unique, and for SwarmBench's bodies it has a direct form, computed here:

- one-cell bodies (agents) lie on lines along the direction; a run of them moves from the back-most
  body from which every running sum of (force - mass), taken forward, stays >= 0: the longest such
  front part (which also passes on the most force);
- a multi-cell body (the Transport box) gathers what the runs behind it pass on; it moves when that,
  less its mass, covers what the runs in front of it need to move whole. A run trapped between two of
  its cells moves with it (the reference merges such a cycle into one body).

`tests/test_swarmbench_physics.py` checks the rule against that integer program (scipy's MILP) on
random states.

A grid holds, per cell, EMPTY, STATIC (walls, and anything else that never moves) or a body id. Past
the array's edge is free: a body pushed there leaves the array (the world pads its map, so that is only
ever outside the map).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EMPTY, STATIC = -1, -2
FORCE = 2  # what a moving agent pushes with
# (row, column) steps, in the order the passes run
DIRECTIONS: dict[str, tuple[int, int]] = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}
OPPOSITE = {"UP": "DOWN", "DOWN": "UP", "LEFT": "RIGHT", "RIGHT": "LEFT"}
STILL = 0  # the push code of a body pushing nowhere; direction d's code is CODES[d]
CODES = {direction: code for code, direction in enumerate(DIRECTIONS, start=1)}
_BIG = 1 << 40  # lifts later runs out of reach in the segmented minimum (far above any sum of forces)


def forward(grid: np.ndarray, direction: str) -> np.ndarray:
    """A view of (episodes, rows, columns) `grid` in which `direction` points along the last axis, to
    higher indices."""
    if direction in ("UP", "DOWN"):
        grid = grid.swapaxes(1, 2)
    return grid[..., ::-1] if direction in ("UP", "LEFT") else grid


@dataclass(frozen=True)
class Runs:
    """The runs of one-cell bodies along a pass's lines (cells flattened line after line)."""

    of_cell: np.ndarray  # each cell's run (meaningful on one-cell bodies)
    moves_alone: np.ndarray  # per cell: in its run's longest front part that can move
    passes_on: np.ndarray  # per run: the force that part leaves for what is in front of it
    needs: np.ndarray  # per run: the force it needs from behind to move whole
    total: np.ndarray  # per run: the sum of (force - mass) of all its bodies
    front: np.ndarray  # per run: what is in front of it (EMPTY, STATIC or a body id)
    back: np.ndarray  # per run: what is behind it


def _runs(cells: np.ndarray, unit: np.ndarray, value: np.ndarray, ahead: np.ndarray, behind: np.ndarray) -> Runs:
    v = np.where(unit, value[np.where(unit, cells, 0)], 0)
    total = np.cumsum(v)
    before = total - v  # the running sum up to the cell before
    starts = unit & ~np.insert(unit[:-1], 0, False)
    ends = unit & ~np.append(unit[1:], False)
    run = np.cumsum(starts) - 1
    # the least running sum from each cell to its run's end (the runs after it lifted out of reach)
    lifted = np.where(unit, total + _BIG * run, _BIG * (run + 1))
    to_end = np.minimum.accumulate(lifted[::-1])[::-1] - _BIG * run
    can_start = unit & (to_end >= before)  # a front part starting here can move
    seen = np.cumsum(can_start)
    before_run = np.maximum.accumulate(np.where(starts, seen - can_start, -1))
    moves_alone = unit & (seen > before_run)  # at or after the run's first possible start
    first, last = np.flatnonzero(starts), np.flatnonzero(ends)
    return Runs(
        of_cell=run,
        moves_alone=moves_alone,
        passes_on=np.bincount(run[moves_alone], weights=v[moves_alone], minlength=len(first)),
        needs=np.maximum(0, before[first] - to_end[first]),
        total=total[last] - before[first],
        front=ahead[last],
        back=behind[first],
    )


def _moving_boxes(cells: np.ndarray, unit: np.ndarray, ahead: np.ndarray, runs: Runs, value: np.ndarray) -> np.ndarray:
    """(bodies,) which multi-cell bodies move: not blocked, and the force the runs behind pass on (and
    the runs trapped in it bring), less its mass, covers what the runs in front need."""
    moves = np.zeros(len(value), dtype=bool)
    box_cells = (cells >= 0) & ~unit
    if not box_cells.any():
        return moves
    boxes = np.unique(cells[box_cells])
    is_box = np.zeros(len(value), dtype=bool)
    is_box[boxes] = True
    blocked = np.zeros(len(value), dtype=bool)
    blocked[cells[box_cells & (ahead == STATIC)]] = True
    balance = np.zeros(len(value))
    balance[boxes] = value[boxes]
    front_box = (runs.front >= 0) & is_box[np.maximum(runs.front, 0)]
    back_box = (runs.back >= 0) & is_box[np.maximum(runs.back, 0)]
    trapped = front_box & back_box & (runs.front == runs.back)
    feeding, pushed = front_box & ~trapped, back_box & ~trapped
    free = runs.front == EMPTY
    np.add.at(balance, runs.front[feeding], runs.passes_on[feeding])
    np.add.at(balance, runs.front[trapped], runs.total[trapped])
    np.add.at(balance, runs.back[pushed & free], -runs.needs[pushed & free])
    blocked[runs.back[pushed & ~free]] = True  # a run in front of it that cannot move at all
    moves[boxes] = ~blocked[boxes] & (balance[boxes] >= 0)
    return moves


def movers(grid: np.ndarray, mass: np.ndarray, push: np.ndarray, multi: np.ndarray, direction: str) -> np.ndarray:
    """(bodies,) which bodies move one cell in the `direction` pass.

    grid: (episodes, rows, columns) of EMPTY, STATIC or a body id; per body its mass, where it pushes
    (CODES[direction], or STILL) and whether it has more than one cell."""
    force = np.where(push == CODES[direction], FORCE, np.where(push == CODES[OPPOSITE[direction]], -FORCE, 0))
    value = (force - mass).astype(np.int64)  # what a body adds to the force passing through it
    lines = forward(grid, direction)
    lines = lines.reshape(-1, lines.shape[-1])
    # a free cell after each line (the array's edge) keeps runs from joining across lines
    cells = np.concatenate([lines, np.full((len(lines), 1), EMPTY, dtype=lines.dtype)], axis=1).ravel()
    unit = (cells >= 0) & ~multi[np.maximum(cells, 0)]
    ahead, behind = np.append(cells[1:], EMPTY), np.insert(cells[:-1], 0, EMPTY)
    runs = _runs(cells, unit, value, ahead, behind)
    moving = _moving_boxes(cells, unit, ahead, runs, value)
    # A run behind a moving box moves whole (closure; its front is free, or it is trapped in the box).
    # Otherwise it moves its longest possible front part when its front is free or a moving box.
    front_moves = (runs.front >= 0) & moving[np.maximum(runs.front, 0)]
    whole = (runs.back >= 0) & moving[np.maximum(runs.back, 0)]
    part = ~whole & ((runs.front == EMPTY) | front_moves)
    run = runs.of_cell[unit]
    moving[cells[unit][whole[run] | (part[run] & runs.moves_alone[unit])]] = True
    return moving


def shift(grid: np.ndarray, moving: np.ndarray, direction: str) -> np.ndarray:
    """The grid after the `moving` bodies step one cell in `direction` (cells leaving the array go)."""
    result = grid.copy()
    source, target = forward(grid, direction), forward(result, direction)
    index = np.nonzero((source >= 0) & moving[np.maximum(source, 0)])
    target[index] = EMPTY
    inside = index[-1] + 1 < source.shape[-1]
    target[tuple(i[inside] for i in index[:-1]) + (index[-1][inside] + 1,)] = source[index][inside]
    return result
