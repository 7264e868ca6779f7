"""Per-method scores of a study: each suite metric's mean and bootstrap interval per task and
population (the rows of the scaling plot), normalised by frozen anchors where the metric says so."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hivebench.anchors import Anchors, mismatch, normalise
from hivebench.registry import SUITE_METRICS, SUITE_OBJECTS
from hivebench.replicated import POOLED, episode_ci, has_replicates, replicate_labels
from hivebench.report.layout import rules_of
from hivebench.stats import Interval, mean_ci
from hivebench.suite import Metric

SCORE_KEYS = ["suite", "task", "method", "population"]


def score_table(
    episodes: pd.DataFrame,
    resamples: int,
    confidence: float,
    seed: int,
    anchors: Anchors,
    interval: str = "percentile",
) -> pd.DataFrame:
    """One row per (suite, task, method, population, metric): mean, the sample s.d. of its episodes'
    values (the papers' "per-episode mean ± sample s.d."), lo, hi over seeds, the number of defined
    values and of episodes; `normalised*` columns where the metric is anchor-normalised.

    Where methods have replicates, a `replicate` column: one row per replicate, and for a method with
    several a row `all` over them, its interval from the hierarchical bootstrap (replicates resampled,
    then seeds; a seed counts where every replicate has its value)."""
    replicated = has_replicates(episodes)
    if replicated:
        episodes = episodes.assign(replicate=replicate_labels(episodes))
    rows = []
    for keys, group in episodes.groupby(SCORE_KEYS + ["replicate"] * replicated, sort=False):
        for metric in SUITE_METRICS[group["suite"].iloc[0]]:
            ci = mean_ci(group[metric.name].to_numpy(), resamples, confidence, seed, interval)
            rows.append(_row(keys, metric, ci, len(group), interval, group, anchors))
    if replicated:
        for keys, group in episodes[episodes["replicate"] != ""].groupby(SCORE_KEYS, sort=False):
            if group["replicate"].nunique() < 2:
                continue
            for metric in SUITE_METRICS[group["suite"].iloc[0]]:
                ci = episode_ci(group, metric.name, resamples, confidence, seed)
                rows.append(_row((*keys, POOLED), metric, ci, len(group), "hierarchical percentile", group, anchors))
    table = pd.DataFrame(rows)
    for key in ("normalised_mean", "normalised_sd", "normalised_lo", "normalised_hi"):
        if key not in table:
            table[key] = np.nan
    return table


def _row(
    keys: tuple, metric: Metric, ci: Interval, episodes: int, interval: str, group: pd.DataFrame, anchors: Anchors
) -> dict[str, object]:
    suite, task, method, population, *replicate = keys
    row = {
        "suite": suite,
        "task": task,
        "method": method,
        "population": int(population),
        **dict(zip(["replicate"], replicate)),
        "metric": metric.name,
        "mean": ci.estimate,
        "sd": group[metric.name].std(ddof=1),  # NaN below two defined values
        "lo": ci.lo,
        "hi": ci.hi,
        "n": ci.n,
        "episodes": episodes,
        "interval": interval,
    }
    declared = SUITE_OBJECTS[suite]
    anchored = str(group[declared.anchor_column].iloc[0])  # the task as the anchors file names it
    if metric.normalised_by_anchor and (declared.anchored is None or anchored in declared.anchored):
        rules = str(rules_of(group).iloc[0])  # a config task is one set of rules
        for key in ("mean", "sd", "lo", "hi"):  # at every population, by the anchor frozen at one
            row[f"normalised_{key}"] = normalise(row[key], suite, anchored, anchors, rules)
        row["normalisation"] = mismatch(anchors, suite, rules)
    return row
