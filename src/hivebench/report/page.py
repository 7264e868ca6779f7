"""A study's report page: scores and contrasts (every suite), each suite's section, and a cross-suite
summary when the study runs several suites; index.html assembles them."""

from __future__ import annotations

import html
from pathlib import Path

import altair as alt
import pandas as pd

from hivebench.replicated import POOLED
from hivebench.report import SECTION_FILE, STYLE
from hivebench.report.charts import forest_chart, scaling_chart
from hivebench.report.layout import filled
from hivebench.view import bundle  # noqa: F401 (altair inlines plots through its once-a-process bundle)
from hivebench.view.sample import PAGES_FOLDER, read_index

SCORE_COLUMNS = ["suite", "task", "method", "population", "metric", "mean", "sd", "lo", "hi", "n", "episodes"]
CONTRAST_COLUMNS = ["metric", "a", "b", "population", "estimate", "lo", "hi", "n_units", "dropped_units", "resamples"]


def score_columns(scores: pd.DataFrame) -> list[str]:
    """The scores table's columns as the report shows them: the replicate's where methods have them."""
    return SCORE_COLUMNS if "replicate" not in scores else [*SCORE_COLUMNS[:4], "replicate", *SCORE_COLUMNS[4:]]


def contrast_columns(contrasts: pd.DataFrame) -> list[str]:
    """The contrasts' columns as the report shows them: how many replicates each drew from, where any."""
    if not contrasts["replicates"].any():
        return CONTRAST_COLUMNS
    return [*CONTRAST_COLUMNS[:4], "replicates", *CONTRAST_COLUMNS[4:]]


def pooled(scores: pd.DataFrame) -> pd.DataFrame:
    """One score per (task, method, population): a method's over all its replicates, where it has them."""
    if "replicate" not in scores:
        return scores
    several = scores.groupby(["suite", "task", "method", "population"])["replicate"].transform(
        lambda r: (r == POOLED).any()
    )
    return scores[~several | (scores["replicate"] == POOLED)]


# The scores table's files, as the page links them.
SCORE_LINKS = [
    ("scores.csv", "scores.csv"),
    ("scores.md", ".md"),
    ("scores.tex", ".tex"),
    ("scaling.html", "interactive scaling plot"),
]
CONTRAST_LINKS = [
    ("contrasts.csv", "contrasts.csv"),
    ("contrasts.md", ".md"),
    ("contrasts.tex", ".tex"),
    ("forest.html", "interactive forest plot"),
]


def write_tables(frame: pd.DataFrame, out: Path, stem: str) -> None:
    """`stem`.csv (full precision), .md and .tex (two decimals, LaTeX-escaped)."""
    frame.to_csv(out / f"{stem}.csv", index=False, float_format="%.6g")
    (out / f"{stem}.md").write_text(frame.to_markdown(index=False, floatfmt=".2f") + "\n")
    styled = frame.style.hide(axis="index").format(precision=2, escape="latex").format_index(escape="latex", axis=1)
    (out / f"{stem}.tex").write_text(styled.to_latex(hrules=True))


def save_chart(chart: alt.TopLevelMixin, out: Path, stem: str) -> None:
    chart.save(out / f"{stem}.html", inline=True)  # self-contained: opens offline
    chart.save(out / f"{stem}.png", scale_factor=2)


def html_table(frame: pd.DataFrame) -> str:
    """A table as a page shows it: its columns that hold nothing left out, numbers to two decimals."""
    return filled(frame).to_html(
        escape=True, border=0, classes="data", index=False, float_format=lambda v: f"{v:.2f}", na_rep=""
    )


def file_links(prefix: str, names: list[tuple[str, str]]) -> str:
    """`Files: a · b`, each linking `prefix + file`."""
    return (
        "<p>Files: "
        + " &middot; ".join(f'<a href="{html.escape(prefix + f)}">{html.escape(t)}</a>' for f, t in names)
        + "</p>"
    )


def table_links(prefix: str, stem: str) -> str:
    """The links to one table's csv, md and tex files (write_tables)."""
    return file_links(prefix, [(f"{stem}.{s}", f"{stem}.{s}" if s == "csv" else f".{s}") for s in ("csv", "md", "tex")])


def optional_table(table: pd.DataFrame, empty: str) -> str:
    """The table, or a sentence saying why it has no rows."""
    return html_table(table) if len(table) else f"<p>{html.escape(empty)}</p>"


def cross_suite_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Per suite, method and metric: the mean over the suite's tasks and populations of each cell's
    mean score, and how many (task, population) cells it averages."""
    summary = scores.groupby(["suite", "method", "metric"], sort=False)["mean"].agg(["mean", "count"]).reset_index()
    return summary.rename(columns={"mean": "mean of cell means", "count": "cells"})


def _contrasts_html(contrasts: pd.DataFrame, confidence: float) -> str:
    dropped = contrasts[(contrasts["population"] == "all") & (contrasts["dropped_units"] > 0)]
    dropped_note = "".join(
        f"<li>{html.escape(f'{r.a} − {r.b}')} ({html.escape(r.metric)}): {r.dropped_units} units without both "
        f"methods dropped, {r.n_units} matched</li>"
        for r in dropped.itertuples()
    )
    resamples = int(contrasts["resamples"].iloc[0]) if len(contrasts) else 0
    hierarchical = (
        " Where a method has replicates (<code>replicates</code>: how many), they are resampled first, then the"
        " units inside each drawn replicate (hierarchical bootstrap)."
        if contrasts["replicates"].any()
        else ""
    )
    return f"""<h2>Paired contrasts</h2>
<p>A − B per matched unit (task, population, seed: both methods start from the same state), {resamples}
bootstrap resamples of units within strata (each row's <code>method</code> says which),
{confidence:.0%} percentile interval.{hierarchical}</p>
<ul>{dropped_note}</ul>
{html_table(contrasts[contrast_columns(contrasts)])}
{file_links("", CONTRAST_LINKS)}
<img src="forest.png" alt="forest plot of paired contrasts" style="max-width: 100%">"""


def pages_html(out: Path) -> str:
    """The study's episode pages (its episodes/ folder, where it has one), a row per method x task x N
    with a link per seed."""
    rows = read_index(out / PAGES_FOLDER)
    if not rows:
        return ""
    e = html.escape
    groups: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        method = row["method"] if row["replicate"] is None else f"{row['method']} ({row['replicate']})"
        key = (row["suite"], row["task"], method, str(row["population"]))
        link = f'<a href="{e(PAGES_FOLDER + "/" + row["page"])}">seed {e(str(row["seed"]))}</a>'
        groups.setdefault(key, []).append(link)
    body = "".join(
        "<tr>" + "".join(f"<td>{e(v)}</td>" for v in key) + f"<td>{' '.join(links)}</td></tr>"
        for key, links in groups.items()
    )
    return f"""<h2 id="episodes">Episodes</h2>
<p>Each episode below replays step by step in the browser (the contact structure, what was sent, the
per-state measures, each agent's row and its model calls): the first seeds of each method, task and
N (<code>report.episode_pages</code>). <code>hivebench view</code> draws any other cell the same way.</p>
<table class="episodes"><thead><tr><th>suite</th><th>task</th><th>method</th><th>N</th><th>pages</th></tr></thead>
<tbody>{body}</tbody></table>"""


def render_page(
    study: str,
    scores: pd.DataFrame,
    contrasts: pd.DataFrame,
    sections: list[str],
    out_dir: str | Path,
    confidence: float,
) -> Path:
    """Write the common files and index.html; `sections` are the suites whose section.html (already
    written into out_dir/<suite>/) the page embeds, in order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_tables(scores[score_columns(scores)], out, "scores")
    save_chart(scaling_chart(pooled(scores), confidence), out, "scaling")
    write_tables(contrasts[contrast_columns(contrasts)], out, "contrasts")
    save_chart(forest_chart(contrasts, confidence), out, "forest")
    parts = [(out / suite / SECTION_FILE).read_text(encoding="utf-8") for suite in sections]
    summary = ""
    if len(sections) > 1:
        summary = (
            "<h2>Across suites</h2><p>Each metric's mean over a suite's tasks and populations of the per-cell means "
            "(scores.csv has every cell with its interval).</p>" + html_table(cross_suite_summary(pooled(scores)))
        )
    e = html.escape
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(study)}: hivebench report</title>
<style>
{STYLE}
</style></head><body>
<h1>{e(study)}</h1>
<p>Suites: {", ".join(f'<a href="#{e(s)}">{e(s)}</a>' for s in sections)}.</p>
{summary}
{"".join(f'<section id="{e(s)}">{part}</section>' for s, part in zip(sections, parts))}
{_contrasts_html(contrasts, confidence)}
{pages_html(out)}
<h2>Scores by population</h2>
{html_table(scores[score_columns(scores)])}
{file_links("", SCORE_LINKS)}
<img src="scaling.png" alt="scores against population per method" style="max-width: 100%">
</body></html>
"""
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
