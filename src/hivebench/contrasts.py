"""Paired contrasts between methods over matched units, from a study's episodes table.

A matched unit is one (suite, task, population, seed): every method of a study runs it from the same
initial state (the seed's `init` stream), so differences within a unit cancel what the seed did. A
contrast A − B resamples units jointly for A and B within strata. As the Waggle paper's procedures
(its appendix G): a contrast of fixed methods resamples task–seed units within benchmark strata (suite
x population); where A or B has replicates (training seeds), the replicates are resampled first, then
the seeds within task x population strata (hierarchical bootstrap), a fixed method's difference taken
from every replicate of the other. A spec's `strata` (suite | task) sets either for both. Each stratum
weighs its units (the pooled mean), or, with suite weights, its suite's weight shared among its
task strata by their units. A unit where either method lacks a defined value (in any replicate) is
dropped, and counted: never silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hivebench.replicated import replicate_labels
from hivebench.stats import hierarchical_bootstrap, percentile_interval, stratified_bootstrap

UNIT = ["suite", "task", "population", "seed"]
COLUMNS = [
    "population",
    "metric",
    "a",
    "b",
    "replicates",
    "n_units",
    "dropped_units",
    "resamples",
    "estimate",
    "lo",
    "hi",
    "method",
]


def procedure(replicates: int, strata: str) -> str:
    """How a contrast's interval was made, as its `method` column says."""
    first = "hierarchical bootstrap, replicates resampled, then units" if replicates else "paired bootstrap, units"
    return f"{first} resampled within {strata} x population strata, percentile"


def contrast_pairs(methods: list[str], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(A, B) pairs for A − B: explicit `pairs`, or every method against `reference`."""
    if "pairs" in spec:
        return [(a, b) for a, b in spec["pairs"]]
    return [(m, spec["reference"]) for m in methods if m != spec["reference"]]


def replicate_pairs(a: str, a_labels: list[str], b: str, b_labels: list[str]) -> list[tuple[str, str]]:
    """Which replicate of A is set against which of B ("" for a method without replicates): the same
    label where both have replicates (the same training seed), every replicate against a fixed method."""
    if a_labels != [""] and b_labels != [""]:
        if a_labels != b_labels:
            raise ValueError(
                f"{a} and {b} both have replicates, with different labels ({', '.join(a_labels)} against "
                f"{', '.join(b_labels)}): replicates are paired by label"
            )
        return [(label, label) for label in a_labels]
    return [(la, lb) for la in a_labels for lb in b_labels]


def paired_contrast(
    episodes: pd.DataFrame,
    metric: str,
    a: str,
    b: str,
    weights: dict[str, float] | None,
    resamples: int,
    confidence: float,
    seed: int,
    strata_by: str | None = None,
) -> dict[str, Any]:
    """A − B on `metric`, per matched unit, hierarchical where either method has replicates; stratified
    by `strata_by` (suite or task) and population, by default suite for fixed methods and task where
    there are replicates (the paper's procedures)."""
    rows = episodes[episodes.method.isin([a, b])]
    replicate = replicate_labels(rows)
    # One row per unit either method ran (not the product of the unit keys): NaN where one lacks it.
    wide = (
        rows.assign(replicate=replicate)
        .set_index([*UNIT, "method", "replicate"])[metric]
        .unstack(["method", "replicate"])
    )
    labels = {m: sorted(label for method, label in wide.columns if method == m) for m in (a, b)}
    pairs = replicate_pairs(a, labels[a] or [""], b, labels[b] or [""])
    hierarchical = pairs != [("", "")]
    replicates = len(pairs) if hierarchical else 0
    strata_by = strata_by or ("task" if hierarchical else "suite")
    row = {"metric": metric, "a": a, "b": b, "replicates": replicates, "resamples": resamples}
    row["method"] = procedure(replicates, strata_by)
    if not labels[a] or not labels[b]:
        return {**row, "n_units": 0, "dropped_units": len(wide), "estimate": np.nan, "lo": np.nan, "hi": np.nan}
    differences = np.stack([(wide[(a, la)] - wide[(b, lb)]).to_numpy() for la, lb in pairs])
    matched = ~np.isnan(differences).any(axis=0)
    row |= {"n_units": int(matched.sum()), "dropped_units": int((~matched).sum())}
    if not matched.any():
        return {**row, "estimate": np.nan, "lo": np.nan, "hi": np.nan}
    units = wide.index[matched]
    strata = np.array([stratum(suite, task, n, strata_by) for suite, task, n, _ in units])
    stratum_weights = None if weights is None else stratum_weights_of(units, weights, strata_by)
    if hierarchical:
        estimate, distribution = hierarchical_bootstrap(
            differences[:, matched], strata, stratum_weights, resamples, seed
        )
    else:
        estimate, distribution = stratified_bootstrap(
            differences[0, matched][:, None], strata, stratum_weights, resamples, seed
        )
    lo, hi = percentile_interval(distribution, confidence)
    return {**row, "estimate": float(estimate[0]), "lo": float(lo[0]), "hi": float(hi[0])}


def stratum(suite: str, task: str, population: int, strata_by: str) -> str:
    return f"{suite}/n{population}" if strata_by == "suite" else f"{suite}/{task}/n{population}"


def stratum_weights_of(units: pd.MultiIndex, weights: dict[str, float], strata_by: str) -> dict[str, float]:
    """Each stratum's weight: its suite's; a task stratum's its suite's shared among the suite's tasks
    at that population by their units (so the suite weighs as the config says, its tasks as pooled)."""
    frame = units.to_frame(index=False)
    counts = frame.groupby(["suite", "task", "population"]).size()
    suite_units = counts.groupby(level=["suite", "population"]).transform("sum")
    shares: dict[str, float] = {}
    for (suite, task, n), count in counts.items():
        key = stratum(suite, task, n, strata_by)
        shares[key] = shares.get(key, 0.0) + weights[suite] * count / suite_units[(suite, task, n)]
    return shares


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
                    result = paired_contrast(
                        data, metric, a, b, weights, resamples, confidence, seed, spec.get("strata")
                    )
                    rows.append({"population": scope, **result, "metric": label})
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
