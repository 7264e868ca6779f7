"""SwarmBench's push physics: the direct rule gives the movers of the reference's integer program
(solved here with scipy's MILP) on random states, and a round keeps the world whole."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import soak_count, soak_seed
from scipy.optimize import Bounds, LinearConstraint, milp

from hivebench.suites.swarmbench.physics import (
    CODES,
    DIRECTIONS,
    EMPTY,
    FORCE,
    OPPOSITE,
    STATIC,
    STILL,
    movers,
    shift,
)

BOX_MASS = 5


def ilp_movers(grid: np.ndarray, mass: np.ndarray, push: np.ndarray, direction: str) -> set[int]:
    """The reference's program for one pass: x_v (moves) binary, a flow f >= 0 along each 'is in front
    of' edge; maximise the movers subject to: whatever is in front of a mover moves (nothing static
    is), net force in >= mass for a mover, a mover passes on at most net - mass, others pass nothing.
    A body pushing against the pass counts as mass + 2, force 0 (as the reference converts it)."""
    dr, dc = DIRECTIONS[direction]
    bodies = sorted(int(b) for b in np.unique(grid) if b >= 0)
    index = {b: i for i, b in enumerate(bodies)}
    edges, blocked = set(), set()
    for s, r, c in zip(*np.nonzero(grid >= 0)):
        v, r2, c2 = int(grid[s, r, c]), r + dr, c + dc
        if not (0 <= r2 < grid.shape[1] and 0 <= c2 < grid.shape[2]):
            continue
        w = int(grid[s, r2, c2])
        if w == STATIC:
            blocked.add(v)
        elif w >= 0 and w != v:
            edges.add((v, w))
    edges = sorted(edges)
    n, m = len(bodies), len(edges)
    force = np.array(
        [
            FORCE if push[b] == CODES[direction] else -FORCE if push[b] == CODES[OPPOSITE[direction]] else 0
            for b in bodies
        ]
    )
    weight = np.array([mass[b] for b in bodies]) + np.maximum(0, -force)
    force = np.maximum(force, 0)
    big = 1000.0
    rows, lower, upper = [], [], []

    def row(x: dict[int, float], f: dict[int, float], lo: float, hi: float) -> None:
        a = np.zeros(n + m)
        for i, value in x.items():
            a[i] += value
        for e, value in f.items():
            a[n + e] += value
        rows.append(a)
        lower.append(lo)
        upper.append(hi)

    for e, (v, w) in enumerate(edges):
        row({index[w]: 1, index[v]: -1}, {}, 0, np.inf)  # closure
        row({index[w]: -big}, {e: 1}, -np.inf, 0)  # only a mover receives
    for i, b in enumerate(bodies):
        incoming = {e: 1.0 for e, (_, w) in enumerate(edges) if w == b}
        outgoing = {e: 1.0 for e, (v, _) in enumerate(edges) if v == b}
        row({i: -weight[i]}, incoming, -force[i], np.inf)  # force in + own >= mass * x
        row(
            {i: weight[i]}, {e: 1.0 for e in outgoing} | {e: -1.0 for e in incoming}, -np.inf, force[i]
        )  # out <= net - mass
        row({i: -big}, outgoing, -np.inf, 0)  # only a mover passes on
    upper_x = np.array([0.0 if b in blocked else 1.0 for b in bodies])
    result = milp(
        c=np.concatenate([-np.ones(n), np.zeros(m)]),
        constraints=LinearConstraint(np.array(rows), lower, upper) if rows else None,
        integrality=np.concatenate([np.ones(n), np.zeros(m)]),
        bounds=Bounds(np.zeros(n + m), np.concatenate([upper_x, np.full(m, np.inf)])),
    )
    assert result.success
    return {b for b, x in zip(bodies, result.x[:n]) if x > 0.5}


def play_round(grid: np.ndarray, mass: np.ndarray, push: np.ndarray, multi: np.ndarray) -> np.ndarray:
    """One round's four passes, in order (as the world plays them)."""
    for direction in DIRECTIONS:
        grid = shift(grid, movers(grid, mass, push, multi, direction), direction)
    return grid


def random_state(rng: np.random.Generator, box: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A small world: walls (a border, sometimes with gaps), agents pushing anywhere, maybe a box."""
    h, w = int(rng.integers(4, 9)), int(rng.integers(4, 9))
    grid = np.full((1, h, w), EMPTY)
    grid[0, rng.random((h, w)) < (0.04 if box else 0.12)] = STATIC
    if rng.random() < 0.7:  # a border, sometimes with gaps to leave through
        grid[0, [0, -1], :] = STATIC
        grid[0, :, [0, -1]] = STATIC
        border = np.flatnonzero(grid[0].ravel() == STATIC)
        grid[0].ravel()[rng.choice(border, size=int(rng.integers(0, 4)), replace=False)] = EMPTY
    bodies = 0
    if box:
        rows, cols = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        r, c = int(rng.integers(0, h - rows + 1)), int(rng.integers(0, w - cols + 1))
        shape = rng.random((rows, cols)) < 0.8
        shape[0, 0] = shape[-1, -1] = True
        if shape.sum() >= 2:
            grid[0, r : r + rows, c : c + cols][shape] = 0
            bodies = 1
    free = np.flatnonzero(grid[0].ravel() == EMPTY)
    agents = rng.choice(free, size=min(len(free), int(rng.integers(1, 2 + h * w * 3 // 4))), replace=False)
    grid[0].ravel()[agents] = np.arange(bodies, bodies + len(agents))
    total = bodies + len(agents)
    mass = np.ones(total, dtype=np.int64)
    multi = np.zeros(total, dtype=bool)
    push = rng.integers(0, 5, total).astype(np.int8)
    if bodies:  # most agents behind the box push it, so that it does move at times
        direction = list(DIRECTIONS)[int(rng.integers(0, 4))]
        dr, dc = DIRECTIONS[direction]
        rows_, cols_ = np.nonzero(grid[0] == 0)
        behind = {(r - dr * k, c - dc * k) for r, c in zip(rows_, cols_) for k in (1, 2, 3, 4, 5)}
        for r, c in behind:
            if 0 <= r < h and 0 <= c < w and grid[0, r, c] > 0 and rng.random() < 0.85:
                push[grid[0, r, c]] = CODES[direction]
    if bodies:
        mass[0], multi[0], push[0] = BOX_MASS, True, STILL
    return grid, mass, push, multi


@pytest.mark.slow  # ~8 s at CI's sample: an integer program per round
@pytest.mark.soak  # 400 states (100 without a box); 1,500 and 400 under `make soak`, on fresh seeds
@pytest.mark.parametrize("box", [False, True], ids=["agents", "agents and a box"])
def test_the_rule_moves_what_the_integer_program_moves(box):
    rng = np.random.default_rng(soak_seed(7 + box))
    states = soak_count(400, 1500) if box else soak_count(100, 400)
    moved, box_moved = 0, 0
    for _ in range(states):
        grid, mass, push, multi = random_state(rng, box)
        for direction in DIRECTIONS:
            got = set(np.flatnonzero(movers(grid, mass, push, multi, direction)).tolist())
            assert got == ilp_movers(grid, mass, push, direction), (grid[0], push, direction)
            moved += len(got)
            box_moved += bool(multi.any() and 0 in got)
    assert moved > states  # the states are not all stuck
    assert box_moved > states // 75 or not box  # nor the boxes


def line(cells: str, direction: str = "RIGHT") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A one-row world from text: '.' empty, 'W' wall, '>' an agent pushing right, '<' left, 'o' an
    agent pushing nowhere, 'B' a cell of the box."""
    grid = np.full((1, 1, len(cells)), EMPTY)
    push, mass, multi = [], [], []
    box = None
    for i, ch in enumerate(cells):
        if ch == "W":
            grid[0, 0, i] = STATIC
        elif ch == "B":
            if box is None:
                box = len(push)
                push.append(STILL), mass.append(BOX_MASS), multi.append(True)
            grid[0, 0, i] = box
        elif ch != ".":
            grid[0, 0, i] = len(push)
            push.append({">": CODES["RIGHT"], "<": CODES["LEFT"], "o": STILL}[ch]), mass.append(1), multi.append(False)
    return grid, np.array(mass), np.array(push, dtype=np.int8), np.array(multi)


def after_pass(cells: str) -> str:
    grid, mass, push, multi = line(cells)
    moved = shift(grid, movers(grid, mass, push, multi, "RIGHT"), "RIGHT")
    return "".join("W" if x == STATIC else "." if x == EMPTY else "*" for x in moved[0, 0])


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (">..", ".*."),  # a mover alone
        (">o.", ".**"),  # force 2 moves itself and one idle agent
        (">oo.", ">oo.".replace(">", "*").replace("o", "*")),  # but not two: nothing moves
        (">o>.", ".***"),  # a pusher behind helps: 1, 0, 1
        ("o>.", "*.*"),  # no pulling: the idle agent behind stays
        (">W", "*W"),  # nothing passes a wall
        (">>>>oW", "*****W"),  # a chain against a wall stays
        ("><..", "**.."),  # head-on pushers: the one pushing against resists with mass 3
        (">>>>>BB.", ".*****BB".replace("B", "*")),  # five pushers move the box (mass 5)
        (">>>>BB.", "****BB.".replace("B", "*")),  # four do not
    ],
)
def test_force_and_mass_as_stated(before, after):
    assert after_pass(before) == after


def test_a_round_keeps_every_body_whole_and_the_walls_in_place_whatever_the_agents_order():
    rng = np.random.default_rng(3)
    for _ in range(200):
        grid, mass, push, multi = random_state(rng, bool(rng.random() < 0.5))
        grid[0, [0, -1], :] = STATIC  # a closed map: nothing leaves it
        grid[0, :, [0, -1]] = STATIC
        after = play_round(grid, mass, push, multi)
        assert np.array_equal(after == STATIC, grid == STATIC)
        assert np.array_equal(
            np.bincount(after[after >= 0], minlength=len(mass)), np.bincount(grid[grid >= 0], minlength=len(mass))
        )
        # the same world with the agents numbered in another order moves the same way
        agents = np.flatnonzero(~multi)
        relabel = np.arange(len(mass))
        relabel[agents] = rng.permutation(agents)
        inverse = np.argsort(relabel)
        renamed = np.where(grid >= 0, relabel[np.maximum(grid, 0)], grid)
        moved = play_round(renamed, mass[inverse], push[inverse], multi[inverse])
        assert np.array_equal(moved, np.where(after >= 0, relabel[np.maximum(after, 0)], after))


def test_a_body_pushed_past_the_arrays_edge_leaves_it():
    grid, mass, push, multi = line(">>>>>BB")
    moved = shift(grid, movers(grid, mass, push, multi, "RIGHT"), "RIGHT")
    assert (moved[0, 0] == 0).sum() == 1  # one cell of the box is left in the array
