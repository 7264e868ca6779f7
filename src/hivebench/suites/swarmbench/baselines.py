"""Classical SwarmBench methods, vectorised over the agents of a block. Each reads only an agent's own
view, position, state, the round number and the messages delivered to it.

- `random`: every agent draws one of the task's actions uniformly, every round; says nothing.
- `heuristic`: one local rule per task:
  - Pursuit: step towards the prey when it is in view, and tell the others where it is ("P row col");
    otherwise towards the last place heard; otherwise a random step.
  - Synchronization: a clock: every agent keeps its light on in even rounds and off in odd ones
    (SWITCH when it differs), so all agree after every round.
  - Foraging: towards the food (nest) when it is in view and the agent is empty (loaded); otherwise
    follow the wall on its right hand through the maze (the food and nest lie in its corners).
  - Flocking: agent v walks to cell v of the shape placed with its corner at the map's first inside
    cell (its id and coordinates are its own knowledge; no one needs to see anyone).
  - Transport: towards the box when it is in view (so pushing it the way the agent comes from);
    towards the outside when that is in view and the box is not; otherwise a random step.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.suites.swarmbench.levels import FOOD, NEST, WALL, ring
from hivebench.suites.swarmbench.task import BOX, PREY, SwarmActions, SwarmViews
from hivebench.suites.swarmbench.world import ACTIONS, OUTSIDE, SWITCH

UP, DOWN, LEFT, RIGHT, STAY = (ACTIONS.index(a) for a in ("UP", "DOWN", "LEFT", "RIGHT", "STAY"))
# (row, column) step of each action index
STEP = np.array([(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1), (0, 0)])
CLOCKWISE = np.array([UP, RIGHT, DOWN, LEFT])  # headings, each a quarter turn right of the one before
PREY_SEEN = re.compile(r"^P (\d+) (\d+)$")


def towards(offset: np.ndarray) -> np.ndarray:
    """(agents,) the move that shortens each (row, column) offset along its longer axis; STAY at 0."""
    rows, cols = offset[:, 0], offset[:, 1]
    vertical = np.where(rows < 0, UP, DOWN)
    horizontal = np.where(cols < 0, LEFT, RIGHT)
    move = np.where(np.abs(rows) >= np.abs(cols), vertical, horizontal)
    return np.where((rows == 0) & (cols == 0), STAY, move)


def nearest(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per agent: whether its (agents, k, k) view `mask` has a True cell, and the offset to the nearest."""
    r = mask.shape[1] // 2
    grid = np.arange(-r, r + 1)
    rows, cols = np.meshgrid(grid, grid, indexing="ij")
    distance = np.where(mask, np.abs(rows) + np.abs(cols), 10**6).reshape(len(mask), -1)
    best = distance.argmin(axis=1)
    return distance.min(axis=1) < 10**6, np.stack([rows.ravel()[best], cols.ravel()[best]], axis=1)


class RandomMoves:
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng

    def decide(self, views: SwarmViews) -> SwarmActions:
        choices = len(ACTIONS) if views.task == "synchronization" else len(ACTIONS) - 1  # SWITCH only there
        return SwarmActions(self.rng.integers(0, choices, (len(views.present),)))


class LocalHeuristic:
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng
        self.heading: np.ndarray | None = None  # Foraging: each agent's heading (an index into CLOCKWISE)
        self.heard_prey: np.ndarray | None = None  # Pursuit: where each agent last heard the prey is

    def decide(self, views: SwarmViews) -> SwarmActions:
        wander = self.rng.integers(1, 5, (len(views.present),))  # one draw per agent every round
        return getattr(self, views.task)(views, wander)

    def pursuit(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        if self.heard_prey is None:
            self.heard_prey = np.full((len(views.present), 2), -1)
        for receiver, text in zip(views.heard_by.tolist(), views.heard.to_pylist()):
            match = PREY_SEEN.match(text or "")
            if match:
                self.heard_prey[receiver] = (int(match[1]), int(match[2]))
        seen, offset = nearest(views.cells == PREY)
        heard = self.heard_prey[:, 0] >= 0
        move = np.where(seen, towards(offset), np.where(heard, towards(self.heard_prey - views.position), wander))
        self.heard_prey[heard & (move == STAY)] = -1  # reached the place: forget it
        prey = views.position + offset
        texts = [f"P {r} {c}" if s else None for s, (r, c) in zip(seen.tolist(), prey.tolist())]
        return SwarmActions(move, pa.array(texts, pa.string()))

    def synchronization(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        wanted = views.step % 2 == 0
        return SwarmActions(np.where(views.state["light"] == wanted, STAY, SWITCH))

    def foraging(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        agents = len(views.present)
        if self.heading is None:
            self.heading = np.zeros(agents, dtype=np.int64)
        r = views.cells.shape[1] // 2
        blocked = np.isin(views.cells, (WALL, FOOD, NEST, OUTSIDE))
        ahead = lambda turn: (self.heading + turn) % 4  # noqa: E731
        move = np.full(agents, -1)
        chosen = np.zeros(agents, dtype=np.int64)
        for turn in (1, 0, 3, 2):  # right, straight, left, back
            heading = ahead(turn)
            step = STEP[CLOCKWISE[heading]]
            free = ~blocked[np.arange(agents), r + step[:, 0], r + step[:, 1]]
            pick = (move < 0) & free
            move, chosen = np.where(pick, CLOCKWISE[heading], move), np.where(pick, heading, chosen)
        self.heading = np.where(move >= 0, chosen, self.heading)
        want = np.where(views.state["carrying"], NEST, FOOD)
        goal_food, to_food = nearest(views.cells == FOOD)
        goal_nest, to_nest = nearest(views.cells == NEST)
        seen = np.where(want == FOOD, goal_food, goal_nest)
        offset = np.where((want == FOOD)[:, None], to_food, to_nest)
        return SwarmActions(np.where(seen, towards(offset), np.maximum(move, STAY)))

    def flocking(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        target = ring(views.n) + 1  # the shape with its corner at (1, 1), the map's first inside cell
        agent = np.arange(len(views.present)) % views.n
        mine = target[np.minimum(agent, len(target) - 1)]  # agent v takes the shape's cell v
        spare = agent >= len(target)  # agents beyond the shape's cells stay where they are
        return SwarmActions(np.where(spare, STAY, towards(mine - views.position)))

    def transport(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        out_seen, to_out = nearest(views.cells == OUTSIDE)
        box_seen, to_box = nearest(views.cells == BOX)
        move = np.where(out_seen & ~box_seen, towards(to_out), wander)
        return SwarmActions(np.where(box_seen, towards(to_box), move))
