"""The SwarmBench report section: the score per task, N and method with bootstrap intervals over
seeds; the Waggle aggregate (mean over Pursuit, Foraging and Synchronization of score / the task's
frozen anchor, at every N) with a stratified bootstrap interval; the scores against N; and one
episode per task drawn as grid frames."""

from __future__ import annotations

import html
import json

import altair as alt
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from hivebench.anchors import Anchors, comparable
from hivebench.paths import cell_path_of
from hivebench.replicated import episode_bootstrap, episode_ci
from hivebench.report import Section
from hivebench.report.layout import interval_text, layout_html, paper_layout, ruled, rules_of
from hivebench.report.page import file_links, html_table, save_chart, write_tables
from hivebench.stats import percentile_interval
from hivebench.store import CELL_KEY
from hivebench.suites.swarmbench import AGGREGATE, frame_picks
from hivebench.suites.swarmbench.view import level_of, moved_objects, terrain_tiles

KEYS = ["swarm_task", "compat", "population", "method"]
FRAMES = 3  # states drawn per episode: the start, the middle, the end


def summary_table(
    episodes: pd.DataFrame, resamples: int, confidence: float, seed: int, anchors: Anchors
) -> pd.DataFrame:
    rows = []
    for (task, rules, n, method), group in episodes.assign(compat=rules_of(episodes)).groupby(KEYS, sort=False):
        ci = episode_ci(group, "score", resamples, confidence, seed)
        row = {
            "task": ruled(task, rules),
            "n": int(n),
            "method": method,
            "score": ci.estimate,
            "score_sd": group["score"].std(ddof=1),  # per episode: the papers' "mean ± sample s.d."
            "score_lo": ci.lo,
            "score_hi": ci.hi,
        }
        anchor = anchors.get(("swarmbench", task), (np.nan,))[0] if task in AGGREGATE else np.nan
        anchor = anchor if comparable(anchors, "swarmbench", rules) else np.nan  # not like for like
        normalised = {key: row[f"score{key}"] / anchor for key in ("", "_sd", "_lo", "_hi")}
        row.update({f"normalised{key}": value for key, value in normalised.items()})
        rows.append({**row, "episodes": len(group)})
    table = pd.DataFrame(rows)
    for key in ("task", "method"):
        table[key] = pd.Categorical(table[key], list(pd.unique(table[key])), ordered=True)
    return table.sort_values(["task", "n", "method"]).reset_index(drop=True).astype({"task": str, "method": str})


def aggregate_table(
    episodes: pd.DataFrame, resamples: int, confidence: float, seed: int, anchors: Anchors
) -> pd.DataFrame:
    """Per N and method that ran all three tasks: the mean over the tasks of score / anchor, each task
    weighing the same, with seeds resampled within each task."""
    rows: list[dict] = []
    if any(("swarmbench", task) not in anchors for task in AGGREGATE):
        return pd.DataFrame(rows, columns=["n", "method", "normalised", "lo", "hi", "episodes"])
    mine = episodes[episodes["swarm_task"].isin(AGGREGATE)].assign(compat=rules_of(episodes))
    for (rules, n, method), group in mine.groupby(["compat", "population", "method"], sort=False):
        method = ruled(method, rules)
        if set(group["swarm_task"]) != set(AGGREGATE) or not comparable(anchors, "swarmbench", rules):
            continue
        anchor = group["swarm_task"].map(lambda t: anchors[("swarmbench", t)][0])
        estimate, distribution = episode_bootstrap(
            group.assign(normalised=group["score"] / anchor),
            ["normalised"],
            "swarm_task",
            dict.fromkeys(AGGREGATE, 1.0),
            resamples,
            seed,
        )
        lo, hi = percentile_interval(distribution, confidence)
        rows.append(
            {"n": int(n), "method": method, "normalised": estimate[0], "lo": lo[0], "hi": hi[0], "episodes": len(group)}
        )
    return pd.DataFrame(rows, columns=["n", "method", "normalised", "lo", "hi", "episodes"])


def scaling_chart(table: pd.DataFrame, confidence: float) -> alt.FacetChart:
    sizes = sorted(int(n) for n in pd.unique(table["n"]))
    base = alt.Chart().encode(
        x=alt.X("n:Q", title="agents N", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=sizes)),
        color=alt.Color("method:N", sort=list(pd.unique(table["method"]))),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("score:Q", title="score"),
        tooltip=["task", "n", "method", alt.Tooltip("score:Q", format=".2f"), "episodes"],
    )
    bars = base.mark_errorbar().encode(y=alt.Y("score_lo:Q", title="score"), y2="score_hi:Q")
    return (
        alt.layer(line, bars, data=table)
        .properties(width=170, height=140)
        .facet(column=alt.Column("task:N", title=None, sort=list(pd.unique(table["task"]))))
        .resolve_scale(y="independent")
        .properties(title=f"SwarmBench by N: mean score and {confidence:.0%} bootstrap interval over seeds")
    )


def frames(row: pd.Series) -> pd.DataFrame:
    """One episode's map, agents, and prey or box at the start, middle and end: (frame, row, col, kind)."""
    path = cell_path_of(row)
    cell = json.loads(pq.read_schema(path).metadata[CELL_KEY])
    level = level_of(cell, row)
    size = len(level.terrain)
    walls = terrain_tiles(level.terrain)
    agents = pd.read_parquet(path, columns=["step", "row", "col"])
    states = sorted({0, int(row["rounds"]) // 2, int(row["rounds"])})
    moving = moved_objects(row, level.box, size)
    parts = []
    for state in states:
        at = agents[(agents["step"] == state) & agents["row"].between(0, size - 1) & agents["col"].between(0, size - 1)]
        parts.append(walls.assign(frame=f"t = {state}"))
        parts.append(at.assign(kind="agent", frame=f"t = {state}")[["row", "col", "kind", "frame"]])
        at_state = moving[moving["step"] == state][["row", "col", "kind"]]
        parts.append(at_state.assign(frame=f"t = {state}"))
    return pd.concat(parts).assign(task=row["swarm_task"], method=row["method"], n=int(row["population"]))


def episode_chart(episodes: pd.DataFrame) -> alt.FacetChart:
    """Per task, the first method's episode at the smallest N, first seed: the cells the suite
    declares its section reads (frame_picks, Suite.report_cells), so they are inputs of its rule."""
    picked = episodes.iloc[frame_picks(zip(episodes["swarm_task"], episodes["population"], episodes["seed"]))]
    cells = pd.concat([frames(row) for _, row in picked.iterrows()])
    # the frames in time order (Vega-Lite orders a facet's names as text: t = 0, t = 100, t = 50)
    order = sorted(pd.unique(cells["frame"]), key=lambda frame: int(frame.removeprefix("t = ")))
    colours = alt.Scale(
        domain=["wall", "food", "nest", "agent", "prey", "box"],
        range=["#555555", "#2ca02c", "#ff7f0e", "#1f77b4", "#d62728", "#8c564b"],
    )
    return (
        alt.Chart(cells)
        .mark_rect()
        .encode(
            x=alt.X("col:O", axis=None),
            y=alt.Y("row:O", axis=None),
            color=alt.Color("kind:N", scale=colours, title=None),
            tooltip=["task", "method", "n", "frame", "row", "col", "kind"],
        )
        .properties(width=120, height=120)
        .facet(row=alt.Row("task:N", title=None), column=alt.Column("frame:N", title=None, sort=order))
        .resolve_scale(x="independent", y="independent")
        .properties(title="One episode per task (first method, smallest N, first seed) at the start, middle and end")
    )


def render(section: Section) -> str:
    """Write the SwarmBench files; return the section's HTML."""
    episodes, out, confidence, anchors = section.episodes, section.out, section.confidence, section.anchors
    resamples, seed, prefix = section.resamples, section.seed, section.prefix
    table = summary_table(episodes, resamples, confidence, seed, anchors)
    aggregate = aggregate_table(episodes, resamples, confidence, seed, anchors)
    write_tables(table, out, "swarmbench")
    save_chart(scaling_chart(table, confidence), out, "swarmbench_scaling")
    episode_chart(episodes).save(str(out / "swarmbench_episodes.png"), scale_factor=1.0)
    shown = table.assign(
        **{
            column: [
                interval_text(m, lo, hi, 2, sd)
                for m, lo, hi, sd in table[[column, f"{column}_lo", f"{column}_hi", f"{column}_sd"]].to_numpy()
            ]
            for column in ("score", "normalised")
        }
    )[["task", "n", "method", "score", "normalised", "episodes"]]
    headline = paper_layout(shown, "task", "n", "method", "score", lambda n: f"N = {n}")
    anchored = ", ".join(
        f"{t} {anchors[('swarmbench', t)][0]:g} (N = {anchors[('swarmbench', t)][1]})"
        for t in AGGREGATE
        if ("swarmbench", t) in anchors
    )
    stated = getattr(anchors, "rules", {}).get("swarmbench")
    measured = f" They were measured under the {stated} rules: a score under others is not normalised." * bool(stated)
    if len(aggregate):
        shown_aggregate = aggregate.assign(
            normalised=[
                f"{m:.2f} [{lo:.2f}, {hi:.2f}]" for m, lo, hi in zip(aggregate.normalised, aggregate.lo, aggregate.hi)
            ]
        )
        aggregate_html = html_table(shown_aggregate[["n", "method", "normalised", "episodes"]])
    else:
        aggregate_html = (
            "<p>No aggregate: no method ran Pursuit, Foraging and Synchronization at one N under the anchors' "
            "rules, or an anchor is missing.</p>"
        )
    links = [
        ("swarmbench.csv", "swarmbench.csv"),
        ("swarmbench.md", ".md"),
        ("swarmbench.tex", ".tex"),
        ("swarmbench_scaling.html", "interactive chart"),
    ]
    return f"""<h2>SwarmBench</h2>
<p>{len(episodes)} episodes. Per task, N and method: the per-episode mean score ± its sample s.d. (as the
Waggle paper's lower-scale anchor tables give them) and the {confidence:.0%} percentile bootstrap interval
over seeds, as the paper lays it out (tasks as rows, the methods side by side at each N).</p>
{layout_html(headline)}
<details><summary>Every task, N and method with its normalised score ({len(shown)} rows)</summary>
<p>The score over the task's frozen anchor for Pursuit, Foraging and Synchronization
({html.escape(anchored) or "none in the anchors file"}), applied at every N.{html.escape(measured)}</p>
{html_table(shown)}
</details>
<h3>Waggle aggregate</h3>
<p>The mean over Pursuit, Foraging and Synchronization of score / anchor, each task weighing the same,
with a {confidence:.0%} interval from resampling seeds within each task.</p>
{aggregate_html}
{file_links(prefix, links)}
<img src="{html.escape(prefix)}swarmbench_scaling.png" alt="SwarmBench scores against N" style="max-width: 100%">
<img src="{html.escape(prefix)}swarmbench_episodes.png" alt="One SwarmBench episode per task" style="max-width: 100%">
"""
