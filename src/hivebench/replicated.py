"""Bootstrap intervals over a group of one method's episodes, as the report's tables draw them: where the
method has replicates (training seeds; the episodes' `replicate` column), replicates are resampled
first and then matched units within each replicate (hivebench.stats.hierarchical_bootstrap); where it
has none, its episodes are the independent draws they are (stratified_bootstrap, mean_ci)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hivebench.stats import Interval, hierarchical_bootstrap, mean_ci, percentile_interval, stratified_bootstrap

POOLED = "all"  # the replicate column of a method's score over all its replicates


def has_replicates(group: pd.DataFrame) -> bool:
    return "replicate" in group and bool(group["replicate"].notna().any())


def replicate_labels(episodes: pd.DataFrame) -> pd.Series:
    """Each episode's replicate label, "" for a method without replicates (a table with none has no
    replicate column)."""
    if "replicate" not in episodes:
        return pd.Series("", index=episodes.index)
    return episodes["replicate"].fillna("")


def replicate_design(group: pd.DataFrame, columns: list[str], units: list[str]) -> tuple[np.ndarray, pd.Index]:
    """(values (replicates, units, columns), the units kept): each unit (a row of `units`' values,
    e.g. task and seed) with every column's value in every replicate; a unit lacking one is left out."""
    if group.duplicated([*units, "replicate"]).any():
        raise ValueError(f"several episodes of one replicate share a unit ({', '.join(units)}): nothing pairs them")
    labels = sorted(group["replicate"].dropna().unique())
    wide = group.pivot_table(index=units, columns="replicate", values=columns, aggfunc="first", dropna=False)
    wide = wide.reindex(columns=pd.MultiIndex.from_product([columns, labels])).dropna()
    values = wide.to_numpy(dtype=float).reshape(len(wide), len(columns), len(labels)).transpose(2, 0, 1)
    return values, wide.index


def episode_bootstrap(
    group: pd.DataFrame,
    columns: list[str],
    stratum: str,
    weights: dict[object, float] | None,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean over strata (the `stratum` column's values, e.g. tasks) of each column's mean
    and its bootstrap distribution, as stratified_bootstrap returns them; with replicates, the units
    are (stratum, population, seed) matched across replicates and hierarchical_bootstrap draws them."""
    if not has_replicates(group):
        values = group[columns].to_numpy(dtype=float)
        return stratified_bootstrap(values, group[stratum].to_numpy(), weights, resamples, seed)
    values, kept = replicate_design(group, columns, [stratum, "population", "seed"])
    if values.shape[1] == 0:  # no unit played by every replicate
        return np.full(len(columns), np.nan), np.full((resamples, len(columns)), np.nan)
    return hierarchical_bootstrap(values, kept.get_level_values(stratum).to_numpy(), weights, resamples, seed)


def episode_ci(
    group: pd.DataFrame,
    column: str,
    resamples: int,
    confidence: float,
    seed: int,
    units: tuple[str, ...] = ("population", "seed"),
    interval: str = "percentile",
) -> Interval:
    """A column's mean over a group's episodes with its bootstrap interval (NaNs left out). With
    replicates: the mean over replicates of their unit means (a unit, `units`' values, counts where
    every replicate has its value) and the hierarchical interval; n counts the values used."""
    if not has_replicates(group):
        return mean_ci(group[column].to_numpy(dtype=float), resamples, confidence, seed, interval)
    values, _ = replicate_design(group, [column], list(units))
    if values.shape[1] == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    estimate, distribution = hierarchical_bootstrap(values, np.zeros(values.shape[1]), None, resamples, seed)
    lo, hi = percentile_interval(distribution, confidence)
    return Interval(float(estimate[0]), float(lo[0]), float(hi[0]), values.size)
