"""A block's random streams draw each episode's numbers as the episode's own generator does, however
the block's draws are sized, split or drawn ahead; block-wide helpers agree with numpy's row-wise
reductions to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from hivebench.seeding import Streams, first_argmax, stream
from hivebench.suites.loopbench import scoring

SEEDS = [3, 17, 404]


def own_draws(
    seeds: list[int], kind: str, sizes_per_episode: list[list[int]], low: int = 0, high: int = 5
) -> list[np.ndarray]:
    """Each episode's numbers drawn straight from its own stream, one call per draw."""
    out = []
    for seed, sizes in zip(seeds, sizes_per_episode):
        g = stream(seed, "policy")
        out.append(np.concatenate([g.random(k) if kind == "random" else g.integers(low, high, k) for k in sizes]))
    return out


@pytest.mark.parametrize("seeds", [SEEDS, SEEDS[:1]], ids=["block", "one episode"])
@pytest.mark.parametrize("kind", ["random", "integers"])
@pytest.mark.parametrize("reserve", [0, 7, 1000])
def test_block_draws_are_each_episodes_own_draws(seeds, kind, reserve):
    rng = np.random.default_rng(0)
    streams = Streams(seeds, "policy")
    if reserve:
        streams.reserve(reserve, () if kind == "random" else (0, 5))
    block, sizes = [[] for _ in seeds], [[] for _ in seeds]
    for _ in range(40):
        if rng.random() < 0.5:  # equal rows, two columns each
            rows = int(rng.integers(1, 6))
            split, shape = None, (rows * len(seeds), 2)
            per_episode = [rows * 2] * len(seeds)
        else:  # uneven rows, one number each
            split = rng.integers(0, 9, len(seeds)).tolist()
            shape, per_episode = (sum(split),), split
        values = streams.random(shape, split) if kind == "random" else streams.integers(0, 5, shape, split)
        flat, start = values.reshape(-1), 0
        for s, count in enumerate(per_episode):
            block[s].append(flat[start : start + count])
            sizes[s].append(count)
            start += count
    for got, want in zip(block, own_draws(seeds, kind, sizes)):
        assert np.array_equal(np.concatenate(got), want)


def test_a_stream_that_switches_kind_with_numbers_drawn_ahead_says_so():
    streams = Streams(SEEDS, "policy")
    streams.reserve(4)
    streams.random((3,))
    with pytest.raises(RuntimeError, match="'policy': drawing integers in \\[0, 2\\) after doubles"):
        streams.integers(0, 2, (3,))
    streams.random((9,))  # every number drawn ahead used: another kind may follow
    assert streams.integers(0, 2, (3,)).shape == (3,)


def test_a_stream_drawing_one_kind_then_another_refills_for_the_new_kind_alone():
    streams = Streams(SEEDS, "policy")
    for _ in range(3):  # each draw uses every number drawn ahead: switching kind after it is allowed
        ints = streams.integers(0, 2, (21,))
        doubles = streams.random((21,))
    assert ints.shape == doubles.shape == (21,)


def test_uneven_split_must_cover_the_draw():
    with pytest.raises(ValueError, match="does not cover 5 rows of 3 episodes"):
        Streams(SEEDS, "policy").random((5,), split=[1, 1, 1])


def test_first_argmax_is_numpys_argmax_ties_included():
    rng = np.random.default_rng(1)
    for columns in (1, 2, 3, 7):
        values = rng.integers(0, 3, (500, columns))  # many ties
        assert np.array_equal(first_argmax(values), values.argmax(axis=1))
        mask = values > 0
        assert np.array_equal(first_argmax(mask), mask.argmax(axis=1))


@pytest.mark.parametrize("window", scoring.WINDOWS)
def test_a_blocks_metrics_are_its_runs_metrics_to_the_bit(window):
    rng = np.random.default_rng(2)
    steps = 15
    # (states, runs) transposed: the layout the block's conflicts come in
    runs = rng.integers(1, 12, (steps + 1, 300)).T
    block = scoring.metric_window(runs, steps, window)
    proximity, stability = scoring.proximity(block, runs[:, 0], 1), scoring.stability(block)
    outcomes = scoring.outcomes(runs, 1)
    for i, run in enumerate(runs.copy()):
        alone = scoring.metric_window(run, steps, window)
        assert proximity[i].tobytes() == scoring.proximity(alone, run[0], 1).tobytes()
        assert stability[i] == scoring.stability(alone)
        for key, values in scoring.outcomes(run, 1).items():
            assert np.array_equal(outcomes[key][i], values, equal_nan=True)
