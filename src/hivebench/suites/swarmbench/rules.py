"""What each SwarmBench task does after the round's movement, and how it scores, for every episode of
a block at once (after the reference's task.py, with its bugs fixed where the issue names them).

- Pursuit: the prey is caught when its four neighbours are all taken (agents or walls): a point, and
  it respawns on the free cell of least danger (ties: drawn from the seed); it does not move in that
  round. Otherwise it moves two cells (straight, or one each way with both cells beside it free) to
  the first of the least dangerous destinations, when that is less dangerous than where it stands.
  Danger of a cell: 10 per agent and 9 per wall within Chebyshev distance 4 (the reference's 1 and
  0.9, in integers so ties are exact). The reference's own rules are settings (`DIFFERENCES` in the
  suite's __init__): `prey_danger`, `prey_compares`, `prey_respawn` and `prey_pushable`.
- Synchronization: SWITCH flips the agent's light; a point each time every light agrees, on and off
  in turn (the first agreement of either kind counts).
- Foraging: an agent beside the food loads a piece, then an agent beside the nest with a piece
  delivers it: a point.
- Flocking: the most the agents' distance to a hollow square of side N // 4 + 1 (translation-
  invariant, `shape_distance`) has fallen below where it started.
- Transport: an agent that leaves the map in round t (0-based) of T scores (T - t) / T.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hivebench import compat
from hivebench.seeding import stream
from hivebench.suites.swarmbench import DIFFERENCES, physics
from hivebench.suites.swarmbench.levels import FOOD, NEST, WALL, Level, ring
from hivebench.suites.swarmbench.world import SWITCH, Worlds

DANGER_RADIUS = 4
AGENT_DANGER, WALL_DANGER = 10, 9
# The prey's two-cell moves in the reference's order: (destination, the cells it passes beside or through)
PREY_MOVES = (
    ((0, 2), ((0, 1),)),
    ((1, 1), ((0, 1), (1, 0))),
    ((-1, 1), ((0, 1), (-1, 0))),
    ((0, -2), ((0, -1),)),
    ((1, -1), ((0, -1), (1, 0))),
    ((-1, -1), ((0, -1), (-1, 0))),
    ((2, 0), ((1, 0),)),
    ((-2, 0), ((-1, 0),)),
)
NEIGHBOURS = ((-1, 0), (1, 0), (0, -1), (0, 1))
Settings = Mapping[str, Any]
HIVEBENCH: Settings = compat.settings({}, DIFFERENCES)


def window_sums(values: np.ndarray, before: int, after: int) -> np.ndarray:
    """(episodes, rows, cols): the sum of `values` over each cell's square from `before` cells before
    it to `after` after, along both axes (zero outside)."""
    padded = np.pad(values, ((0, 0), (before + 1, after), (before + 1, after)))
    total = padded.cumsum(1).cumsum(2)
    w = before + after + 1
    return total[:, w:, w:] - total[:, :-w, w:] - total[:, w:, :-w] + total[:, :-w, :-w]


def beside(worlds: Worlds, code: int) -> np.ndarray:
    """(agents,) whether one of the agent's four neighbours is terrain `code`."""
    near = worlds.around(worlds.terrain, 1)
    return (near[:, 0, 1] == code) | (near[:, 2, 1] == code) | (near[:, 1, 0] == code) | (near[:, 1, 2] == code)


class Rules:
    """A task's state beyond the bodies, and its score, per episode. `settings`: the suite's
    differences from the reference (`compat.settings`; hivebench's own where not given)."""

    def __init__(
        self,
        worlds: Worlds,
        levels: list[Level],
        seeds: list[int],
        rounds: int,
        settings: Settings = HIVEBENCH,
    ):
        self.worlds = worlds
        self.rounds = rounds
        self.settings = settings
        self.score = np.zeros(len(levels))

    def update(self, step: int, actions: np.ndarray) -> None:
        """After round `step`'s movement."""

    def agent_columns(self) -> dict[str, np.ndarray]:
        """Per agent, what the task keeps of it (recorded at every state)."""
        return {}

    def summary(self) -> dict[str, list]:
        """Per episode, what the task counts beyond the score."""
        return {}

    def track(self) -> None:
        """Keep where the task's moving objects are now (once per state)."""


class Pursuit(Rules):
    def __init__(
        self, worlds: Worlds, levels: list[Level], seeds: list[int], rounds: int, settings: Settings = HIVEBENCH
    ):
        super().__init__(worlds, levels, seeds, rounds, settings)
        self.prey = np.array([lv.prey for lv in levels], dtype=np.int64)
        self.draws = [stream(seed, "prey") for seed in seeds]
        # per episode: whether its prey is a body agents can push (the reference's first prey)
        self.pushable = np.full(len(levels), settings["prey_pushable"] == "first")
        self._place(np.ones(len(levels), dtype=bool))
        self.path: list[np.ndarray] = []  # the prey's cell at each state
        self.moved: np.ndarray | None = None  # per episode, how far the relocation moved its prey (Chebyshev)

    def track(self) -> None:
        self.path.append(self.prey.copy())

    def _place(self, episodes: np.ndarray) -> None:
        w, m = self.worlds, self.worlds.margin
        body = np.where(self.pushable, w.agents + np.arange(len(self.prey)), physics.STATIC)
        w.grid[episodes, self.prey[episodes, 0] + m, self.prey[episodes, 1] + m] = body[episodes]

    def _pushed(self) -> None:
        """Where the pushable prey stand after the round's movement."""
        w, m = self.worlds, self.worlds.margin
        for s in np.flatnonzero(self.pushable):
            self.prey[s] = np.argwhere(w.grid[s] == w.agents + s)[0] - m

    def _danger(self) -> np.ndarray:
        w = self.worlds
        agents = ((w.grid >= 0) & (w.grid < w.agents)).astype(np.int64)
        walls = (w.terrain == WALL).astype(np.int64)
        if self.settings["prey_danger"] == "reference":  # grid[i - 4 : i + 4, j - 4 : j + 4], in floats
            return window_sums(agents, 4, 3) + window_sums(walls, 4, 3) * 0.9
        return AGENT_DANGER * window_sums(agents, DANGER_RADIUS, DANGER_RADIUS) + WALL_DANGER * window_sums(
            walls, DANGER_RADIUS, DANGER_RADIUS
        )

    def _respawn(self, s: int, danger: np.ndarray) -> None:
        """Episode s's caught prey to a least dangerous free cell of the map (the grid without it)."""
        w = self.worlds
        free = w.map_view(w.grid)[s] == physics.EMPTY
        level = w.map_view(danger)[s]
        if self.settings["prey_respawn"] == "sampled":  # the first least dangerous of H x W free samples
            cells = np.flatnonzero(free)
            samples = cells[self.draws[s].integers(len(cells), size=free.size)]
            chosen = samples[np.argmin(level.flat[samples])]
        else:
            level = np.where(free, level, np.inf)
            safest = np.flatnonzero(level == level.min())
            chosen = safest[self.draws[s].integers(len(safest))]
        self.prey[s] = np.unravel_index(chosen, level.shape)
        self.pushable[s] = False

    def update(self, step: int, actions: np.ndarray) -> None:
        w, m = self.worlds, self.worlds.margin
        self._pushed()
        episodes = np.arange(len(self.prey))
        rows, cols = self.prey[:, 0] + m, self.prey[:, 1] + m
        taken = np.stack([w.grid[episodes, rows + dr, cols + dc] != physics.EMPTY for dr, dc in NEIGHBOURS])
        caught = taken.all(axis=0)
        self.score += caught
        danger = self._danger()
        w.grid[episodes, rows, cols] = physics.EMPTY
        for s in np.flatnonzero(caught):
            self._respawn(s, danger)
        moving = ~caught
        # the reference weighs the moves against the cell left of the prey (the capture check's last offset)
        left = self.settings["prey_compares"] == "left_cell"
        best, choice = danger[episodes, rows, cols - 1 if left else cols], np.full(len(episodes), -1)
        for i, ((dr, dc), passes) in enumerate(PREY_MOVES):
            legal = w.grid[episodes, rows + dr, cols + dc] == physics.EMPTY
            for pr, pc in passes:
                legal &= w.grid[episodes, rows + pr, cols + pc] == physics.EMPTY
            value = danger[episodes, rows + dr, cols + dc]
            better = moving & legal & (value < best)
            best, choice = np.where(better, value, best), np.where(better, i, choice)
        step_to = np.array([move for move, _ in PREY_MOVES])[np.maximum(choice, 0)]
        self.prey += np.where((choice >= 0)[:, None], step_to, 0)
        self._place(episodes)

    def relocate(self, away: int) -> None:
        """Every episode's prey to a least dangerous free cell at least `away` cells (Chebyshev) from
        where it stood, ties drawn from the prey's stream (the intervention): the prey stops being
        where anyone saw it."""
        w, m = self.worlds, self.worlds.margin
        stood = self.prey.copy()
        w.grid[np.arange(len(self.prey)), self.prey[:, 0] + m, self.prey[:, 1] + m] = physics.EMPTY
        danger = self._danger()
        for s in range(len(self.prey)):
            level = np.where(w.map_view(w.grid)[s] == physics.EMPTY, w.map_view(danger)[s], np.inf)
            rows, cols = np.indices(level.shape)
            near = np.maximum(np.abs(rows - self.prey[s, 0]), np.abs(cols - self.prey[s, 1])) < away
            if np.isfinite(level[~near]).any():  # a map too small for that distance: anywhere else
                level[near] = np.inf
            else:
                level[tuple(self.prey[s])] = np.inf
            safest = np.flatnonzero(level == level.min())
            self.prey[s] = np.unravel_index(safest[self.draws[s].integers(len(safest))], level.shape)
            self.pushable[s] = False
        self.moved = np.abs(self.prey - stood).max(axis=1)
        self._place(np.ones(len(self.prey), dtype=bool))

    def summary(self) -> dict[str, list]:
        path = np.stack(self.path, axis=1)  # (episodes, states, 2)
        out = {"captures": self.score.astype(int).tolist(), "prey_path": path.tolist()}
        if self.moved is not None:
            out["relocation_distance"] = self.moved.astype(int).tolist()
        return out


class Synchronization(Rules):
    def __init__(
        self, worlds: Worlds, levels: list[Level], seeds: list[int], rounds: int, settings: Settings = HIVEBENCH
    ):
        super().__init__(worlds, levels, seeds, rounds, settings)
        self.lights = np.concatenate([lv.lights for lv in levels])
        self.last_agreed = np.full(len(levels), -1)  # lights on at the last agreement that scored

    def update(self, step: int, actions: np.ndarray) -> None:
        self.lights ^= (actions == SWITCH) & self.worlds.present
        on = self.lights.reshape(len(self.score), -1).sum(axis=1)
        agreed = ((on == 0) | (on == self.worlds.n)) & (on != self.last_agreed)
        self.score += agreed
        self.last_agreed = np.where(agreed, on, self.last_agreed)

    def agent_columns(self) -> dict[str, np.ndarray]:
        return {"light": self.lights.copy()}


class Foraging(Rules):
    def __init__(
        self, worlds: Worlds, levels: list[Level], seeds: list[int], rounds: int, settings: Settings = HIVEBENCH
    ):
        super().__init__(worlds, levels, seeds, rounds, settings)
        self.carrying = np.zeros(worlds.agents, dtype=bool)

    def update(self, step: int, actions: np.ndarray) -> None:
        self.carrying |= beside(self.worlds, FOOD)
        at_nest = beside(self.worlds, NEST)
        delivered = self.carrying & at_nest
        self.score += np.bincount(self.worlds.episode_of_agent[delivered], minlength=len(self.score))
        self.carrying &= ~at_nest

    def agent_columns(self) -> dict[str, np.ndarray]:
        return {"carrying": self.carrying.copy()}

    def summary(self) -> dict[str, list]:
        return {"deliveries": self.score.astype(int).tolist()}


def _assignment(cost: np.ndarray) -> int:
    from scipy.optimize import linear_sum_assignment  # here: scipy.optimize takes a third of a second to import

    rows, cols = linear_sum_assignment(cost)
    return int(cost[rows, cols].sum())


def line_distances(agents: np.ndarray, target: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """For each shift s, the least sum of |agent - target - s| over one-to-one assignments of the
    target's coordinates to agents' (one axis). On a line an optimal assignment keeps both orders, so
    it is a walk over the sorted values that skips the agents beyond the target's count."""
    a, t = np.sort(agents), np.sort(target)
    extra = len(a) - len(t)
    if extra == 0:
        return np.abs((a - t)[:, None] - shifts[None, :]).sum(axis=0)
    best = np.zeros((extra + 1, len(shifts)))  # by agents skipped so far
    for i, value in enumerate(t):
        step = np.abs(a[i : i + extra + 1, None] - value - shifts[None, :])
        best = np.minimum.accumulate(best, axis=0) + step
    return best.min(axis=0)


def shape_distance(
    agents: np.ndarray, target: np.ndarray, start: tuple[int, int] | None = None
) -> tuple[int, tuple[int, int]]:
    """The translation-invariant L1 assignment distance from the agents' cells to the target shape's,
    and a shift that attains it: over integer shifts of the shape, the least total L1 distance of a
    one-to-one assignment of target cells to agents (scipy's linear_sum_assignment; agents beyond the
    shape's cells stay unassigned).

    Exact, by branch and bound over the shifts: the rows-only and columns-only assignments bound each
    shift's distance from below, and shifts are tried in order of that bound (`start`, e.g. the last
    round's best, first) until it reaches the least distance found. The reference tries only the
    shifts of paired cells, which can miss the least one."""
    rows = agents[:, 0, None] - target[None, :, 0]
    cols = agents[:, 1, None] - target[None, :, 1]
    shifts_r, shifts_c = np.arange(rows.min(), rows.max() + 1), np.arange(cols.min(), cols.max() + 1)
    bound = np.add.outer(
        line_distances(agents[:, 0], target[:, 0], shifts_r), line_distances(agents[:, 1], target[:, 1], shifts_c)
    )
    best, at = np.iinfo(np.int64).max, (0, 0)

    def attempt(index: int) -> None:
        nonlocal best, at
        r, c = divmod(index, len(shifts_c))
        value = _assignment(np.abs(rows - shifts_r[r]) + np.abs(cols - shifts_c[c]))
        if value < best:
            best, at = value, (int(shifts_r[r]), int(shifts_c[c]))

    first = -1
    if start is not None and shifts_r[0] <= start[0] <= shifts_r[-1] and shifts_c[0] <= start[1] <= shifts_c[-1]:
        first = int((start[0] - shifts_r[0]) * len(shifts_c) + start[1] - shifts_c[0])
        attempt(first)
    for index in np.argsort(bound, axis=None, kind="stable").tolist():
        if bound.flat[index] >= best:
            break
        if index != first:
            attempt(index)
    return int(best), at


def paired_shift_distance(agents: np.ndarray, target: np.ndarray) -> int:
    """The reference's distance to the shape: the least assignment distance over the shifts that put
    a target cell on an agent's (`emd` in its task.py); at least `shape_distance`'s."""
    rows = agents[:, 0, None] - target[None, :, 0]
    cols = agents[:, 1, None] - target[None, :, 1]
    shifts = np.unique(np.stack([rows.ravel(), cols.ravel()], axis=1), axis=0)
    return min(_assignment(np.abs(rows - r) + np.abs(cols - c)) for r, c in shifts)


class Flocking(Rules):
    """Score: the most the distance to the target shape has fallen below its start, max over t of
    D_0 - D_t (never below 0)."""

    def __init__(
        self, worlds: Worlds, levels: list[Level], seeds: list[int], rounds: int, settings: Settings = HIVEBENCH
    ):
        super().__init__(worlds, levels, seeds, rounds, settings)
        self.target = ring(worlds.n)
        self.shifts: list[tuple[int, int] | None] = [None] * len(levels)  # each episode's last best shift
        self.start = self.distances()
        self.distance = self.start.copy()

    def distances(self) -> np.ndarray:
        n, found = self.worlds.n, []
        for s in range(len(self.score)):
            agents = self.worlds.position[s * n : (s + 1) * n]
            if self.settings["flocking_distance"] == "paired_shifts":
                found.append(paired_shift_distance(agents, self.target))
            else:
                distance, self.shifts[s] = shape_distance(agents, self.target, self.shifts[s])
                found.append(distance)
        return np.array(found)

    def update(self, step: int, actions: np.ndarray) -> None:
        self.distance = self.distances()
        self.score = np.maximum(self.score, self.start - self.distance)

    def summary(self) -> dict[str, list]:
        return {"initial_distance": self.start.tolist(), "final_distance": self.distance.tolist()}


class Transport(Rules):
    def __init__(
        self, worlds: Worlds, levels: list[Level], seeds: list[int], rounds: int, settings: Settings = HIVEBENCH
    ):
        super().__init__(worlds, levels, seeds, rounds, settings)
        self.left_at = np.full(worlds.agents, -1)  # the round each agent left the map in
        self.path: list[np.ndarray] = []  # the box's (rows, columns) moved by each state

    def track(self) -> None:
        self.path.append(self.worlds.moved[self.worlds.agents :].copy())

    def update(self, step: int, actions: np.ndarray) -> None:
        left = self.worlds.leave()
        self.left_at[left] = step
        self.score += (
            np.bincount(self.worlds.episode_of_agent[left], minlength=len(self.score))
            * (self.rounds - step)
            / self.rounds
        )

    def agent_columns(self) -> dict[str, np.ndarray]:
        return {"escaped": self.left_at >= 0}

    def summary(self) -> dict[str, list]:
        escaped = np.bincount(self.worlds.episode_of_agent[self.left_at >= 0], minlength=len(self.score))
        return {"escaped": escaped.tolist(), "box_path": np.stack(self.path, axis=1).tolist()}
