"""Proximity and Stability on hand-computed trajectories, for each window convention."""

import math

import numpy as np
import pytest

from hivebench.suites.loopbench import scoring

# T = 4 steps: states t = 0..4 with conflicts 3, 1, 2, 1, 1; conf_best = 1, conf_initial = 3.
CONFLICTS = np.array([3, 1, 2, 1, 1])


def test_from_initial_window_uses_states_0_to_T_minus_1():
    window = scoring.metric_window(CONFLICTS, steps=4, window="from_initial")
    assert window.tolist() == [3, 1, 2, 1]
    # ratios (3-1)/2, 0, (2-1)/2, 0 -> mean 0.375
    assert scoring.proximity(window, conf_initial=3, conf_best=1) == pytest.approx(62.5)
    # one increase (1 -> 2) among T - 1 = 3 transitions
    assert scoring.stability(window) == pytest.approx(100 - 100 / 3)


def test_full_window_uses_every_state_0_to_T():
    window = scoring.metric_window(CONFLICTS, steps=4, window="full")
    assert window.tolist() == [3, 1, 2, 1, 1]
    # ratios 1, 0, 1/2, 0, 0 over T + 1 = 5 states -> mean 0.3
    assert scoring.proximity(window, conf_initial=3, conf_best=1) == pytest.approx(70.0)
    # one increase among T = 4 transitions
    assert scoring.stability(window) == pytest.approx(75.0)


def test_full_window_gives_the_granularity_of_the_papers_table_1():
    """Five C3 runs of T = 15 from the symmetric start (conf_initial 3, conf_best 1): under the full
    window every mean Stability is a multiple of 100/75 and every mean Proximity a multiple of 100/80,
    as every C3 value of the paper's Table 1 is; the other windows divide by 14 transitions or 15
    states instead."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        runs = [np.concatenate([[3], rng.choice([1, 3], size=15)]) for _ in range(5)]
        windows = [scoring.metric_window(r, steps=15, window="full") for r in runs]
        stability = np.mean([scoring.stability(w) for w in windows])
        proximity = np.mean([scoring.proximity(w, 3, 1) for w in windows])
        assert (100 - stability) / (100 / 75) == pytest.approx(round((100 - stability) / (100 / 75)))
        assert (100 - proximity) / (100 / 80) == pytest.approx(round((100 - proximity) / (100 / 80)))


def test_after_steps_window_uses_states_1_to_T():
    window = scoring.metric_window(CONFLICTS, steps=4, window="after_steps")
    assert window.tolist() == [1, 2, 1, 1]
    # ratios 0, 1/2, 0, 0 -> mean 0.125
    assert scoring.proximity(window, conf_initial=3, conf_best=1) == pytest.approx(87.5)
    assert scoring.stability(window) == pytest.approx(100 - 100 / 3)


def test_staying_at_the_start_scores_zero_proximity_and_full_stability():
    window = scoring.metric_window(np.full(16, 5), steps=15, window="from_initial")
    assert scoring.proximity(window, conf_initial=5, conf_best=1) == 0.0
    assert scoring.stability(window) == 100.0


def test_reaching_the_optimum_at_once_scores_full_proximity_after_steps():
    window = scoring.metric_window(np.array([5, 1, 1, 1]), steps=3, window="after_steps")
    assert scoring.proximity(window, conf_initial=5, conf_best=1) == 100.0


def test_a_start_at_the_optimum_gives_nan_not_a_division_by_zero():
    assert math.isnan(scoring.proximity(np.array([1, 1, 1]), conf_initial=1, conf_best=1))


def test_window_checks_the_number_of_states():
    with pytest.raises(ValueError, match="expected 5 states"):
        scoring.metric_window(np.arange(4), steps=4, window="from_initial")
    with pytest.raises(ValueError, match="unknown metric window"):
        scoring.metric_window(CONFLICTS, steps=4, window="t0")


def test_the_papers_outcome_measures():
    assert scoring.outcomes(CONFLICTS, conf_best=1) == {
        "reached_optimum": 1.0,
        "first_optimal_step": 1.0,
        "final_optimal": 1.0,
    }
    never = scoring.outcomes(np.array([3, 3, 3]), conf_best=1)
    assert never["reached_optimum"] == 0.0 and never["final_optimal"] == 0.0 and math.isnan(never["first_optimal_step"])
    lost = scoring.outcomes(np.array([3, 3, 1, 3]), conf_best=1)  # broke the loop at step 2, fell back
    assert lost == {"reached_optimum": 1.0, "first_optimal_step": 2.0, "final_optimal": 0.0}
