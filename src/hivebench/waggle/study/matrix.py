"""The Waggle matrix's own tables (config/studies/waggle.yaml), with the paper's figures beside
hivebench's where it prints them (config/anchors.yaml, published.waggle): retention from N = 64 to
N = 128, the communication-horizon curve, and the paper's key paired effects.

Every interval resamples a method's replicates (training seeds) first where it has them, then matched
(task, seed) units within tasks (hivebench.stats.hierarchical_bootstrap; one replicate: the paired
stratified bootstrap).

The section (reports/<study>/matrix) is every study's where one of its tables has a row (plays.py),
over every method the study runs: SwarmSys and the suites' own baselines too, not only the methods on
the Waggle runtime.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from hivebench.anchors import Anchors, normalise
from hivebench.contrasts import paired_contrast
from hivebench.replicated import replicate_design, replicate_labels
from hivebench.report import MATRIX_TABLES, Section
from hivebench.report.layout import rules_of
from hivebench.report.page import optional_table, table_links, write_tables
from hivebench.stats import hierarchical_bootstrap, percentile_interval
from hivebench.suites.silobench.delivered import delivered_per_agent
from hivebench.waggle.study.plays import AGGREGATED, KEY_EFFECTS

RETENTION_COLUMNS = [
    "method",
    "measure",
    "from N",
    "to N",
    "mean from",
    "mean to",
    "retention (%)",
    "lo",
    "hi",
    "units",
    "replicates",
]
HORIZON_COLUMNS = [
    "method",
    "population",
    "rounds",
    "success",
    "lo",
    "hi",
    "delivered per agent",
    "units",
    "replicates",
]
EFFECT_COLUMNS = [
    "effect",
    "metric",
    "population",
    "estimate",
    "lo",
    "hi",
    "n_units",
    "replicates",
    "paper",
    "paper lo",
    "paper hi",
]


def measures(episodes: pd.DataFrame, anchors: Anchors) -> pd.DataFrame:
    """One row per (episode, measure): the measures the matrix's tables compare across populations and
    horizons, each with its unit (the suite's own task id, so a task at another horizon is the same
    unit) and replicate ("" for a method without)."""
    frame = episodes.assign(replicate=replicate_labels(episodes))
    parts = []
    if "silo_task" in frame:
        silo = frame[frame["suite"] == "silobench"]
        parts.append(silo.assign(measure="Silo-Bench success", unit=silo["silo_task"], value=silo["success"]))
        if "deliveries" in silo:
            delivered = delivered_per_agent(silo)
            parts.append(silo.assign(measure="delivered per agent", unit=silo["silo_task"], value=delivered))
    if "swarm_task" in frame:
        swarm = frame[(frame["suite"] == "swarmbench") & frame["swarm_task"].isin(AGGREGATED)]
        cells = zip(swarm["score"], swarm["swarm_task"], rules_of(swarm))
        normalised = [normalise(score, "swarmbench", task, anchors, rules) for score, task, rules in cells]
        swarm = swarm.assign(measure="Pursuit/Foraging normalised", unit=swarm["swarm_task"], value=normalised)
        parts.append(swarm[swarm["value"].notna()])  # only where the rules are the anchors
    columns = ["method", "replicate", "measure", "unit", "seed", "population", "rounds", "value"]
    if not parts:
        return pd.DataFrame(columns=columns)
    rounds = [part.get("rounds", pd.Series(np.nan, index=part.index)) for part in parts]
    return pd.concat([part.assign(rounds=r)[columns] for part, r in zip(parts, rounds)], ignore_index=True)


def _design(rows: pd.DataFrame, condition: str, levels: list) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(values (replicates, units, levels), strata (units,), replicate labels): each matched (unit,
    seed) with its value at every level of `condition`, in every replicate; units lacking one are left
    out."""
    levels_wide = rows.pivot_table(
        index=["unit", "seed", "replicate"], columns=condition, values="value", aggfunc="first"
    )
    values, kept = replicate_design(levels_wide.reset_index(), levels, ["unit", "seed"])
    return values, kept.get_level_values("unit").to_numpy(), sorted(rows["replicate"].unique())


def retention_table(
    episodes: pd.DataFrame, anchors: Anchors, published: dict, resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """Per method and measure, from the second-largest population it played to the largest (the
    extrapolation study's N = 64 and 128): both means over the units played at both, and the second's
    share of the first with its interval (both populations resampled together); the paper's rows beside."""
    rows = []
    data = measures(episodes, anchors)
    for (method, measure), group in data.groupby(["method", "measure"], sort=False):
        populations = sorted(int(n) for n in group["population"].unique())
        if len(populations) < 2:
            continue
        pair = populations[-2:]
        values, strata, labels = _design(group[group["population"].isin(pair)], "population", pair)
        if values.shape[1] == 0:
            continue
        estimate, distribution = hierarchical_bootstrap(values, strata, None, resamples, seed)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = 100 * distribution[:, 1] / distribution[:, 0]  # infinite where a resample's first mean is 0
        lo, hi = percentile_interval(ratio, confidence) if not np.isnan(ratio).any() else (np.nan, np.nan)
        share = 100 * estimate[1] / estimate[0] if estimate[0] else np.nan
        rows.append([method, measure, *pair, estimate[0], estimate[1], share, lo, hi, values.shape[1], len(labels)])
    ours = pd.DataFrame(rows, columns=RETENTION_COLUMNS)
    if ours.empty:  # the paper's rows are shown beside ours, not alone
        return ours
    tables = ("retention", "extrapolation", "delivered")
    paper = [published_rows(published.get(name), RETENTION_COLUMNS) for name in tables]
    both = pd.concat([ours, *paper], ignore_index=True)
    return both.astype({"from N": "Int64", "to N": "Int64", "units": "Int64", "replicates": "Int64"})


def horizon_table(
    episodes: pd.DataFrame, anchors: Anchors, resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """Per method and population played at several horizons (Silo-Bench rounds): success at each
    horizon with its interval, over the (task, seed) units played at every horizon, and the delivered
    messages per agent."""
    rows = []
    data = measures(episodes, anchors)
    success = data[data["measure"] == "Silo-Bench success"]
    delivered = data[data["measure"] == "delivered per agent"]
    for (method, population), group in success.groupby(["method", "population"], sort=False):
        horizons = sorted(int(r) for r in group["rounds"].dropna().unique())
        if len(horizons) < 2:
            continue
        values, strata, labels = _design(group, "rounds", horizons)
        if values.shape[1] == 0:
            continue
        estimate, distribution = hierarchical_bootstrap(values, strata, None, resamples, seed)
        lo, hi = percentile_interval(distribution, confidence)
        sent = delivered[(delivered["method"] == method) & (delivered["population"] == population)]
        per_round = sent.groupby("rounds")["value"].mean()
        for k, rounds in enumerate(horizons):
            rows.append(
                [
                    method,
                    population,
                    rounds,
                    estimate[k],
                    lo[k],
                    hi[k],
                    per_round.get(rounds, np.nan),
                    values.shape[1],
                    len(labels),
                ]
            )
    return pd.DataFrame(rows, columns=HORIZON_COLUMNS)  # the excerpt prints no horizon figures


def effects_table(
    episodes: pd.DataFrame, published: dict, resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """The paper's key paired effects beside hivebench's, for each whose two methods the study ran."""
    paper = published.get("effects", {"rows": {}})["rows"]
    rows = []
    for label, (a, b, suite, metric, population) in KEY_EFFECTS.items():
        data = episodes[episodes["suite"] == suite]
        if population == "largest" and len(data):
            population = int(data["population"].max())
            data = data[data["population"] == population]
        if not {a, b} <= set(data["method"]):
            continue
        ours = paired_contrast(data, metric, a, b, None, resamples, confidence, seed)
        theirs = next(iter(paper.get(label, {}).values()), [np.nan] * 3)
        rows.append(
            [
                f"{label} ({a} - {b})",
                metric,
                population,
                ours["estimate"],
                ours["lo"],
                ours["hi"],
                ours["n_units"],
                ours["replicates"],
                *theirs,
            ]
        )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def published_rows(table: dict | None, columns: list[str]) -> pd.DataFrame:
    """A published table's rows in our columns: each row's label as its method, its group as its
    measure, its numbers under the table's own columns (config/anchors.yaml), the rest empty."""
    if table is None:
        return pd.DataFrame(columns=columns)
    rows = [
        {"method": label, "measure": group, **dict(zip(table["columns"], values))}
        for label, groups in table["rows"].items()
        for group, values in groups.items()
    ]
    return pd.DataFrame(rows).reindex(columns=columns)


def render(section: Section) -> str:
    """Write the section's tables into section.out and return its HTML."""
    episodes = section.episodes
    bootstrap = (section.resamples, section.confidence, section.seed)
    retention = retention_table(episodes, section.anchors, section.published, *bootstrap)
    horizon = horizon_table(episodes, section.anchors, *bootstrap)
    effects = effects_table(episodes, section.published, *bootstrap)
    for frame, stem in zip((retention, horizon, effects), MATRIX_TABLES):
        write_tables(frame, section.out, stem)
    links = partial(table_links, section.prefix)
    return f"""<h2>Across populations and horizons (the Waggle matrix)</h2>
<h3>Extrapolation: retention from the second-largest population to the largest</h3>
<p>Each measure's mean at the two largest populations a method played (N = 64 and 128 in the
extrapolation study) over the (task, seed) units played at both, and the second's share of the first
with its {section.confidence:.0%} interval (replicates resampled first, then units within tasks); the
Waggle paper's figures (N = 64 to 128) as its rows.</p>
{optional_table(retention, "No method of this study ran at two populations.")}
{links("retention")}
<h3>Communication horizon</h3>
<p>Silo-Bench success per number of rounds, over the (task, seed) units played at every horizon (the
same instances at each), with {section.confidence:.0%} intervals; receiver-delivered messages per agent.</p>
{optional_table(horizon, "No method of this study played Silo-Bench at several horizons.")}
{links("horizon")}
<h3>Key paired effects</h3>
<p>The paper's key paired effects beside ours, where the study ran both methods (named as
config/studies/waggle.yaml names them): hierarchical where a method has replicates.</p>
{optional_table(effects, "The study runs none of the paper's key pairs.")}
{links("effects")}"""
