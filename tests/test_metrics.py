"""Proximity and Stability on hand-computed trajectories, for both t = 0 conventions."""

import math

import numpy as np
import pytest

from hivebench import scoring

# T = 4 steps: states t = 0..4 with conflicts 3, 1, 2, 1, 1; conf_best = 1, conf_initial = 3.
CONFLICTS = np.array([3, 1, 2, 1, 1])


def test_from_initial_window_uses_states_0_to_T_minus_1():
    window = scoring.metric_window(CONFLICTS, steps=4, window="from_initial")
    assert window.tolist() == [3, 1, 2, 1]
    # ratios (3-1)/2, 0, (2-1)/2, 0 -> mean 0.375
    assert scoring.proximity(window, conf_initial=3, conf_best=1) == pytest.approx(62.5)
    # one increase (1 -> 2) among T - 1 = 3 transitions
    assert scoring.stability(window) == pytest.approx(100 - 100 / 3)


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
