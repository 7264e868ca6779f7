"""Metrics: LoopBench's Proximity and Stability, the metrics each suite reports, and normalisation of
raw scores by frozen anchors (config/anchors.yaml)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

WINDOWS = ("from_initial", "after_steps")


def metric_window(conflicts: np.ndarray, steps: int, window: str) -> np.ndarray:
    """The T conflict counts the metrics average over, from the T + 1 states 0..T of a run.

    from_initial: states t = 0..T-1 (the initial state counts, the last state does not);
    after_steps:  states t = 1..T   (the paper's formula as printed).
    """
    if len(conflicts) != steps + 1:
        raise ValueError(f"expected {steps + 1} states (0..T), got {len(conflicts)}")
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
    """100 - (number of steps that increased the conflicts) / (T - 1) * 100."""
    increases = int(np.count_nonzero(np.diff(window) > 0))
    return float(100.0 - increases / (len(window) - 1) * 100.0)


class AnchorError(KeyError):
    """A normalised aggregate needs an anchor that config/anchors.yaml does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_anchors(path: str | Path) -> dict[tuple[str, str, int], tuple[float, str]]:
    """(suite, task, population) -> (anchor value, provenance) from an anchors file."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    anchors = {}
    for suite, tasks in data.items():
        for task, populations in tasks.items():
            for population, entry in populations.items():
                if not isinstance(entry, dict) or not {"value", "provenance"} <= set(entry):
                    raise ValueError(f"{path}: {suite}.{task}.{population}: needs value and provenance")
                anchors[(suite, task, int(population))] = (float(entry["value"]), str(entry["provenance"]))
    return anchors


def normalise(raw: float, suite: str, task: str, population: int, anchors: dict[tuple[str, str, int], tuple[float, str]]) -> float:
    """A raw score divided by its frozen anchor; a missing anchor is an error, never a silent 1.0."""
    try:
        value, _ = anchors[(suite, task, population)]
    except KeyError:
        raise AnchorError(f"no anchor for {suite}/{task} at N={population} in config/anchors.yaml") from None
    return raw / value
