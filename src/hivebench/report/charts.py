"""Charts shared by every suite's report: scores against population (the scaling plot) and paired
contrasts as a forest plot. Both take the tables the scores and contrasts rules write."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

# More tasks than this get one row per task entry (`<entry>.<ID>` members averaged) or per suite: one
# row per task would be a chart thousands of pixels tall (Silo-Bench's paper grid has 150 tasks).
MAX_TASK_ROWS = 40


def scaling_chart(scores: pd.DataFrame, confidence: float) -> alt.FacetChart:
    """Each metric's mean and interval per method against the population: one panel per metric and
    task, or with more than MAX_TASK_ROWS tasks per metric and task entry (or suite), the means over
    its tasks."""
    title = f"Scores by population: mean and {confidence:.0%} bootstrap interval over seeds"
    if scores["task"].nunique() > MAX_TASK_ROWS:
        # one row per task entry a config expanded (`<entry>.<ID>`), or per suite if still too many
        entry = scores["task"].str.rsplit(".", n=1).str[0]
        group = entry if entry.nunique() <= MAX_TASK_ROWS else scores["suite"]
        keys = ["method", "population", "metric"]
        scores = (
            scores.assign(group=group).groupby(["group", *keys], sort=False)[["mean", "lo", "hi"]].mean().reset_index()
        )
        scores = scores.assign(task=scores["group"] + " (mean over its tasks)", n=np.nan)
        title = (
            "Scores by population: per task entry (or suite), the mean over its tasks of their means "
            f"and {confidence:.0%} intervals"
        )
    methods = list(pd.unique(scores["method"]))
    populations = sorted(int(n) for n in pd.unique(scores["population"]))
    base = alt.Chart().encode(
        x=alt.X(
            "population:Q", title="population N", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=populations)
        ),
        color=alt.Color("method:N", sort=methods),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title="score: mean and interval"),
        tooltip=["method", "task", "population", "metric", alt.Tooltip("mean:Q", format=".2f"), "n"],
    )
    bars = base.mark_errorbar().encode(y=alt.Y("lo:Q", title="score: mean and interval"), y2="hi:Q")
    return (
        alt.layer(line, bars, data=scores)
        .properties(width=260, height=200)
        .facet(column=alt.Column("metric:N", title=None), row=alt.Row("task:N", title=None))
        .resolve_scale(y="independent")
        .properties(title=title)
    )


def forest_chart(contrasts: pd.DataFrame, confidence: float) -> alt.FacetChart:
    """Every contrast A − B as a point with its paired interval, a zero line, one panel per metric."""
    data = contrasts.assign(contrast=contrasts["a"] + " − " + contrasts["b"], scope="N = " + contrasts["population"])
    data.loc[data["population"] == "all", "scope"] = "all N"
    order = list(pd.unique(data["contrast"]))
    scopes = [f"N = {n}" for n in sorted(int(p) for p in pd.unique(data["population"]) if p != "all")] + ["all N"]
    base = alt.Chart().encode(
        y=alt.Y("contrast:N", sort=order, title=None), yOffset=alt.YOffset("scope:N", sort=scopes)
    )
    points = base.mark_point(filled=True).encode(
        x=alt.X("estimate:Q", title="difference (A − B)"),
        color=alt.Color("scope:N", title="population", sort=scopes),
        tooltip=[
            "contrast",
            "scope",
            "metric",
            alt.Tooltip("estimate:Q", format=".2f"),
            alt.Tooltip("lo:Q", format=".2f"),
            alt.Tooltip("hi:Q", format=".2f"),
            "n_units",
            "dropped_units",
        ],
    )
    bars = base.mark_rule().encode(x="lo:Q", x2="hi:Q", color="scope:N")
    zero = alt.Chart().mark_rule(color="#888", strokeDash=[4, 4]).encode(x=alt.datum(0))
    return (
        alt.layer(bars, points, zero, data=data)
        .properties(width=320, height=alt.Step(12))
        .facet(column=alt.Column("metric:N", title=None))
        .resolve_scale(x="independent")
        .properties(title=f"Paired contrasts: estimate and {confidence:.0%} paired bootstrap interval")
    )
