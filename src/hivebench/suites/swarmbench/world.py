"""A job block's SwarmBench worlds side by side: one padded grid per episode, the bodies on it, and one
round of movement under the push physics.

Each episode's map sits inside a margin of OUTSIDE cells (what an agent's view shows past the map's
edge, and where Transport's box and agents leave through the gap). Bodies: agent v of episode s is
body s * n + v; Transport's box of episode s is body S * n + s, and so is Pursuit's prey where it can
be pushed (`prey_pushable: first`, the reference's first prey: one cell of mass 1). Walls, food, nest
and any other prey are static: agents cannot push them.
"""

from __future__ import annotations

import numpy as np

from hivebench.engine.block import Block
from hivebench.suites.swarmbench import physics
from hivebench.suites.swarmbench.levels import FLOOR, Level

OUTSIDE = 4  # a terrain code past the map's edge
AGENT_MASS, BOX_MASS = 1, 5
# Action codes: STAY, then the physics' push codes for UP, DOWN, LEFT, RIGHT, then SWITCH.
STAY, SWITCH = physics.STILL, 5
ACTIONS = ("STAY", *physics.DIRECTIONS, "SWITCH")


class Worlds:
    """The block's grids, bodies and agent positions (map coordinates: row, column; row 0 on top)."""

    def __init__(self, levels: list[Level], margin: int, pushable_prey: bool = False):
        self.n = len(levels[0].agents)
        self.size = len(levels[0].terrain)
        self.margin = margin
        episodes, padded = len(levels), self.size + 2 * margin
        self.terrain = np.full((episodes, padded, padded), OUTSIDE, dtype=np.int8)
        inside = (slice(None), slice(margin, margin + self.size), slice(margin, margin + self.size))
        self.terrain[inside] = np.stack([lv.terrain for lv in levels])
        self.block = Block(self.n, episodes)  # agent v of episode s is body s * n + v
        self.agents = self.block.agents
        boxes = [lv.box for lv in levels]
        prey_bodies = pushable_prey and levels[0].prey is not None
        bodies = self.agents + (episodes if boxes[0] is not None or prey_bodies else 0)
        self.mass = np.full(bodies, AGENT_MASS, dtype=np.int64)  # a prey body weighs as an agent
        self.multi = np.zeros(bodies, dtype=bool)
        if boxes[0] is not None:
            self.mass[self.agents :], self.multi[self.agents :] = BOX_MASS, True
        self.grid = np.where((self.terrain == FLOOR) | (self.terrain == OUTSIDE), physics.EMPTY, physics.STATIC).astype(
            np.int32
        )
        self.episode_of_agent = self.block.episode_of_agent
        starts = np.concatenate([lv.agents for lv in levels]) + margin
        self.grid[self.episode_of_agent, starts[:, 0], starts[:, 1]] = np.arange(self.agents)
        for s, box in enumerate(boxes):
            if box is not None:
                self.grid[s, box[:, 0] + margin, box[:, 1] + margin] = self.agents + s
        self.present = np.ones(self.agents, dtype=bool)  # False once an agent has left the map (Transport)
        self.moved = np.zeros((bodies, 2), dtype=np.int64)  # each body's (rows, columns) moved so far
        self.position = starts - margin

    def inside(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return (rows >= 0) & (rows < self.size) & (cols >= 0) & (cols < self.size)

    def move(self, actions: np.ndarray) -> None:
        """One round of the four push passes; each agent pushes in its action's direction (STAY and
        SWITCH push nowhere); agents that have left the map do nothing."""
        push = np.zeros(len(self.mass), dtype=np.int8)
        moving = (actions >= 1) & (actions <= len(physics.DIRECTIONS)) & self.present
        push[: self.agents][moving] = actions[moving]
        for direction, step in physics.DIRECTIONS.items():
            moving = physics.movers(self.grid, self.mass, push, self.multi, direction)
            self.grid = physics.shift(self.grid, moving, direction)
            self.moved[moving] += step
        episode, rows, cols = np.nonzero((self.grid >= 0) & (self.grid < self.agents))
        self.position[self.grid[episode, rows, cols]] = np.stack([rows, cols], axis=1) - self.margin

    def leave(self) -> np.ndarray:
        """Remove the agents and boxes that are wholly outside the map; (agents,) those that left now."""
        rows, cols = self.position[:, 0], self.position[:, 1]
        left = self.present & ~self.inside(rows, cols)
        self.grid[self.episode_of_agent[left], rows[left] + self.margin, cols[left] + self.margin] = physics.EMPTY
        self.present &= ~left
        map_cells = self.map_view(self.grid)
        for episode, box in enumerate(range(self.agents, len(self.mass))):
            if not (map_cells[episode] == box).any():
                self.grid[episode][self.grid[episode] == box] = physics.EMPTY
        return left

    def map_view(self, cells: np.ndarray) -> np.ndarray:
        """(episodes, size, size) of a padded array: the map's part."""
        return cells[:, self.margin : self.margin + self.size, self.margin : self.margin + self.size]

    def around(self, values: np.ndarray, radius: int) -> np.ndarray:
        """(agents, 2r + 1, 2r + 1): each agent's surroundings in a padded (episodes, ...) array, centred
        on it (the margin must be at least r)."""
        offsets = np.arange(-radius, radius + 1)
        rows = self.position[:, 0, None, None] + self.margin + offsets[None, :, None]
        cols = self.position[:, 1, None, None] + self.margin + offsets[None, None, :]
        rows, cols = np.clip(rows, 0, values.shape[1] - 1), np.clip(cols, 0, values.shape[2] - 1)
        return values[self.episode_of_agent[:, None, None], rows, cols]
