"""Paired contrasts between methods over matched units, from a study's episodes table.

A matched unit is one (suite, task, population, seed): every method of a study runs it from the same
initial state (the seed's `init` stream), so differences within a unit cancel what the seed did. A
contrast A − B resamples units jointly for A and B within strata. As the Waggle paper's procedures
(its appendix G and Table 18): task–seed units are resampled within each task of a benchmark at each
population, every task keeping a fixed equal share of its benchmark (Table 18's "primary task
weights": Silo-Bench's 30 tasks x 5 seeds, SwarmBench's 3 x 5, each resample preserving them); where
A or B has replicates (training seeds), the replicates are resampled first, then the units as above
(hierarchical bootstrap), a fixed method's difference taken from every replicate of the other. A
spec's `strata: suite` resamples units within benchmark x population strata instead, pooled (each
unit weighing the same). Suite weights share a suite's weight among its tasks. A unit where either
method lacks a defined value (in any replicate) is dropped, and counted: never silently.

A metric a suite divides by per-task anchors (SwarmBench's score: its tasks' scales differ) is
contrasted per task on the raw scale, and, over the anchored tasks under the anchors' rules, as the
normalised aggregate (score / anchor, each task an equal share: the paper's Table 18); never as raw
scores pooled over tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from hivebench.anchors import Anchors, comparable
from hivebench.perturb import ARM_JOIN, arm
from hivebench.replicated import replicate_labels
from hivebench.report.layout import rules_of
from hivebench.stats import hierarchical_bootstrap, percentile_interval, stratified_bootstrap

if TYPE_CHECKING:
    from hivebench.suite import Suite

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
    weighed = ", each task an equal share of its suite" if strata == "task" else ", pooled"
    return f"{first} resampled within {strata} x population strata{weighed}, percentile"


def contrast_pairs(methods: list[str], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(A, B) pairs for A − B: explicit `pairs`, or every method against `reference`. Where the study
    has perturbed arms (`<method>+<perturbation>`, hivebench.perturb), a method is set against the
    reference under the same perturbation, then every perturbed arm against its unperturbed method."""
    if "pairs" in spec:
        return [(a, b) for a, b in spec["pairs"]]
    pairs = []
    for method in methods:
        base, _, perturbation = method.partition(ARM_JOIN)
        reference = arm(spec["reference"], perturbation or None)
        if base != spec["reference"] and (not perturbation or reference in methods):
            pairs.append((method, reference))
    return pairs + [
        (m, m.partition(ARM_JOIN)[0]) for m in methods if ARM_JOIN in m and m.partition(ARM_JOIN)[0] in methods
    ]


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
    by `strata_by` (task, the default: each task an equal share of its suite, Table 18's task weights;
    or suite: the units pooled) and population."""
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
    strata_by = strata_by or "task"
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
    stratum_weights = stratum_weights_of(units, weights, strata_by)
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


def stratum_weights_of(
    units: pd.MultiIndex, weights: dict[str, float] | None, strata_by: str
) -> dict[str, float] | None:
    """Each stratum's weight. Task strata: at each population every suite its weight (the spec's, else
    1), shared equally among its tasks there (Table 18's task weights, whatever units a task lost).
    Suite strata: the spec's suite weights, or None (every unit the same: pooled)."""
    frame = units.to_frame(index=False)
    if strata_by == "suite":
        if weights is None:
            return None
        return {stratum(suite, "", n, "suite"): weights[suite] for suite, n in zip(frame["suite"], frame["population"])}
    tasks = frame.drop_duplicates(["suite", "task", "population"])
    per_suite = tasks.groupby(["suite", "population"])["task"].transform("size")
    return {
        stratum(suite, task, n, "task"): (1.0 if weights is None else weights[suite]) / count
        for suite, task, n, count in zip(tasks["suite"], tasks["task"], tasks["population"], per_suite)
    }


class Measure(NamedTuple):
    """What one row group of the contrasts table contrasts."""

    label: str  # the table's `metric`
    units: pd.DataFrame  # the episodes it is contrasted over
    column: str  # their column contrasted


def contrast_measures(
    episodes: pd.DataFrame,
    metrics: list[str],
    suites: Mapping[str, Suite] | None = None,
    anchors: Anchors | None = None,
) -> list[Measure]:
    """Each metric over the units of the suites that report it (another suite's units are not
    "dropped"), one suite at a time where several of the study's suites report it under one name, as
    `score (swarmbench)`: their numbers are on different scales. A metric its suite divides by per-task
    anchors is contrasted per task, as `score (swarmbench: pursuit)`, and over the anchored tasks as
    the normalised aggregate, `score normalised (swarmbench)`, where the study played every anchored
    task under the anchors' rules. Without `suites` each metric is contrasted over every episode."""
    if suites is None:
        return [Measure(metric, episodes, metric) for metric in metrics]
    measures = []
    for metric in metrics:
        declaring = {name: m for name, suite in suites.items() for m in suite.metrics if m.name == metric}
        present = [name for name in declaring if (episodes["suite"] == name).any()]
        if not present:  # no unit: a row that says so
            measures.append(Measure(metric, episodes[episodes["suite"].isin(declaring)], metric))
        for name in present:
            own = episodes[episodes["suite"] == name]
            if not declaring[name].normalised_by_anchor:
                measures.append(Measure(metric if len(present) == 1 else f"{metric} ({name})", own, metric))
                continue
            measures += [Measure(f"{metric} ({name}: {task})", group, metric) for task, group in own.groupby("task")]
            normalised = normalised_units(own, metric, suites[name], anchors)
            if normalised is not None:
                measures.append(Measure(f"{metric} normalised ({name})", normalised, "normalised"))
    return measures


def normalised_units(episodes: pd.DataFrame, metric: str, suite: Suite, anchors: Anchors | None) -> pd.DataFrame | None:
    """A suite's episodes of its anchored tasks, with `normalised` (metric / the task's anchor), where
    the anchors file holds every anchored task and the study played each under the anchors' rules;
    else None (no aggregate to contrast)."""
    if anchors is None:
        return None
    anchored = suite.anchored or tuple(task for name, task in anchors if name == suite.name)
    if not anchored or any((suite.name, task) not in anchors for task in anchored):
        return None
    like_for_like = rules_of(episodes).map(lambda rules: comparable(anchors, suite.name, rules))
    mine = episodes[episodes[suite.anchor_column].isin(anchored) & like_for_like]
    if set(mine[suite.anchor_column]) != set(anchored):
        return None
    anchor = mine[suite.anchor_column].map(lambda task: anchors[(suite.name, task)][0])
    return mine.assign(normalised=mine[metric] / anchor)


def contrast_table(
    episodes: pd.DataFrame,
    spec: dict[str, Any],
    metrics: list[str],
    resamples: int,
    confidence: float,
    seed: int,
    suites: Mapping[str, Suite] | None = None,
    anchors: Anchors | None = None,
) -> pd.DataFrame:
    """Every pair of the spec on every measure of the metrics (contrast_measures): per population, and
    over all populations together."""
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
    measures = contrast_measures(episodes, metrics, suites, anchors)
    for a, b in contrast_pairs(methods, spec):
        for label, units, column in measures:
            scopes = [("all", units)] + [(str(n), group) for n, group in units.groupby("population", sort=True)]
            for scope, data in scopes:
                result = paired_contrast(data, column, a, b, weights, resamples, confidence, seed, spec.get("strata"))
                rows.append({"population": scope, **result, "metric": label})
    return pd.DataFrame(rows, columns=COLUMNS)  # no rows for a study of one method: nothing to contrast
