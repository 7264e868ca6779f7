"""Paired contrasts between methods over matched units, from a study's episodes table.

A matched unit is one (suite, task, population, seed): every method of a study runs it from the same
initial state (the seed's `init` stream), so differences within a unit cancel what the seed did. A
contrast A − B resamples units jointly for A and B within strata (suite x population), weighted by
stratum weights from the config. A unit where either method lacks a defined value is dropped, and
counted: never silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hivebench.stats import percentile_interval, stratified_bootstrap

UNIT = ["suite", "task", "population", "seed"]
COLUMNS = ["population", "metric", "a", "b", "n_units", "dropped_units", "resamples", "estimate", "lo", "hi", "method"]


def contrast_pairs(methods: list[str], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(A, B) pairs for A − B: explicit `pairs`, or every method against `reference`."""
    if "pairs" in spec:
        return [(a, b) for a, b in spec["pairs"]]
    return [(m, spec["reference"]) for m in methods if m != spec["reference"]]


def paired_contrast(
    episodes: pd.DataFrame,
    metric: str,
    a: str,
    b: str,
    weights: dict[str, float] | None,
    resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """A − B on `metric`, per matched unit, stratified by (suite, population)."""
    # One row per unit either method ran (not the product of the unit keys): NaN where one lacks it.
    wide = episodes[episodes.method.isin([a, b])].set_index([*UNIT, "method"])[metric].unstack("method")
    wide = wide.reindex(columns=[a, b])
    matched = wide.dropna()
    row = {
        "metric": metric,
        "a": a,
        "b": b,
        "n_units": len(matched),
        "dropped_units": len(wide) - len(matched),
        "resamples": resamples,
    }
    if matched.empty:
        return {**row, "estimate": np.nan, "lo": np.nan, "hi": np.nan}
    differences = (matched[a] - matched[b]).to_numpy()[:, None]
    pairs = list(zip(matched.index.get_level_values("suite"), matched.index.get_level_values("population")))
    strata = np.array([f"{suite}/n{n}" for suite, n in pairs])
    stratum_weights = None if weights is None else {f"{suite}/n{n}": weights[suite] for suite, n in set(pairs)}
    estimate, distribution = stratified_bootstrap(differences, strata, stratum_weights, resamples, seed)
    lo, hi = percentile_interval(distribution, confidence)
    return {**row, "estimate": float(estimate[0]), "lo": float(lo[0]), "hi": float(hi[0])}


def contrast_table(
    episodes: pd.DataFrame,
    spec: dict[str, Any],
    metrics: list[str],
    resamples: int,
    confidence: float,
    seed: int,
    reported_by: dict[str, list[str]] | None = None,
) -> pd.DataFrame:
    """Every pair of the spec on every metric: per population, and over all populations together.
    `reported_by` (metric -> the suites that report it) keeps each metric to its suites' units; a
    metric several suites report under one name (SwarmBench's and AgentsNet's `score`) is contrasted
    per suite, as `score (swarmbench)`: the suites' numbers are on different scales."""
    methods = list(pd.unique(episodes["method"]))
    unknown = [m for pair in contrast_pairs(methods, spec) for m in pair if m not in methods]
    if spec.get("reference") not in (None, *methods):
        unknown.append(spec["reference"])
    if unknown:
        raise ValueError(
            f"contrasts name methods not in the episodes: {', '.join(dict.fromkeys(unknown))} "
            f"(there: {', '.join(methods)})"
        )
    weights = spec.get("weights")
    rows = []
    for a, b in contrast_pairs(methods, spec):
        for metric in metrics:
            for label, reporting in _reporting(episodes, metric, reported_by):
                scopes = [("all", reporting)] + [
                    (str(n), group) for n, group in reporting.groupby("population", sort=True)
                ]
                for scope, data in scopes:
                    result = paired_contrast(data, metric, a, b, weights, resamples, confidence, seed)
                    rows.append(
                        {
                            "population": scope,
                            **result,
                            "metric": label,
                            "method": "paired bootstrap, units resampled within suite x population strata, percentile",
                        }
                    )
    return pd.DataFrame(rows, columns=COLUMNS)  # no rows for a study of one method: nothing to contrast


def _reporting(
    episodes: pd.DataFrame, metric: str, reported_by: dict[str, list[str]] | None
) -> list[tuple[str, pd.DataFrame]]:
    """(label, units) of a metric: the units of the suites that report it (another suite's units are
    not "dropped"), one suite at a time where several of the study's suites report it."""
    if reported_by is None:
        return [(metric, episodes)]
    suites = [s for s in reported_by[metric] if (episodes["suite"] == s).any()]
    if len(suites) <= 1:
        return [(metric, episodes[episodes["suite"].isin(reported_by[metric])])]
    return [(f"{metric} ({suite})", episodes[episodes["suite"] == suite]) for suite in suites]
