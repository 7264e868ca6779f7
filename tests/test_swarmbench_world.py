"""SwarmBench levels, task rules, messages and episodes (the suite's engine-independent parts)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pyarrow as pa
import pytest
from scipy.optimize import linear_sum_assignment

from hivebench.seeding import Streams
from hivebench.suites.swarmbench import TASKS, capacity, rules, side
from hivebench.suites.swarmbench.levels import (
    BOXES,
    FLOOR,
    FOOD,
    NEST,
    WALL,
    Level,
    level,
    ring,
    walled,
)
from hivebench.suites.swarmbench.task import SwarmActions, SwarmTask
from hivebench.suites.swarmbench.world import ACTIONS, Worlds

PLAYED = TASKS
PARAMS = {"rounds": 20, "view": 5, "grid": "auto", "message_chars": 120, "to_sender": False}
A = {name: i for i, name in enumerate(ACTIONS)}


def reachable(terrain: np.ndarray, start: tuple[int, int]) -> np.ndarray:
    seen = np.zeros_like(terrain, dtype=bool)
    queue = deque([start])
    seen[start] = True
    while queue:
        r, c = queue.popleft()
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            rr, cc = r + dr, c + dc
            if terrain[rr, cc] != WALL and not seen[rr, cc]:
                seen[rr, cc] = True
                queue.append((rr, cc))
    return seen


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("n", [4, 12, 16, 64, 128])
def test_levels_place_every_agent_on_its_own_free_cell_from_the_seed(task, n):
    size = side(n)
    assert n <= capacity(task, size)
    for seed in range(5):
        lv = level(task, n, seed)
        assert lv.terrain.shape == (size, size)
        cells = {tuple(a) for a in lv.agents.tolist()}
        assert len(cells) == n and all(lv.terrain[c] == FLOOR for c in cells)
        if lv.box is not None:
            assert not cells & {tuple(b) for b in lv.box.tolist()}
        again = level(task, n, seed)
        assert np.array_equal(again.terrain, lv.terrain) and np.array_equal(again.agents, lv.agents)
    assert not np.array_equal(level(task, n, 0).agents, level(task, n, 1).agents)


def test_the_map_keeps_the_papers_density():
    assert [side(n) for n in (8, 12, 16, 32, 64, 128)] == [10, 10, 12, 16, 21, 29]
    for n in (12, 16, 32, 64, 128):
        assert n / (side(n) - 2) ** 2 <= 12 / 64 + 1e-9


def test_pursuit_starts_the_prey_in_the_far_quadrant_and_the_agents_in_the_near_one():
    for seed in range(20):
        lv = level("pursuit", 12, seed)
        assert lv.prey[0] > 5 and lv.prey[1] > 5
        assert lv.agents.max() <= 5


@pytest.mark.parametrize("n", [8, 16, 64, 128])
def test_the_foraging_maze_joins_food_and_nest_through_its_gaps(n):
    for seed in range(10):
        terrain = level("foraging", n, seed).terrain
        assert (terrain == FOOD).sum() == 4 and (terrain == NEST).sum() == 4
        food = tuple(np.argwhere(terrain == FOOD)[0])
        seen = reachable(terrain, food)
        assert seen[terrain == NEST].all() and seen[terrain == FLOOR].all()
        # a serpentine: the walls across the map leave the shortest way longer than the straight one
        assert (terrain[1:-1, 1:-1] == WALL).sum() >= side(n) - 4


def test_transport_boxes_lie_in_the_wall_one_cell_off_their_gap():
    for shape, _ in BOXES:
        assert sum(line.count("B") for line in shape) == 13
    for seed in range(16):
        lv = level("transport", 12, seed)
        size = len(lv.terrain)
        on_edge = (lv.box == 0) | (lv.box == size - 1)
        assert on_edge.any(axis=1).sum() == 4  # the bar, where the wall's gap is
        assert all(lv.terrain[tuple(b)] == FLOOR for b in lv.box)


def test_window_sums_are_the_sums_of_each_cells_square():
    values = np.random.default_rng(0).integers(0, 3, (2, 9, 11))
    sums = rules.window_sums(values, 2, 2)
    for s, r, c in [(0, 0, 0), (1, 4, 5), (0, 8, 10), (1, 2, 9)]:
        assert sums[s, r, c] == values[s, max(r - 2, 0) : r + 3, max(c - 2, 0) : c + 3].sum()
    lopsided = rules.window_sums(values, 4, 3)  # the reference prey's grid[i - 4 : i + 4, j - 4 : j + 4]
    for s, r, c in [(0, 0, 0), (1, 4, 5), (0, 8, 10), (1, 2, 9)]:
        assert lopsided[s, r, c] == values[s, max(r - 4, 0) : r + 4, max(c - 4, 0) : c + 4].sum()


def worlds_at(terrain: np.ndarray, agents: list[tuple[int, int]], **level_fields) -> Worlds:
    return Worlds([Level(terrain, np.array(agents), **level_fields)], margin=2)


def test_pursuit_catches_a_surrounded_prey_and_respawns_it_where_it_is_safest():
    worlds = worlds_at(walled(10), [(4, 5), (6, 5), (5, 4), (5, 6)], prey=(5, 5))
    pursuit = rules.Pursuit(worlds, [Level(walled(10), np.zeros((4, 2)), prey=(5, 5))], [0], rounds=20)
    pursuit.update(0, np.zeros(4, dtype=np.int8))
    assert pursuit.score.tolist() == [1.0]
    danger = pursuit._danger()[0, 2:12, 2:12]
    free = worlds.map_view(worlds.grid)[0] == -1
    free[tuple(pursuit.prey[0])] = True
    assert danger[tuple(pursuit.prey[0])] == danger[free].min()


def pursuit_at(size: int, agents: list[tuple[int, int]], prey: tuple[int, int]) -> rules.Pursuit:
    worlds = worlds_at(walled(size), agents, prey=prey)
    return rules.Pursuit(worlds, [Level(walled(size), np.zeros((len(agents), 2)), prey=prey)], [0], rounds=20)


def test_pursuit_prey_runs_two_cells_from_danger():
    pursuit = pursuit_at(12, [(5, 1), (5, 2), (6, 2)], prey=(5, 4))  # agents on its left: it runs right
    pursuit.update(0, np.zeros(3, dtype=np.int8))
    assert pursuit.prey[0].tolist() == [5, 6]


def test_pursuit_prey_weighs_its_moves_against_its_own_cell_not_the_one_left_of_it():
    """Five agents just in reach of the cell left of the prey, not of the prey's own cell: the
    reference's stale baseline (that cell) would make it move to a calm cell two to the right; against
    its own calm cell no move is better, so it stays."""
    pursuit = pursuit_at(16, [(6, 3), (7, 3), (8, 3), (9, 3), (10, 3)], prey=(8, 8))
    danger = pursuit._danger()[0, 2:18, 2:18]
    assert danger[8, 7] > danger[8, 8] == danger[8, 10] == 0
    pursuit.update(0, np.zeros(5, dtype=np.int8))
    assert pursuit.prey[0].tolist() == [8, 8]


def test_synchronization_scores_agreement_on_and_off_in_turn():
    lights = np.array([True, True, False])
    worlds = worlds_at(walled(10), [(1, 1), (1, 3), (1, 5)])
    sync = rules.Synchronization(worlds, [Level(walled(10), np.zeros((3, 2)), lights=lights)], [0], rounds=20)
    stay, switch = A["STAY"], A["SWITCH"]
    sync.update(0, np.array([stay, stay, switch]))  # all on
    sync.update(1, np.array([stay, stay, stay]))  # still all on: no new point
    assert sync.score.tolist() == [1.0]
    sync.update(2, np.array([switch, switch, switch]))  # all off
    sync.update(3, np.array([switch, switch, switch]))  # all on again
    assert sync.score.tolist() == [3.0]


def test_foraging_loads_beside_the_food_and_delivers_beside_the_nest():
    terrain = walled(10)
    terrain[1:3, 1:3] = FOOD
    terrain[7:9, 7:9] = NEST
    worlds = worlds_at(terrain, [(3, 1), (6, 8)])
    forage = rules.Foraging(worlds, [Level(terrain, np.zeros((2, 2)))], [0], rounds=20)
    forage.update(0, np.zeros(2, dtype=np.int8))
    assert forage.carrying.tolist() == [True, False] and forage.score.tolist() == [0.0]
    worlds.position[0] = (6, 7)  # the loaded agent reaches the nest
    worlds.grid[0, 3 + 2, 1 + 2], worlds.grid[0, 6 + 2, 7 + 2] = -1, 0
    forage.update(1, np.zeros(2, dtype=np.int8))
    assert forage.score.tolist() == [1.0] and forage.carrying.tolist() == [False, False]


def test_transport_five_pushers_move_the_box_along_the_wall_then_out_and_escapes_score_by_round():
    terrain = walled(10)
    shape, _ = BOXES[0]  # a 3 x 3 body at rows 6-8, columns 5-7; its bar in the bottom wall, columns 6-9
    box = np.array([(r + 6, c + 5) for r, line in enumerate(shape) for c, ch in enumerate(line) if ch == "B"])
    terrain[9, 6:10] = FLOOR
    # five pushers left of the body (two rows of two, one of one), five above it
    pushers_right = [(6, 3), (6, 4), (7, 3), (7, 4), (8, 4)]
    pushers_down = [(4, 6), (5, 6), (4, 7), (5, 7), (5, 8)]
    worlds = worlds_at(terrain, pushers_right + pushers_down, box=box)
    transport = rules.Transport(worlds, [Level(terrain, np.zeros((10, 2)), box=box)], [0], rounds=10)
    right, down, stay = A["RIGHT"], A["DOWN"], A["STAY"]
    moves = np.array([right] * 5 + [stay] * 5)
    worlds.move(moves)  # straight down it cannot go (a wall under the body): first one cell right
    transport.update(0, moves)
    assert (worlds.map_view(worlds.grid)[0, 9, 7:10] == 10).all() and worlds.map_view(worlds.grid)[0, 9, 6] == -1
    moves = np.array([stay] * 5 + [down] * 5)
    for step in range(1, 5):
        worlds.move(moves)
        transport.update(step, moves)
    assert not (worlds.grid == 10).any()  # wholly outside the map: gone
    assert transport.score.tolist() == [0.0]
    for step in range(5, 8):  # the pushers above follow it out
        worlds.move(moves)
        transport.update(step, moves)
    # By hand: the box's 4 rows (body 6-8, bar 9) are gone after round 4. The three pushers that
    # started on row 5 walk down behind it and step out of the gap (row 10) in round 5, the two from
    # row 4 in round 6; the five left of it never leave. Score: sum of (T - t) / T with T = 10.
    assert transport.left_at.tolist() == [-1] * 5 + [6, 5, 6, 5, 5]
    assert transport.score[0] == pytest.approx(3 * (10 - 5) / 10 + 2 * (10 - 6) / 10)


def distance_at(agents: np.ndarray, target: np.ndarray, dr: int, dc: int) -> int:
    cost = np.abs(agents[:, 0, None] - target[None, :, 0] - dr) + np.abs(agents[:, 1, None] - target[None, :, 1] - dc)
    return int(cost[linear_sum_assignment(cost)].sum())


def test_the_shape_distance_is_the_least_over_every_shift():
    rng = np.random.default_rng(4)
    for _ in range(120):
        n = int(rng.integers(3, 17))
        agents = np.stack(np.unravel_index(rng.choice(100, n, replace=False), (10, 10)), axis=1)
        target = ring(n)
        every = min(distance_at(agents, target, dr, dc) for dr in range(-12, 12) for dc in range(-12, 12))
        distance, shift = rules.shape_distance(agents, target)
        assert distance == every == distance_at(agents, target, *shift)
        assert rules.shape_distance(agents, target, start=(shift[0] + 1, shift[1] - 2))[0] == every
    square = ring(12) + (3, 4)  # agents already in the shape, anywhere: distance 0
    assert rules.shape_distance(square, ring(12)) == (0, (3, 4))


def test_flocking_scores_how_far_the_distance_fell_below_its_start():
    terrain = walled(10)
    start = [(1, 1), (1, 8), (8, 1), (8, 8), (4, 4), (5, 5), (2, 6), (7, 3)]
    worlds = worlds_at(terrain, start)
    flock = rules.Flocking(worlds, [Level(terrain, np.array(start))], [0], rounds=20)
    assert flock.score.tolist() == [0.0] and flock.start[0] > 0
    target = ring(8) + (3, 3)
    worlds.position[:] = target  # the agents stand in the shape
    flock.update(0, np.zeros(8, dtype=np.int8))
    assert flock.score.tolist() == [float(flock.start[0])] and flock.distance.tolist() == [0]
    worlds.position[:] = start  # back where they started: the best stays
    flock.update(1, np.zeros(8, dtype=np.int8))
    assert flock.score.tolist() == [float(flock.start[0])]


def play(task: str, seeds: list[int], n: int = 8, rounds: int = 15) -> list:
    """Random moves and short random messages, drawn per episode."""
    game = SwarmTask({**PARAMS, "task": task, "rounds": rounds}, n)
    game.reset(seeds)
    rng, say = Streams(seeds, "policy"), Streams(seeds, "say")
    texts = np.array(["", "hello", "x" * 130, "go right"], dtype=object)
    while not game.done:
        views = game.observe()
        moves = rng.integers(0, len(ACTIONS) if task == "synchronization" else 5, (len(views.present),))
        words = texts[say.integers(0, 4, (len(views.present),))]
        game.step(SwarmActions(moves, pa.array([w or None for w in words], pa.string())))
    return game.record()


@pytest.mark.parametrize("task", PLAYED)
def test_an_episode_is_the_same_alone_and_in_a_block(task):
    block = play(task, [3, 4, 5])
    for seed, together in zip([3, 4, 5], block):
        alone = play(task, [seed])[0]
        assert pa.table(alone.agents).equals(pa.table(together.agents))
        assert alone.summary == together.summary
        assert alone.tables["messages"].equals(together.tables["messages"])


def test_messages_reach_the_agents_within_reach_next_round_cut_to_size_and_counted():
    records = play("synchronization", [0])
    messages = records[0].tables["messages"].to_pandas()
    assert messages["size"].max() == 120 and records[0].summary["truncated_messages"] > 0
    agents = pa.table(records[0].agents).to_pandas()
    heard = agents.groupby("step")["heard"].sum()
    by_round = messages.groupby("step")["receivers"].sum()
    assert all(heard.get(step + 1, 0) == count for step, count in by_round.items())
    # everyone hears only agents within Chebyshev distance 2 (k = 5), never itself
    game = SwarmTask({**PARAMS, "task": "synchronization", "rounds": 2}, 8)
    game.reset([1])
    game.step(SwarmActions(np.zeros(8, dtype=np.int8), pa.array(["hi"] + [None] * 7, pa.string())))
    receivers, _, senders = game.inbox
    assert (senders == 0).all()
    position = game.worlds.position
    near = np.abs(position - position[0]).max(axis=1) <= 2
    near[0] = False
    assert sorted(receivers.tolist()) == np.flatnonzero(near).tolist()


def heuristic_game(task: str, n: int, seeds: list[int], **params) -> SwarmTask:
    """A game played to its end by the heuristic."""
    from hivebench.suites.swarmbench.baselines import LocalHeuristic

    game = SwarmTask({**PARAMS, "task": task, **params}, n)
    game.reset(seeds)
    policy = LocalHeuristic({}, Streams(seeds, "policy"))
    while not game.done:
        game.step(policy.decide(game.observe()))
    return game


@pytest.mark.parametrize("task", TASKS)
def test_the_heuristic_plays_an_episode_alone_as_in_a_block_whatever_n(task):
    """Its per-agent state (headings, plans, corners) follows each agent's id within its episode."""
    block = heuristic_game(task, 3, [5, 6, 7], rounds=25).record()
    for seed, together in zip([5, 6, 7], block):
        alone = heuristic_game(task, 3, [seed], rounds=25).record()[0]
        assert pa.table(alone.agents).equals(pa.table(together.agents)) and alone.summary == together.summary


@pytest.mark.parametrize("size", [6, 7, 8, 9])
def test_small_pursuit_maps_keep_every_agent_off_the_prey(size):
    n = capacity("pursuit", size)
    for seed in range(10):
        game = SwarmTask({**PARAMS, "task": "pursuit", "grid": size}, n)
        game.reset([seed])
        assert ((game.worlds.grid >= 0) & (game.worlds.grid < n)).sum() == n


def test_an_agent_leaving_the_map_still_says_what_it_said_that_round():
    table = pa.table(heuristic_game("transport", 12, [1], rounds=100).record()[0].agents).to_pandas()
    escaped = table.pivot(index="step", columns="agent", values="escaped")
    sent = table.pivot(index="step", columns="agent", values="sent")
    leaving = escaped & ~escaped.shift(1, fill_value=False)
    assert (
        leaving.values.sum() > 0 and sent.values[leaving.values].all()
    )  # the heuristic speaks every round it knows the box


def test_the_transport_heuristic_plays_the_smallest_map():
    assert len(heuristic_game("transport", 3, [0], grid=6).record()) == 1
