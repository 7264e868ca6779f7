"""The robustness section of a study's report, for a study with perturbed arms (hivebench.perturb):
per suite, its headline metric (its first) under each perturbation against the unperturbed run of the
same seeds, as curves over each perturbation's strength and as a table."""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from hivebench.contrasts import contrast_table
from hivebench.perturb import AXES, NONE
from hivebench.registry import SUITE_METRICS
from hivebench.report import CURVES_CHART, MEMBERS_TABLE, ROBUSTNESS_TABLE, Section
from hivebench.report.page import optional_table, save_chart, table_links, write_tables
from hivebench.stats import mean_ci

MEMBER_COLUMNS = ["suite", "task", "method", "population", "member", "metric", "mean", "lo", "hi", "n"]
ALT = "paired difference from the unperturbed run against each perturbation's strength"
COLUMNS = [
    "suite",
    "metric",
    "method",
    "perturbation",
    "axis",
    "strength",
    "population",
    "mean",
    "estimate",
    "lo",
    "hi",
    "n_units",
]


def perturbed(episodes: pd.DataFrame) -> bool:
    """Whether a study's episodes have perturbed arms or mixed populations split by member."""
    return ("perturbation" in episodes and bool(episodes["perturbation"].notna().any())) or bool(
        member_columns(episodes)
    )


def member_columns(episodes: pd.DataFrame) -> list[str]:
    """The summary columns of mixed populations, `<metric>@<member>` (hivebench.agents.mixed)."""
    return [c for c in episodes.columns if "@" in c and episodes[c].notna().any()]


def members_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per mixed population (an arm), task, population, member and per-agent metric: the metric's mean
    over the member's agents, averaged over the episodes, with its bootstrap interval over seeds."""
    rows = []
    for column in member_columns(episodes):
        metric, member = column.split("@", 1)
        played = episodes[episodes[column].notna()]
        for (suite, task, method, n), group in played.groupby(["suite", "task", "method", "population"], sort=False):
            ci = mean_ci(group[column].to_numpy(dtype=float), resamples, confidence, seed)
            rows.append(
                {"suite": suite, "task": task, "method": method, "population": n, "member": member, "metric": metric}
                | {"mean": ci.estimate, "lo": ci.lo, "hi": ci.hi, "n": ci.n}
            )
    return pd.DataFrame(rows, columns=MEMBER_COLUMNS)


def robustness_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per suite, perturbed arm and population (and all populations): its headline metric's mean, and
    the paired difference from its unperturbed method over the units both played (tasks weighed
    equally), with its interval; each arm's axis and strength where it moves one setting. The
    unperturbed method is each axis's point at its unperturbed strength (a difference of 0)."""
    rows = []
    if "perturbation" not in episodes:  # mixed populations alone
        return pd.DataFrame(rows, columns=COLUMNS)
    for suite, mine in episodes.groupby("suite", sort=False):
        metric = SUITE_METRICS[suite][0].name
        arms = mine[mine["perturbation"].notna()]
        bases = {m: m.removesuffix(f"+{p}") for m, p in zip(arms["method"], arms["perturbation"])}
        pairs = [(a, b) for a, b in dict.fromkeys(bases.items()) if b in set(mine["method"])]
        if not pairs:
            continue
        contrasts = contrast_table(mine, {"pairs": pairs}, [metric], resamples, confidence, seed)
        means = mine.groupby(["method", "population"])[metric].mean()
        overall = mine.groupby("method")[metric].mean()
        placed = arms.groupby("method")[["perturbation", "perturbation_axis", "strength"]].first()
        for row in contrasts.itertuples(index=False):
            where = placed.loc[row.a]
            mean = overall[row.a] if row.population == "all" else means.get((row.a, int(row.population)), np.nan)
            rows.append(
                {
                    "suite": suite,
                    "metric": metric,
                    "method": row.b,
                    "perturbation": where["perturbation"],
                    "axis": where["perturbation_axis"],
                    "strength": where["strength"],
                    "population": row.population,
                    "mean": mean,
                    "estimate": row.estimate,
                    "lo": row.lo,
                    "hi": row.hi,
                    "n_units": row.n_units,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def unperturbed_points(table: pd.DataFrame, episodes: pd.DataFrame) -> pd.DataFrame:
    """Each curve's point at its axis's unperturbed strength: the method's own mean, a difference of 0."""
    origins = {label: origin for label, origin in AXES.values()}
    curves = table[table["axis"] != ""].drop_duplicates(["suite", "metric", "method", "axis", "population"])
    rows = []
    for row in curves.itertuples(index=False):
        origin = origins.get(row.axis, 0)  # a fault fraction's axis starts at 0 too
        mine = episodes[(episodes["method"] == row.method) & (episodes["suite"] == row.suite)]
        if row.population != "all":
            mine = mine[mine["population"] == int(row.population)]
        if origin is None:  # every agent active: as many as the population (one population per point)
            if row.population == "all":
                continue
            origin = int(row.population)
        rows.append(
            {
                **row._asdict(),
                "perturbation": NONE,
                "strength": float(origin),
                "mean": mine[row.metric].mean(),
                "estimate": 0.0,
                "lo": 0.0,
                "hi": 0.0,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def curves_chart(points: pd.DataFrame, confidence: float) -> alt.FacetChart:
    """Each method's paired difference from its unperturbed run against each axis's strength: one
    panel per suite metric (rows) and axis (columns), over all populations."""
    base = alt.Chart().encode(
        x=alt.X("strength:Q", title="strength"),
        color=alt.Color("method:N"),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("estimate:Q", title="difference from unperturbed"),
        tooltip=[
            "method",
            "perturbation",
            "strength",
            alt.Tooltip("estimate:Q", format=".3f"),
            alt.Tooltip("mean:Q", format=".3f"),
            "n_units",
        ],
    )
    bars = base.mark_errorbar().encode(y=alt.Y("lo:Q", title="difference from unperturbed"), y2="hi:Q")
    return (
        alt.layer(bars, line, data=points.assign(panel=points["suite"] + ": " + points["metric"]))
        .properties(width=220, height=160)
        .facet(row=alt.Row("panel:N", title=None), column=alt.Column("axis:N", title=None))
        .resolve_scale(x="independent", y="independent")
        .properties(
            title=f"Robustness: paired difference from the unperturbed run and {confidence:.0%} interval (all N)"
        )
    )


def render(section: Section) -> str:
    """Write the section's table and curves into section.out and return its HTML."""
    episodes = section.episodes
    table = robustness_table(episodes, section.resamples, section.confidence, section.seed)
    write_tables(table, section.out, ROBUSTNESS_TABLE)
    points = pd.concat([unperturbed_points(table, episodes), table[table["axis"] != ""]], ignore_index=True)
    points = points[points["population"] == "all"].sort_values(["suite", "method", "axis", "strength"])
    if points.empty:  # no perturbed arm: the chart says so
        points = pd.DataFrame(
            [{c: None for c in COLUMNS} | {"suite": "none", "metric": "-", "axis": "no perturbed arm"}]
        )
    save_chart(curves_chart(points, section.confidence), section.out, CURVES_CHART)
    members = members_table(episodes, section.resamples, section.confidence, section.seed)
    write_tables(members, section.out, MEMBERS_TABLE)
    prefix = html.escape(section.prefix)
    return f"""<h2>Robustness</h2>
<p>Each suite's headline metric under each perturbation (src/hivebench/perturb/README.md): its mean, and
its paired difference from the same method unperturbed over the (task, seed) units both played (each
task an equal share), with its {section.confidence:.0%} bootstrap interval; per population and over all
(`all`). An arm that moves one setting lies on that setting's axis at its strength.</p>
<img src="{prefix}{CURVES_CHART}.png" alt="{ALT}" style="max-width: 100%">
{optional_table(table, "No perturbed arm has an unperturbed method beside it in this study.")}
{table_links(section.prefix, ROBUSTNESS_TABLE)}
<h3>Mixed populations, by member</h3>
<p>Each per-agent metric of the suite (its value at an episode's last state) averaged over a member's
agents, then over the episodes, with its {section.confidence:.0%} bootstrap interval over seeds.</p>
{optional_table(members, "No mixed population here scores its agents one by one (the suite has no per-agent metric).")}
{table_links(section.prefix, MEMBERS_TABLE)}"""
