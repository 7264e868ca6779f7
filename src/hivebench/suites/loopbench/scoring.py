"""LoopBench's metrics: Proximity and Stability of a conflict trajectory.

Every function takes conflict counts with the states on the last axis, so one call scores one run
(states,) or a block of runs (runs, states) alike.
"""

from __future__ import annotations

import numpy as np

WINDOWS = ("full", "from_initial", "after_steps")


def metric_window(conflicts: np.ndarray, steps: int, window: str) -> np.ndarray:
    """The conflict counts the metrics average over, from the T + 1 states 0..T of a run.

    full:         every state t = 0..T (T + 1 states, T transitions): the window the paper's Table 1
                  numbers imply (its caption: "computed over the full trajectory");
    from_initial: states t = 0..T-1 (the initial state counts, the last state does not);
    after_steps:  states t = 1..T   (the paper's formula as printed).
    """
    if conflicts.shape[-1] != steps + 1:
        raise ValueError(f"expected {steps + 1} states (0..T), got {conflicts.shape[-1]}")
    if window == "full":
        return conflicts
    if window == "from_initial":
        return conflicts[..., :steps]
    if window == "after_steps":
        return conflicts[..., 1:]
    raise ValueError(f"unknown metric window {window!r}; choose one of {WINDOWS}")


def proximity(window: np.ndarray, conf_initial: np.ndarray | int, conf_best: int) -> np.ndarray:
    """100 - mean_t (conf_t - conf_best) / (conf_initial - conf_best) * 100.

    NaN when the run starts at the optimum (the ratio is undefined there), never a division by zero.
    """
    span = np.asarray(conf_initial) - conf_best
    with np.errstate(divide="ignore", invalid="ignore"):
        # Rows laid out contiguously: numpy then sums each row as it sums one run (pairwise), so a
        # block's values are those of its runs scored alone to the last bit.
        ratios = np.ascontiguousarray((window - conf_best) / span[..., None])
        value = 100.0 - np.mean(ratios, axis=-1) * 100.0
    return np.where(span > 0, value, np.nan)


def stability(window: np.ndarray) -> np.ndarray:
    """100 - (number of transitions in the window that increased the conflicts) / (transitions) * 100:
    the paper's T - 1 for a window of T states, T for the full window of T + 1 states."""
    increases = np.count_nonzero(np.diff(window, axis=-1) > 0, axis=-1)
    return 100.0 - increases / (window.shape[-1] - 1) * 100.0


def outcomes(conflicts: np.ndarray, conf_best: int) -> dict[str, np.ndarray]:
    """The paper's outcome measures over the states t = 0..T ("broke the loop in 2 out of 3 trials",
    "optimal by step 6"): whether any state is optimal (1.0 or 0.0), the first optimal state t (NaN
    when none is), and whether the last state is optimal."""
    optimal = conflicts == conf_best
    reached = optimal.any(axis=-1)
    return {
        "reached_optimum": reached.astype(float),
        "first_optimal_step": np.where(reached, optimal.argmax(axis=-1), np.nan),
        "final_optimal": optimal[..., -1].astype(float),
    }
