"""Each baseline's rule, checked on the task's own views."""

import numpy as np
import pytest

from hivebench.seeding import Streams
from hivebench.suites.loopbench.baselines import (
    ConservativeRandomColorer,
    GreedyColorer,
    RandomColorer,
    SoftColorerCFP,
    SoftColorerFP,
)
from hivebench.suites.loopbench.graphs import BRUTE_FORCE_LIMIT, cycle_edges
from hivebench.suites.loopbench.task import ColoringTask, exact_conf_best

PARAMS = {"graph": "cycle", "colors": 2, "init": "same", "steps": 15, "metric_window": "from_initial"}


def random_graph(rng: np.random.Generator, n: int, m: int) -> list[list[int]]:
    edges = {tuple(sorted(rng.choice(n, size=2, replace=False).tolist())) for _ in range(m)}
    edges |= {(i, i + 1) for i in range(n - 1)}  # every node on an edge
    return [list(e) for e in sorted(edges)]


def task_at(colors: np.ndarray, graph, num_colors: int) -> ColoringTask:
    params = {**PARAMS, "graph": graph, "colors": num_colors}
    if num_colors ** len(colors) > BRUTE_FORCE_LIMIT:
        params["conf_best"] = 0  # too large to search; these tests never score the run
    task = ColoringTask(params, len(colors))
    task.reset([0])
    task.trajectory[0] = colors
    task._count()  # the neighbour counts of the state put in place of the reset's
    return task


@pytest.mark.parametrize("n", [3, 5, 7, 9, 11, 21, 51])
def test_greedy_oscillates_forever_from_the_symmetric_start_on_every_odd_cycle(n):
    task = ColoringTask({**PARAMS, "steps": 60}, n)
    task.reset([0])
    method = GreedyColorer({}, Streams([0], "policy"))
    while not task.done:
        task.step(method.decide(task.observe()))
    # all nodes flip together: the state alternates all-0 / all-1 and every edge always conflicts
    assert (task.trajectory == (np.arange(61) % 2)[:, None]).all()
    assert task.record()[0].summary["conflicts"] == [n] * 61


@pytest.mark.slow  # ~11 s: exact optima of 100 random graphs
def test_cfp_never_increases_a_nodes_own_conflicts_against_the_state_it_saw():
    rng = np.random.default_rng(1)
    for trial in range(100):
        n, c = int(rng.integers(3, 16)), int(rng.integers(2, 5))
        graph = random_graph(rng, n, 2 * n)
        task = task_at(rng.integers(c, size=n), graph, c)
        views = task.observe()
        method = SoftColorerCFP({"p": float(rng.random())}, Streams([trial], "policy"))
        new = method.decide(views)
        before = views.neighbor_counts[np.arange(n), views.colors]
        after = views.neighbor_counts[np.arange(n), new]
        assert (after <= before).all()
        # and it moves only when that strictly helps
        moved = new != views.colors
        assert (after[moved] < before[moved]).all()


def test_fp_active_nodes_take_a_least_conflicted_colour():
    rng = np.random.default_rng(2)
    n, c = 40, 3
    task = task_at(rng.integers(c, size=n), random_graph(rng, n, 80), c)
    views = task.observe()
    everyone = SoftColorerFP({"p": 1.0}, Streams([3], "policy")).decide(views)
    counts = views.neighbor_counts
    assert (counts[np.arange(n), everyone] == counts.min(axis=1)).all()
    nobody = SoftColorerFP({"p": 0.0}, Streams([3], "policy")).decide(views)
    assert (nobody == views.colors).all()


def test_fp_breaks_ties_at_random_and_cfp_keeps_a_tied_colour():
    # On C4 coloured 0,0,1,1 every node has one conflict either way: a tie.
    task = task_at(np.array([0, 0, 1, 1]), [list(e) for e in cycle_edges(4)], 2)
    views = task.observe()
    fp = SoftColorerFP({"p": 1.0}, Streams([4], "policy"))
    draws = np.array([fp.decide(views) for _ in range(200)])
    assert set(np.unique(draws)) == {0, 1}  # both colours are taken
    cfp = SoftColorerCFP({"p": 1.0}, Streams([4], "policy"))
    assert (cfp.decide(views) == views.colors).all()


def test_conservative_random_moves_only_nodes_in_conflict():
    rng = np.random.default_rng(5)
    n = 30
    task = task_at(rng.integers(2, size=n), random_graph(rng, n, 40), 2)
    views = task.observe()
    calm = views.own_conflicts == 0
    assert calm.any() and (~calm).any()
    for seed in range(20):
        new = ConservativeRandomColorer({}, Streams([seed], "policy")).decide(views)
        assert (new[calm] == views.colors[calm]).all()


def test_random_draws_every_colour_uniformly():
    task = task_at(np.zeros(10, dtype=int), [list(e) for e in cycle_edges(10)], 3)
    method = RandomColorer({}, Streams([6], "policy"))
    draws = np.concatenate([method.decide(task.observe()) for _ in range(3000)])
    assert np.allclose(np.bincount(draws, minlength=3) / len(draws), 1 / 3, atol=0.01)


@pytest.mark.parametrize(
    "edges,colors,best",
    [
        (cycle_edges(3), 2, 1),
        (cycle_edges(4), 2, 0),
        (cycle_edges(7), 2, 1),
        (cycle_edges(7), 3, 0),
        ([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], 2, 2),  # K4 split 2 + 2
        ([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], 3, 1),
    ],
)
def test_exact_conf_best(edges, colors, best):
    edges = np.asarray(edges)
    assert exact_conf_best(edges, int(edges.max()) + 1, colors) == best


@pytest.mark.parametrize("init", ["same", "random"])
@pytest.mark.parametrize("n", [3, 4, 5, 8, 11, 21])
def test_cfp_stability_is_100_on_every_two_colour_cycle_whatever_the_seed(n, init):
    """LoopBench's README's argument: on a 2-colour cycle a synchronous CFP step never adds a conflict, so
    Stability is 100 by construction. Checked over 200 seeds and activation probabilities 0.1 to 1."""
    seeds = list(range(200))
    for p in (0.1, 0.3, 0.5, 0.9, 1.0):
        task = ColoringTask({**PARAMS, "init": init, "steps": 30, "metric_window": "full"}, n)
        task.reset(seeds)
        method = SoftColorerCFP({"p": p}, Streams(seeds, "policy"))
        while not task.done:
            task.step(method.decide(task.observe()))
        for record in task.record():
            conflicts = record.summary["conflicts"]
            assert all(b <= a for a, b in zip(conflicts, conflicts[1:])), (n, init, p, conflicts)
            assert record.summary["stability"] == 100
