"""The LoopBench report section: Table 1 (Proximity and Stability per method and graph) and conflicts
over time."""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from hivebench.replicated import episode_ci
from hivebench.report import Section
from hivebench.report.page import file_links, save_chart

TABLE_COLUMNS = [
    "method",
    "graph",
    "proximity",
    "proximity_lo",
    "proximity_hi",
    "stability",
    "stability_lo",
    "stability_hi",
    "reached_optimum",
    "final_optimal",
    "first_optimal_step",
    "episodes",
    "proximity_episodes",
]


def _ordered(episodes: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Methods in study order; graphs by population, then name."""
    methods = list(pd.unique(episodes["method"]))
    graphs = episodes[["graph", "population"]].drop_duplicates().sort_values(["population", "graph"])
    return methods, list(graphs["graph"])


def table1(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """One row per (method, graph): mean and bootstrap interval over seeds of each metric."""
    methods, graphs = _ordered(episodes)
    rows = []
    for (method, graph), group in episodes.groupby(["method", "graph"], sort=False):
        row: dict[str, object] = {"method": method, "graph": graph}
        for metric in ("proximity", "stability"):
            mean, lo, hi, defined = episode_ci(group, metric, resamples, confidence, seed)
            row.update({metric: mean, f"{metric}_lo": lo, f"{metric}_hi": hi})
            if metric == "proximity":  # NaN for a run that starts at the optimum: count the defined ones
                row["proximity_episodes"] = defined
        # the paper's outcome measures: fractions of episodes, and the mean first optimal step of
        # those that reach the optimum
        row["reached_optimum"] = group["reached_optimum"].mean()
        row["final_optimal"] = group["final_optimal"].mean()
        row["first_optimal_step"] = group["first_optimal_step"].mean()
        row["episodes"] = len(group)
        rows.append(row)
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    table["method"] = pd.Categorical(table["method"], methods, ordered=True)
    table["graph"] = pd.Categorical(table["graph"], graphs, ordered=True)
    table = table.sort_values(["method", "graph"]).reset_index(drop=True)
    return table.astype({"method": str, "graph": str})


def _cell_text(mean: float, lo: float, hi: float) -> str:
    return "n/a" if np.isnan(mean) else f"{mean:.1f} [{lo:.1f}, {hi:.1f}]"


def wide_table(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout: rows = methods, column groups = graphs, each with Proximity and Stability
    (and the share of episodes that reach the optimum, and end there)."""
    graphs = list(dict.fromkeys(table["graph"]))
    wide = pd.DataFrame(index=pd.Index(list(dict.fromkeys(table["method"])), name="method"))
    for graph in graphs:
        part = table[table["graph"] == graph].set_index("method")
        for metric, title in (("proximity", "Proximity (%)"), ("stability", "Stability (%)")):
            wide[(graph, title)] = [
                _cell_text(*part.loc[m, [metric, f"{metric}_lo", f"{metric}_hi"]]) if m in part.index else ""
                for m in wide.index
            ]
        wide[(graph, "Optimal: reached / final (%)")] = [
            f"{100 * part.loc[m, 'reached_optimum']:.0f} / {100 * part.loc[m, 'final_optimal']:.0f}"
            if m in part.index
            else ""
            for m in wide.index
        ]
    wide.columns = pd.MultiIndex.from_tuples(wide.columns, names=["graph", "metric"])
    return wide


def conflicts_by_step(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Mean conflicting edges per state with a bootstrap interval, per method and graph."""
    episode = ["method", "graph", "seed", *(["replicate"] if "replicate" in episodes else [])]
    long = episodes[[*episode, "conflicts"]].explode("conflicts")
    long["step"] = long.groupby(episode, dropna=False).cumcount()
    long["conflicts"] = long["conflicts"].astype(float)
    rows = []
    for (method, graph, step), group in long.groupby(["method", "graph", "step"], sort=False):
        mean, lo, hi, n = episode_ci(group, "conflicts", resamples, confidence, seed, ("seed",))
        rows.append({"method": method, "graph": graph, "step": step, "conflicts": mean, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def conflicts_chart(curves: pd.DataFrame, graphs: list[str], confidence: float) -> alt.FacetChart:
    base = alt.Chart(curves).encode(
        x=alt.X("step:Q", title="step t (state after t rounds)"),
        color=alt.Color("method:N", sort=list(pd.unique(curves["method"]))),
    )
    band = base.mark_area(opacity=0.2).encode(y="lo:Q", y2="hi:Q")
    line = base.mark_line(point=True).encode(
        y=alt.Y("conflicts:Q", title="conflicting edges (mean)"),
        tooltip=["method", "graph", "step", alt.Tooltip("conflicts:Q", format=".2f")],
    )
    return (
        alt.layer(band, line, data=curves)
        .properties(width=240, height=200)
        .facet(column=alt.Column("graph:N", sort=graphs, title=None))
        .resolve_scale(y="independent")
        .properties(title=f"Conflicts over time, mean and {confidence:.0%} bootstrap interval over seeds")
    )


def published_html(table: dict) -> str:
    """A published table in the same layout (rows = agents, column groups = graphs), with provenance."""
    groups = list(dict.fromkeys(g for row in table["rows"].values() for g in row))
    frame = pd.DataFrame(
        {
            (g, c): [row.get(g, [None] * len(table["columns"]))[i] for row in table["rows"].values()]
            for g in groups
            for i, c in enumerate(table["columns"])
        },
        index=pd.Index(list(table["rows"]), name="agent"),
    )
    frame.columns = pd.MultiIndex.from_tuples(frame.columns, names=["graph", "metric"])
    return (
        f"<h3>The paper's Table 1</h3><p>{html.escape(table['provenance'])} (config/anchors.yaml).</p>"
        + frame.to_html(escape=True, border=0, classes="table1", float_format=lambda v: f"{v:.1f}", na_rep="")
    )


def section_html(episodes: pd.DataFrame, wide: pd.DataFrame, prefix: str, confidence: float, published: dict) -> str:
    """The LoopBench part of index.html; links are relative to the page (`prefix` is this folder)."""
    seeds = episodes.groupby(["method", "graph"])["seed"].nunique()
    seed_text = str(seeds.min()) if seeds.min() == seeds.max() else f"{seeds.min()}&ndash;{seeds.max()}"
    undefined = int(episodes["proximity"].isna().sum())
    undefined_note = (
        f" {undefined} episodes started at the optimum: their Proximity is undefined and left out"
        " (table1.csv, column proximity_episodes)."
        if undefined
        else ""
    )
    links = [
        ("table1.csv", "table1.csv"),
        ("table1.md", "table1.md"),
        ("table1.tex", "table1.tex"),
        ("conflicts.html", "interactive chart"),
    ]
    return f"""<h2>LoopBench Table 1</h2>
<p>{len(episodes)} episodes; {seed_text} seeds per method and graph.
Cells: mean with a {confidence:.0%} percentile bootstrap interval over seeds.
Proximity and Stability as defined in the LoopBench paper (section 3);
see src/hivebench/suites/loopbench/README.md (Metrics).{undefined_note}</p>
{wide.to_html(escape=True, border=0, classes="table1")}
{file_links(prefix, links)}
{published_html(published["table1"]) if "table1" in published else ""}
<h3>Conflicts over time</h3>
<img src="{html.escape(prefix)}conflicts.png" alt="conflicting edges per step, per method and graph"
 style="max-width: 100%">
"""


def render(section: Section) -> str:
    """Write the LoopBench files; return the section's HTML, with the paper's Table 1 beside ours
    where the anchors file has it (`published`)."""
    out, resamples, confidence, seed = section.out, section.resamples, section.confidence, section.seed
    episodes = section.episodes
    episodes = episodes.assign(graph=episodes["graph"].fillna(episodes["task"]))  # a fixed graph: its task's name
    table = table1(episodes, resamples, confidence, seed)
    table.to_csv(out / "table1.csv", index=False, float_format="%.4f")
    wide = wide_table(table)
    flat = wide.copy()
    flat.columns = [f"{graph} {metric}" for graph, metric in wide.columns]
    (out / "table1.md").write_text(flat.to_markdown() + "\n")
    latex = wide.style.format(escape="latex").format_index(escape="latex", axis=0).format_index(escape="latex", axis=1)
    (out / "table1.tex").write_text(latex.to_latex(hrules=True, multicol_align="c"))
    curves = conflicts_by_step(episodes, resamples, confidence, seed)
    save_chart(conflicts_chart(curves, list(dict.fromkeys(table["graph"])), confidence), out, "conflicts")
    return section_html(episodes, wide, section.prefix, confidence, section.published)
