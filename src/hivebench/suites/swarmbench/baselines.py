"""Classical SwarmBench methods for every agent of a block. Each reads only an agent's own view,
position, id and state, the round number, the map's side, and the messages delivered to it.

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
  - Transport: look for the box in the map's corners in turn (agent v starts at corner v mod 4). An
    agent that sees three or more box cells works out which of the 8 shapes it is and how far it has
    moved, and tells the others in reach ("BOX shape along out"; they pass it on). It then stands
    behind the box's body, two deep, and pushes: one cell along the wall towards the corner, then out
    through the gap; once the box is out, it walks to the gap and leaves.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import Policy
from hivebench.seeding import Streams
from hivebench.suites.swarmbench.levels import BOXES, FOOD, NEST, WALL, box_cells, ring
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


class RandomMoves(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng

    def decide(self, views: SwarmViews) -> SwarmActions:
        choices = len(ACTIONS) if views.task == "synchronization" else len(ACTIONS) - 1  # SWITCH only there
        return SwarmActions(self.rng.integers(0, choices, (len(views.present),)))


class LocalHeuristic(Policy):
    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng
        self.heading: np.ndarray | None = None  # Foraging: each agent's heading (an index into CLOCKWISE)
        self.heard_prey: np.ndarray | None = None  # Pursuit: where each agent last heard the prey is
        self.box: np.ndarray | None = None  # Transport: what each agent knows of the box
        self.corner: np.ndarray | None = None

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
        agents = len(views.present)
        if self.box is None:
            self.box = np.full((agents, 3), -1)  # per agent: the box's shape, steps along, steps out (-1: unknown)
            self.corner = np.arange(agents) % views.n % 4  # the corner each agent looks in next (by its id)
        for receiver, text in zip(views.heard_by.tolist(), views.heard.to_pylist()):
            match = BOX_SEEN.match(text or "")
            if match and tuple(map(int, match.groups()))[1:] > tuple(self.box[receiver, 1:]):
                self.box[receiver] = tuple(map(int, match.groups()))
        r = views.cells.shape[1] // 2
        move, texts = wander.copy(), [None] * agents
        for v in np.flatnonzero(views.present).tolist():
            seen = np.argwhere(views.cells[v] == BOX) + views.position[v] - r
            if len(seen) >= 3:
                self.box[v] = where_box(seen, views.position[v] - r, 2 * r + 1, views.size, self.box[v])
            elif (
                not len(seen)
                and self.box[v, 1] == 1
                and expected_in_view(self.box[v], views.position[v] - r, 2 * r + 1, views.size)
            ):
                self.box[v, 2] = OUT_STEPS  # it should be in view and is not: it has gone out
            if self.box[v, 0] >= 0:
                texts[v] = "BOX {} {} {}".format(*self.box[v])
                target, push = box_target(views.position[v], self.box[v], views.size)
            else:
                corner = CORNERS[self.corner[v]] * (views.size - 3) + 1
                if np.abs(corner - views.position[v]).sum() <= 1:
                    self.corner[v] = (self.corner[v] + 1) % 4  # nothing here: the next corner, clockwise
                target, push = corner, STAY
            offset = target - views.position[v]
            move[v] = push if not offset.any() else around(towards(offset[None])[0], offset, views.cells[v], wander[v])
        return SwarmActions(move, pa.array(texts, pa.string()))


# Transport's plan: the box must first go one cell along its wall (towards its corner), then out.
BOX_SEEN = re.compile(r"^BOX (\d) (\d) (\d)$")
CORNERS = np.array([(0, 0), (0, 1), (1, 1), (1, 0)])  # clockwise, as fractions of the map
OUT_STEPS = 4  # pushes out that take the 3-deep body past the wall


def box_geometry(template: int, size: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(cells at the start, which of them are the bar in the wall, the action out, the action along)."""
    cells = box_cells(template, size)
    edge = {UP: cells[:, 0] == 0, DOWN: cells[:, 0] == size - 1, LEFT: cells[:, 1] == 0, RIGHT: cells[:, 1] == size - 1}
    out = max(edge, key=lambda action: int(edge[action].sum()))  # the wall holding most of the bar
    corner = cells[edge[out]]
    if out in (UP, DOWN):
        along = RIGHT if corner[:, 1].max() == size - 1 else LEFT
    else:
        along = DOWN if corner[:, 0].max() == size - 1 else UP
    return cells, edge[out], out, along


def where_box(seen: np.ndarray, corner: np.ndarray, k: int, size: int, known: np.ndarray) -> np.ndarray:
    """(shape, steps along, steps out) whose box has exactly the `seen` cells in the k x k view whose
    top-left cell is `corner`; `known` if none has."""
    seen_set = {tuple(c) for c in seen.tolist()}
    for template in range(len(BOXES)):
        cells, _, out, along = box_geometry(template, size)
        for steps_along in (0, 1):
            for steps_out in range(OUT_STEPS + 2):
                moved = cells + steps_along * STEP[along] + steps_out * STEP[out]
                in_view = ((moved >= corner) & (moved < corner + k)).all(axis=1)
                if {tuple(c) for c in moved[in_view].tolist()} == seen_set:
                    return np.array([template, steps_along, steps_out])
    return known


def expected_in_view(box: np.ndarray, corner: np.ndarray, k: int, size: int) -> bool:
    """Whether the box as known has a cell on the map inside the k x k view whose top-left is `corner`."""
    template, steps_along, steps_out = box.tolist()
    cells, _, out, along = box_geometry(template, size)
    moved = cells + steps_along * STEP[along] + steps_out * STEP[out]
    on_map = ((moved >= 0) & (moved < size)).all(axis=1)
    return bool((((moved >= corner) & (moved < corner + k)).all(axis=1) & on_map).any())


def box_target(position: np.ndarray, box: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """Where an agent should stand and which way it should push: behind the box's body (two deep), or
    once the box is out, at the gap and then out."""
    template, steps_along, steps_out = box.tolist()
    cells, bar, out, along = box_geometry(template, size)
    if steps_out >= OUT_STEPS:  # the way is open: to the gap, then out
        gap = cells[bar]
        return gap[np.abs(gap - position).sum(axis=1).argmin()], out
    push = along if steps_along == 0 else out
    body = cells[~bar] + steps_along * STEP[along] + steps_out * STEP[out]
    body_set = {tuple(c) for c in body.tolist()}
    back = [tuple(c - STEP[push]) for c in body if tuple(c - STEP[push]) not in body_set]
    spots = np.array(back + [(r - STEP[push][0], c - STEP[push][1]) for r, c in back])
    inside = ((spots > 0) & (spots < size - 1)).all(axis=1)
    spots = spots[inside] if inside.any() else spots  # a map too small to stand two deep inside
    if (spots == position).all(axis=1).any():
        return position, push
    return spots[np.abs(spots - position).sum(axis=1).argmin()], push


def around(move: int, offset: np.ndarray, view: np.ndarray, fallback: int) -> int:
    """`move`, or the other axis's step towards `offset` when a wall or the box is in the way (else `fallback`)."""
    r = view.shape[0] // 2
    blocked = lambda action: view[r + STEP[action][0], r + STEP[action][1]] in (WALL, BOX)  # noqa: E731
    if not blocked(move):
        return move
    other = towards(np.array([[0, offset[1]]]) if move in (UP, DOWN) else np.array([[offset[0], 0]]))[0]
    return other if other != STAY and not blocked(other) else fallback
