"""The AgentsNet report section: mean score and strict solved fraction per problem, graph family, n
and method, with bootstrap intervals over instances, and how they scale with n."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd

from hivebench.replicated import episode_ci
from hivebench.report import Section
from hivebench.report.layout import interval_text, layout_html, paper_layout, ruled, rules_of
from hivebench.report.page import file_links, html_table, save_chart, write_tables

KEYS = ["problem", "compat", "family", "population", "method"]
HEADLINE_KEYS = ["problem", "compat", "population", "method"]


def summary_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    rows = []
    ruled_episodes = episodes.assign(compat=rules_of(episodes))
    for (problem, rules, family, n, method), group in ruled_episodes.groupby(KEYS, sort=False):
        row: dict[str, object] = {"problem": ruled(problem, rules), "family": family, "n": int(n), "method": method}
        for metric in ("score", "solved"):
            ci = episode_ci(group, metric, resamples, confidence, seed)
            row.update({metric: ci.estimate, f"{metric}_lo": ci.lo, f"{metric}_hi": ci.hi})
        row.update({"rounds": float(group["rounds"].mean()), "episodes": len(group)})
        rows.append(row)
    table = pd.DataFrame(rows)
    # problems, families and methods in the study's order, n ascending
    for key in ("problem", "family", "method"):
        table[key] = pd.Categorical(table[key], list(pd.unique(table[key])), ordered=True)
    table = table.sort_values(["problem", "family", "n", "method"]).reset_index(drop=True)
    return table.astype({"problem": str, "family": str, "method": str})


def headline_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per problem, n and method over every graph family (as the paper reports n): the mean score with
    its interval, as text to two decimals."""
    rows = []
    ruled_episodes = episodes.assign(compat=rules_of(episodes))
    for (problem, rules, n, method), group in ruled_episodes.groupby(HEADLINE_KEYS, sort=False):
        # a unit: one instance of one family's task (replicates resample them together)
        ci = episode_ci(group, "score", resamples, confidence, seed, units=("task", "population", "seed"))
        rows.append(
            {"problem": ruled(problem, rules), "n": int(n), "method": method, "score": interval_text(*ci[:3], 2)}
        )
    return pd.DataFrame(rows).sort_values("n", kind="stable")


def published_rows(published: dict | None) -> pd.DataFrame:
    """The paper's leaderboard (anchors file, `published.agentsnet.leaderboard`) as headline rows: a
    method per model, "<model> (paper)"; its columns are the problems, its column groups n."""
    rows = []
    for model, groups in (published or {"rows": {}})["rows"].items():
        for n, values in groups.items():
            for column, value in zip(published["columns"], values):
                problem = str(column).lower().replace(" ", "_")
                rows.append({"problem": problem, "n": int(n), "method": f"{model} (paper)", "score": f"{value:.2f}"})
    return pd.DataFrame(rows, columns=["problem", "n", "method", "score"])


def scaling_chart(table: pd.DataFrame, confidence: float) -> alt.FacetChart:
    """Score and solved fraction against n: one panel per problem and metric, a line per method and family."""
    long = pd.concat(
        [table.assign(metric=m, mean=table[m], lo=table[f"{m}_lo"], hi=table[f"{m}_hi"]) for m in ("score", "solved")]
    )[["problem", "family", "n", "method", "metric", "mean", "lo", "hi", "episodes"]]
    sizes = sorted(int(n) for n in pd.unique(table["n"]))
    base = alt.Chart().encode(
        x=alt.X("n:Q", title="agents n", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=sizes)),
        color=alt.Color("method:N", sort=list(pd.unique(table["method"]))),
        strokeDash=alt.StrokeDash("family:N"),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title="mean and interval", scale=alt.Scale(domain=[0, 1])),
        tooltip=["problem", "family", "n", "method", "metric", alt.Tooltip("mean:Q", format=".3f"), "episodes"],
    )
    bars = base.mark_errorbar().encode(y=alt.Y("lo:Q", title="mean and interval"), y2="hi:Q")
    return (
        alt.layer(line, bars, data=long)
        .properties(width=180, height=150)
        .facet(
            column=alt.Column("problem:N", title=None, sort=list(pd.unique(table["problem"]))),
            row=alt.Row("metric:N", title=None),
        )
        .properties(title=f"AgentsNet by n: mean and {confidence:.0%} bootstrap interval over instances")
    )


def render(section: Section) -> str:
    """Write the AgentsNet files; return the section's HTML."""
    episodes, confidence, prefix = section.episodes, section.confidence, section.prefix
    table = summary_table(episodes, section.resamples, confidence, section.seed)
    leaderboard = section.published.get("leaderboard")
    headline = pd.concat(
        [headline_table(episodes, section.resamples, confidence, section.seed), published_rows(leaderboard)],
        ignore_index=True,
    )
    wide = paper_layout(
        headline.sort_values("n", kind="stable"), "problem", "n", "method", "score", lambda n: f"n = {n}"
    )
    paper_note = (
        f"<p>Paper rows: {html.escape(leaderboard['provenance'])} (config/anchors.yaml).</p>" if leaderboard else ""
    )
    write_tables(table, section.out, "agentsnet")
    save_chart(scaling_chart(table, confidence), section.out, "agentsnet_scaling")
    shown = table.assign(
        score=[interval_text(m, lo, hi, 3) for m, lo, hi in zip(table.score, table.score_lo, table.score_hi)],
        solved=[interval_text(m, lo, hi, 2) for m, lo, hi in zip(table.solved, table.solved_lo, table.solved_hi)],
    )[["problem", "family", "n", "method", "score", "solved", "rounds", "episodes"]]
    links = [
        ("agentsnet.csv", "agentsnet.csv"),
        ("agentsnet.md", ".md"),
        ("agentsnet.tex", ".tex"),
        ("agentsnet_scaling.html", "interactive chart"),
    ]
    return f"""<h2>AgentsNet</h2>
<p>{len(episodes)} episodes. Per problem and n, as the paper reports them (over its three graph
families): the mean score of each method with a {confidence:.0%} percentile bootstrap interval over
instances, the methods side by side at each n.</p>
{layout_html(wide)}
{paper_note}
<details><summary>Per problem, graph family, n and method ({len(shown)} rows)</summary>
<p>The mean score (the AgentsNet per-instance score) and the strict solved fraction (score = 1), each
with a {confidence:.0%} percentile bootstrap interval over instances; rounds: the mean number of
message rounds R (the paper's rule unless the task sets it).</p>
{html_table(shown)}
</details>
{file_links(prefix, links)}
<img src="{html.escape(prefix)}agentsnet_scaling.png" alt="AgentsNet score and solved fraction against n"
 style="max-width: 100%">
"""
