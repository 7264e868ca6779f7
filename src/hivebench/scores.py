"""Per-method scores of a study: each suite metric's mean and bootstrap interval per task and
population (the rows of the scaling plot), normalised by frozen anchors where the metric says so."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hivebench.anchors import Anchors, normalise
from hivebench.registry import SUITE_METRICS, SUITE_OBJECTS
from hivebench.stats import mean_ci

SCORE_KEYS = ["suite", "task", "method", "population"]


def score_table(
    episodes: pd.DataFrame,
    resamples: int,
    confidence: float,
    seed: int,
    anchors: Anchors,
    interval: str = "percentile",
) -> pd.DataFrame:
    """One row per (suite, task, method, population, metric): mean, lo, hi over seeds, the number of
    defined values and of episodes; `normalised*` columns where the metric is anchor-normalised."""
    rows = []
    for (suite, task, method, population), group in episodes.groupby(SCORE_KEYS, sort=False):
        declared = SUITE_OBJECTS[suite]
        anchored = str(group[declared.anchor_column].iloc[0])  # the task as the anchors file names it
        needs_anchor = declared.anchored is None or anchored in declared.anchored
        for metric in SUITE_METRICS[suite]:
            ci = mean_ci(group[metric.name].to_numpy(), resamples, confidence, seed, interval)
            row = {
                "suite": suite,
                "task": task,
                "method": method,
                "population": int(population),
                "metric": metric.name,
                "mean": ci.estimate,
                "lo": ci.lo,
                "hi": ci.hi,
                "n": ci.n,
                "episodes": len(group),
                "interval": interval,
            }
            if metric.normalised_by_anchor and needs_anchor:  # at every population, by the anchor frozen at one
                for key in ("mean", "lo", "hi"):
                    row[f"normalised_{key}"] = normalise(row[key], suite, anchored, anchors)
            rows.append(row)
    table = pd.DataFrame(rows)
    for key in ("normalised_mean", "normalised_lo", "normalised_hi"):
        if key not in table:
            table[key] = np.nan
    return table
