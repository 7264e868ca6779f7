"""The LoopBench report: Table 1 (Proximity and Stability per method and graph), conflicts over time,
scores by population and paired contrasts (from the scores and contrasts rules)."""

from __future__ import annotations

import html
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from hivebench.report import LOOPBENCH_FILES
from hivebench.report.charts import forest_chart, scaling_chart
from hivebench.stats import mean_ci

TABLE_COLUMNS = [
    "method",
    "graph",
    "proximity",
    "proximity_lo",
    "proximity_hi",
    "stability",
    "stability_lo",
    "stability_hi",
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
            mean, lo, hi, defined = mean_ci(group[metric].to_numpy(), resamples, confidence, seed)
            row.update({metric: mean, f"{metric}_lo": lo, f"{metric}_hi": hi})
            if metric == "proximity":  # NaN for a run that starts at the optimum: count the defined ones
                row["proximity_episodes"] = defined
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
    """The paper's layout: rows = methods, column groups = graphs, each with Proximity and Stability."""
    graphs = list(dict.fromkeys(table["graph"]))
    wide = pd.DataFrame(index=pd.Index(list(dict.fromkeys(table["method"])), name="method"))
    for graph in graphs:
        part = table[table["graph"] == graph].set_index("method")
        for metric, title in (("proximity", "Proximity (%)"), ("stability", "Stability (%)")):
            wide[(graph, title)] = [
                _cell_text(*part.loc[m, [metric, f"{metric}_lo", f"{metric}_hi"]]) if m in part.index else ""
                for m in wide.index
            ]
    wide.columns = pd.MultiIndex.from_tuples(wide.columns, names=["graph", "metric"])
    return wide


def conflicts_by_step(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Mean conflicting edges per state with a bootstrap interval, per method and graph."""
    long = episodes[["method", "graph", "seed", "conflicts"]].explode("conflicts")
    long["step"] = long.groupby(["method", "graph", "seed"]).cumcount()
    long["conflicts"] = long["conflicts"].astype(float)
    rows = []
    for (method, graph, step), group in long.groupby(["method", "graph", "step"], sort=False):
        mean, lo, hi, n = mean_ci(group["conflicts"].to_numpy(), resamples, confidence, seed)
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


SCORE_COLUMNS = ["task", "method", "population", "metric", "mean", "lo", "hi", "n", "episodes"]
CONTRAST_COLUMNS = ["metric", "a", "b", "population", "estimate", "lo", "hi", "n_units", "dropped_units", "resamples"]


def write_tables(frame: pd.DataFrame, out: Path, stem: str) -> None:
    """`stem`.csv (full precision), .md and .tex (two decimals, LaTeX-escaped)."""
    frame.to_csv(out / f"{stem}.csv", index=False, float_format="%.6g")
    (out / f"{stem}.md").write_text(frame.to_markdown(index=False, floatfmt=".2f") + "\n")
    styled = frame.style.hide(axis="index").format(precision=2, escape="latex").format_index(escape="latex", axis=1)
    (out / f"{stem}.tex").write_text(styled.to_latex(hrules=True))


def save_chart(chart: alt.TopLevelMixin, out: Path, stem: str) -> None:
    chart.save(out / f"{stem}.html", inline=True)  # self-contained: opens offline
    chart.save(out / f"{stem}.png", scale_factor=2)


def _html_table(frame: pd.DataFrame) -> str:
    return frame.to_html(escape=True, border=0, classes="data", index=False, float_format=lambda v: f"{v:.2f}")


def _index_html(
    study: str, episodes: pd.DataFrame, wide: pd.DataFrame, scores: pd.DataFrame, contrasts: pd.DataFrame, confidence: float
) -> str:
    seeds = episodes.groupby(["method", "graph"])["seed"].nunique()
    seed_text = str(seeds.min()) if seeds.min() == seeds.max() else f"{seeds.min()}&ndash;{seeds.max()}"
    undefined = int(episodes["proximity"].isna().sum())
    undefined_note = (
        f" {undefined} episodes started at the optimum: their Proximity is undefined and left out"
        " (table1.csv, column proximity_episodes)."
        if undefined
        else ""
    )
    dropped = contrasts[(contrasts["population"] == "all") & (contrasts["dropped_units"] > 0)]
    dropped_note = "".join(
        f"<li>{html.escape(f'{r.a} − {r.b}')} ({html.escape(r.metric)}): {r.dropped_units} units without both "
        f"methods dropped, {r.n_units} matched</li>"
        for r in dropped.itertuples()
    )
    resamples = int(contrasts["resamples"].iloc[0]) if len(contrasts) else 0
    e = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(study)}: LoopBench report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; color: #222; }}
table {{ border-collapse: collapse; font-variant-numeric: tabular-nums; margin-bottom: 1rem; }}
th, td {{ padding: 0.3rem 0.7rem; border-bottom: 1px solid #ddd; text-align: right; }}
th {{ background: #f4f4f4; }}
</style></head><body>
<h1>{e(study)}: LoopBench Table 1</h1>
<p>{len(episodes)} episodes; {seed_text} seeds per method and graph.
Cells: mean with a {confidence:.0%} percentile bootstrap interval over seeds.
Proximity and Stability as defined in the LoopBench paper (section 3); see the README's Metrics section.{undefined_note}</p>
{wide.to_html(escape=True, border=0, classes="table1")}
<p>Files: <a href="table1.csv">table1.csv</a> &middot; <a href="table1.md">table1.md</a> &middot;
<a href="table1.tex">table1.tex</a> &middot; <a href="conflicts.html">interactive chart</a></p>
<h2>Conflicts over time</h2>
<img src="conflicts.png" alt="conflicting edges per step, per method and graph" style="max-width: 100%">
<h2>Paired contrasts</h2>
<p>A − B per matched unit (task, population, seed: both methods start from the same state), {resamples}
bootstrap resamples of units within suite &times; population strata, {confidence:.0%} percentile interval.</p>
<ul>{dropped_note}</ul>
{_html_table(contrasts[CONTRAST_COLUMNS])}
<p>Files: <a href="contrasts.csv">contrasts.csv</a> &middot; <a href="contrasts.md">.md</a> &middot;
<a href="contrasts.tex">.tex</a> &middot; <a href="forest.html">interactive forest plot</a></p>
<img src="forest.png" alt="forest plot of paired contrasts" style="max-width: 100%">
<h2>Scores by population</h2>
{_html_table(scores[SCORE_COLUMNS])}
<p>Files: <a href="scores.csv">scores.csv</a> &middot; <a href="scores.md">.md</a> &middot;
<a href="scores.tex">.tex</a> &middot; <a href="scaling.html">interactive scaling plot</a></p>
<img src="scaling.png" alt="scores against population per method" style="max-width: 100%">
</body></html>
"""


def render(
    episodes_path: str | Path,
    scores_path: str | Path,
    contrasts_path: str | Path,
    out_dir: str | Path,
    resamples: int,
    confidence: float,
    seed: int,
) -> list[Path]:
    """Write every file of LOOPBENCH_FILES into `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    episodes = pd.read_parquet(episodes_path)
    scores = pd.read_parquet(scores_path)
    contrasts = pd.read_parquet(contrasts_path)
    study = str(episodes["study"].iloc[0])
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
    write_tables(scores[SCORE_COLUMNS], out, "scores")
    save_chart(scaling_chart(scores, confidence), out, "scaling")
    write_tables(contrasts[CONTRAST_COLUMNS], out, "contrasts")
    save_chart(forest_chart(contrasts, confidence), out, "forest")
    (out / "index.html").write_text(_index_html(study, episodes, wide, scores, contrasts, confidence))
    return [out / name for name in LOOPBENCH_FILES]
