"""LoopBench's metrics: Proximity and Stability of a conflict trajectory."""

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
    if len(conflicts) != steps + 1:
        raise ValueError(f"expected {steps + 1} states (0..T), got {len(conflicts)}")
    if window == "full":
        return conflicts
    if window == "from_initial":
        return conflicts[:steps]
    if window == "after_steps":
        return conflicts[1:]
    raise ValueError(f"unknown metric window {window!r}; choose one of {WINDOWS}")


def proximity(window: np.ndarray, conf_initial: int, conf_best: int) -> float:
    """100 - mean_t (conf_t - conf_best) / (conf_initial - conf_best) * 100.

    NaN when the run starts at the optimum (the ratio is undefined there), never a division by zero.
    """
    span = conf_initial - conf_best
    if span <= 0:
        return float("nan")
    return float(100.0 - np.mean((window - conf_best) / span) * 100.0)


def stability(window: np.ndarray) -> float:
    """100 - (number of transitions in the window that increased the conflicts) / (transitions) * 100:
    the paper's T - 1 for a window of T states, T for the full window of T + 1 states."""
    increases = int(np.count_nonzero(np.diff(window) > 0))
    return float(100.0 - increases / (len(window) - 1) * 100.0)


def outcomes(conflicts: np.ndarray, conf_best: int) -> dict[str, float]:
    """The paper's outcome measures over the states t = 0..T ("broke the loop in 2 out of 3 trials",
    "optimal by step 6"): whether any state is optimal (1.0 or 0.0), the first optimal state t (NaN
    when none is), and whether the last state is optimal."""
    optimal = np.flatnonzero(conflicts == conf_best)
    return {
        "reached_optimum": float(len(optimal) > 0),
        "first_optimal_step": float(optimal[0]) if len(optimal) else float("nan"),
        "final_optimal": float(conflicts[-1] == conf_best),
    }
