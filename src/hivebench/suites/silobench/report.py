"""The Silo-Bench report section: success (S = 1), mean S and partial correctness P per method,
protocol, topology, N and level, pooled over tasks with every task weighing the same and a
stratified bootstrap interval (seeds resampled within tasks); density and output tokens per round;
RCC against the matched single-agent (oracle) cells; success by level and by N beside the paper's
published figures (config/anchors.yaml, `published`). Each row names its behaviour (`compat`):
hivebench's, the reference's, or the differences it sets (the suite's README)."""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from hivebench.replicated import episode_bootstrap
from hivebench.report import Section
from hivebench.report.layout import interval_text, layout_html, paper_layout, rules_of
from hivebench.report.page import file_links, html_table, save_chart, write_tables
from hivebench.stats import percentile_interval
from hivebench.suites.silobench.catalogue import LEVELS
from hivebench.suites.silobench.delivered import delivered_per_agent

# what tells entries of a study apart (caps aside)
SETTING = ["method", "compat", "protocol", "topology", "rounds"]
QUANTITIES = ["success", "exact", "partial"]


def pooled(group: pd.DataFrame, resamples: int, confidence: float, seed: int) -> dict[str, float]:
    """Success, mean S and P over a group's episodes, every task weighing the same, with intervals and
    the sample s.d. of the episodes' values (the papers' "per-episode mean ± sample s.d.")."""
    weights = dict.fromkeys(group["silo_task"].unique(), 1.0)
    estimate, distribution = episode_bootstrap(group, QUANTITIES, "silo_task", weights, resamples, seed)
    lo, hi = percentile_interval(distribution, confidence)
    row = {}
    for i, name in enumerate(QUANTITIES):
        row.update({name: estimate[i], f"{name}_sd": group[name].std(ddof=1), f"{name}_lo": lo[i], f"{name}_hi": hi[i]})
    return row


def with_levels(episodes: pd.DataFrame) -> pd.DataFrame:
    """Every episode once under its level and once under "all"."""
    return pd.concat([episodes, episodes.assign(level="all")], ignore_index=True)


def pooled_table(episodes: pd.DataFrame, keys: list[str], resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per group of `keys` (each level and "all"): success, mean S and P pooled over tasks, with
    intervals, the mean density, receiver-delivered messages per agent, tokens per round and model
    calls per agent (counted apart from the messages: a method's own calls), and how many episodes."""
    rows = []
    tokens, calls, delivered = ("output_tokens" in episodes, "llm_calls" in episodes, "deliveries" in episodes)
    for values, group in with_levels(episodes).groupby(keys, sort=False):
        row = {**dict(zip(keys, values)), **pooled(group, resamples, confidence, seed)}
        row["density"] = float(group["density"].mean())
        row["delivered_per_agent"] = float(delivered_per_agent(group).mean()) if delivered else np.nan
        # the paper's cost: output tokens of all agents over the rounds the episode used
        row["tokens_per_round"] = (
            float((group["output_tokens"] / group["rounds_used"].clip(lower=1)).mean()) if tokens else np.nan
        )
        row["calls_per_agent"] = float((group["llm_calls"] / group["population"]).mean()) if calls else np.nan
        rows.append({**row, "episodes": len(group)})
    return pd.DataFrame(rows)


def summary_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """One row per method, protocol, topology, rounds, N and level (and "all"); the oracle rows have
    topology "none". RCC = 1 - success / the same method's oracle success at the same N and level."""
    table = pooled_table(episodes, [*SETTING, "population", "level"], resamples, confidence, seed).rename(
        columns={"population": "n"}
    )
    oracle = table[table["topology"] == "none"].set_index(["method", "n", "level"])["success"]
    keys = pd.MultiIndex.from_frame(table[["method", "n", "level"]])
    matched = oracle.reindex(keys).to_numpy()
    rcc = 1 - table["success"] / np.where(matched > 0, matched, 1)
    table["rcc"] = np.where((table["topology"] != "none") & (matched > 0), np.round(rcc, 12) + 0.0, np.nan)  # no -0.00
    table["level"] = pd.Categorical(table["level"], [*LEVELS, "all"], ordered=True)
    for key in ("method", "protocol", "topology"):
        table[key] = pd.Categorical(table[key], list(pd.unique(table[key])), ordered=True)
    return (
        table.sort_values([*SETTING, "n", "level"])
        .reset_index(drop=True)
        .astype({k: str for k in ["method", "protocol", "topology", "level"]})
    )


def task_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per task: success, mean S and P (means over seeds)."""
    keys = [*SETTING, "population", "silo_task"]
    table = episodes.groupby(keys, sort=False)[QUANTITIES].mean().reset_index()
    return table.assign(episodes=episodes.groupby(keys, sort=False).size().to_numpy()).rename(
        columns={"population": "n"}
    )


def percent(mean: float, lo: float, hi: float, sd: float) -> str:
    """A share in % as "m ± sd [lo, hi]"."""
    return interval_text(100 * mean, 100 * lo, 100 * hi, 1, 100 * sd)


def pivot(cells: pd.DataFrame) -> pd.DataFrame:
    """Success % (with its interval) and mean S % per setting, one pair of columns per `label`, in
    the cells' order."""
    rows = []
    for setting, group in cells.groupby(SETTING, sort=False):
        row = dict(zip(SETTING, setting))
        for c in group.itertuples():
            row[f"{c.label} success"] = percent(c.success, c.success_lo, c.success_hi, c.success_sd)
            row[f"{c.label} mean S"] = f"{100 * c.exact:.1f}"
        rows.append(row)
    return pd.DataFrame(rows)


def pivots(
    table: pd.DataFrame, played: pd.DataFrame, resamples: int, confidence: float, seed: int
) -> dict[str, pd.DataFrame]:
    """Success by level and by N per setting, over everything first: the cells pooled over N are
    computed here, those per N are the summary table's (level "all"). A study of oracle cells only
    has none."""
    if played.empty:
        return dict.fromkeys(("levels", "populations"), pd.DataFrame(columns=SETTING))
    over_n = pooled_table(played, [*SETTING, "level"], resamples, confidence, seed)
    over_n = over_n.assign(label=pd.Categorical(over_n["level"], ["all", *LEVELS], ordered=True)).sort_values(
        ["label"], kind="stable"
    )
    per_n = table[(table["topology"] != "none") & (table["level"] == "all")]
    by_n = pd.concat([over_n[over_n["level"] == "all"], per_n.assign(label="N = " + per_n["n"].astype(str))])
    return {
        "levels": pivot(over_n.astype({"label": str})),
        "populations": pivot(by_n.astype({"label": str})),
        "headline": headline(table[table["topology"] != "none"], over_n),
    }


def setting_labels(cells: pd.DataFrame) -> pd.Series:
    """Each row's method, with its setting (rules, protocol, topology, R) where the study plays a
    method under several."""
    settings = cells[SETTING].astype(str).drop_duplicates()
    several = settings["method"].duplicated(keep=False)
    label = cells["method"].astype(str)
    detail = (
        cells["compat"] + ", " + cells["protocol"] + ", " + cells["topology"] + ", R = " + cells["rounds"].astype(str)
    )
    shown = cells["method"].isin(settings.loc[several, "method"])
    return label.where(~shown, label + " (" + detail + ")")


def headline(per_n: pd.DataFrame, over_n: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout in long form: success % with its interval per level (all, I, II, III), N
    (each, then pooled over them: "all N") and method."""
    both = pd.concat([per_n.assign(group="N = " + per_n["n"].astype(str)), over_n.assign(group="all N")])
    both = both.assign(
        method=setting_labels(both),
        level=pd.Categorical(both["level"].astype(str), ["all", *LEVELS], ordered=True),
        success=[percent(*v) for v in both[["success", "success_lo", "success_hi", "success_sd"]].to_numpy()],
    )
    return both.sort_values("level", kind="stable").astype({"level": str})[["level", "group", "method", "success"]]


def paper_headline(ours: pd.DataFrame, published: dict) -> pd.DataFrame:
    """Our headline with the paper's success rates beside: by level pooled over N ("all N"), and by N
    over the levels at the Ns the study plays (the others are in the "Success by N" table)."""
    rows = []
    for name, by in (("levels", "level"), ("populations", "population")):
        for model, groups in published.get(name, {"rows": {}})["rows"].items():
            for key, values in groups.items():
                level = "all" if by == "population" or key == "overall" else str(key)
                group = "all N" if by == "level" else f"N = {key}"
                rows.append(
                    {"level": level, "group": group, "method": f"{model} (paper)", "success": f"{values[0]:.1f}"}
                )
    paper = pd.DataFrame(rows, columns=ours.columns)
    both = pd.concat([ours, paper[paper["group"].isin(set(ours["group"]))]], ignore_index=True)
    groups = sorted(pd.unique(both["group"]), key=lambda g: (g == "all N", int(g.split()[-1]) if g != "all N" else 0))
    both["group"] = pd.Categorical(both["group"], groups, ordered=True)
    both["level"] = pd.Categorical(both["level"], ["all", *LEVELS], ordered=True)
    return both.sort_values(["group", "level"], kind="stable").astype({"group": str, "level": str})


def beside_paper(ours: pd.DataFrame, table: dict | None, by: str) -> pd.DataFrame:
    """Our pivot with the paper's rows of a published table under the same column names, and its
    columns where ours have none (its figures sit in the success columns: the paper does not say
    whether it reports the share of runs with S = 1 or the mean of S)."""
    rows = []
    for label, groups in (table or {"rows": {}})["rows"].items():
        row = {
            "method": f"{label} (paper)",
            "compat": "reference",
            "protocol": "mean of 3",
            "topology": "complete",
            "rounds": 100,
        }
        for group, values in groups.items():
            name = "all" if group == "overall" else (group if by == "level" else f"N = {group}")
            row[f"{name} success"] = f"{values[0]:.1f}"
        rows.append(row)
    both = pd.concat([ours, pd.DataFrame(rows)], ignore_index=True).fillna("")
    labels = list(
        dict.fromkeys(c.removesuffix(" success").removesuffix(" mean S") for c in both.columns[len(SETTING) :])
    )
    if by == "population":  # every N in order, ours and the paper's
        labels = [
            "all",
            *sorted((label for label in labels if label != "all"), key=lambda label: int(label.split()[-1])),
        ]
    columns = [c for label in labels for c in (f"{label} success", f"{label} mean S") if c in both.columns]
    return both[[*SETTING, *columns]]


def scaling_chart(table: pd.DataFrame, confidence: float) -> alt.FacetChart:
    shown = table[table["topology"] != "none"]
    setting = shown["protocol"] + ", " + shown["topology"] + ", R = " + shown["rounds"].astype(str)
    setting += np.where(shown["compat"] == "hivebench", "", " (" + shown["compat"] + ")")
    sizes = sorted(int(n) for n in pd.unique(shown["n"]))
    base = alt.Chart().encode(
        x=alt.X("n:Q", title="agents N", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=sizes)),
        color=alt.Color("method:N", sort=list(pd.unique(shown["method"]))),
        strokeDash=alt.StrokeDash("setting:N", title="protocol, topology, rounds (compat)"),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("success:Q", title="success (S = 1)", scale=alt.Scale(domain=[0, 1])),
        tooltip=[
            "level",
            "n",
            "method",
            "setting",
            alt.Tooltip("success:Q", format=".3f"),
            alt.Tooltip("exact:Q", format=".3f"),
            "episodes",
        ],
    )
    bars = base.mark_errorbar().encode(y=alt.Y("success_lo:Q", title="success (S = 1)"), y2="success_hi:Q")
    return (
        alt.layer(line, bars, data=shown.assign(setting=setting))
        .properties(width=170, height=150)
        .facet(column=alt.Column("level:N", title="level", sort=[*LEVELS, "all"]))
        .properties(title=f"Silo-Bench success by N, tasks weighing the same; {confidence:.0%} bootstrap interval")
    )


def settled(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes with every row's behaviour (hivebench's where a cell sets no difference) and the
    communication rounds it used (all R where no agent could answer early)."""
    used = episodes["rounds_used"].fillna(episodes["rounds"]) if "rounds_used" in episodes else episodes["rounds"]
    return episodes.assign(compat=rules_of(episodes), rounds_used=used)


def render(section: Section) -> str:
    """Write the Silo-Bench files; return the section's HTML."""
    out, confidence, published = section.out, section.confidence, section.published
    episodes = settled(section.episodes)
    resamples, seed, prefix = section.resamples, section.seed, section.prefix
    table = summary_table(episodes, resamples, confidence, seed)
    write_tables(table, out, "silobench")
    task_table(episodes).to_csv(out / "silobench_tasks.csv", index=False, float_format="%.6g")
    save_chart(scaling_chart(table, confidence), out, "silobench_scaling")
    ours = pivots(table, episodes[~episodes["oracle"].astype(bool)], resamples, confidence, seed)
    sections = []
    if "headline" in ours and len(ours["headline"]):
        wide = paper_layout(paper_headline(ours["headline"], published), "level", "group", "method", "success")
        sections.append(
            "<p>Success (%) by level and N as the paper lays it out (levels as rows, N as column groups, the "
            "methods side by side; all N: pooled over the study's N), the paper's figures beside:</p>"
            + layout_html(wide)
        )
    for by, name, title in (("level", "levels", "Success by level"), ("population", "populations", "Success by N")):
        sections.append(
            f"<details><summary>{title}, with mean S</summary>\n"
            f"{html_table(beside_paper(ours[name], published.get(name), by))}</details>"
        )
        if name in published:
            sections.append(f"<p>Paper rows: {html.escape(published[name]['provenance'])} (config/anchors.yaml).</p>")
    shown = table.assign(
        success=[percent(*v) for v in table[["success", "success_lo", "success_hi", "success_sd"]].to_numpy()],
        exact=100 * table.exact,
        partial=100 * table.partial,
        rcc=100 * table.rcc,
    )[
        [
            "method",
            "compat",
            "protocol",
            "topology",
            "rounds",
            "n",
            "level",
            "success",
            "exact",
            "partial",
            "density",
            "delivered_per_agent",
            "tokens_per_round",
            "calls_per_agent",
            "rcc",
            "episodes",
        ]
    ]
    links = [
        ("silobench.csv", "silobench.csv"),
        ("silobench.md", ".md"),
        ("silobench.tex", ".tex"),
        ("silobench_tasks.csv", "per task"),
        ("silobench_scaling.html", "interactive chart"),
    ]
    return f"""<h2>Silo-Bench</h2>
<p>{len(episodes)} episodes. Success: the fraction of episodes where every agent gave the exact answer
(S = 1); mean S: the fraction of agents with the exact answer; P: partial correctness. Each is pooled over
the tasks of a level (or all 30), every task weighing the same, with a {confidence:.0%} interval from
resampling seeds within tasks; success is shown as mean ± the sample s.d. of its episodes' values (as the
Waggle paper's lower-scale anchor tables give them) [interval]. Density D = messages / (N (N - 1));
delivered per agent: messages received,
per agent (for a method on the Waggle runtime, frames: a sender's trace and task message to one receiver in one
round are one); tokens per round = output tokens of all agents / the rounds the episode used (R, or fewer where
every agent answered early); calls per agent: the model calls a method made, per agent, counted apart from
the messages (methods that call models; SwarmSys's organisation calls per role and event). compat:
hivebench's behaviour, the reference's, or the differences a row sets (the paper's rows: the reference's).
RCC = 1 - success / the same method's success on the matched single-agent cells (oracle: one agent given
the whole instance of the same task, N and seed), where the study runs them.</p>
{"".join(sections)}
<h3>Every setting, N and level (%)</h3>
{html_table(shown)}
{file_links(prefix, links)}
<img src="{html.escape(prefix)}silobench_scaling.png" alt="Silo-Bench success against N by level"
 style="max-width: 100%">
"""
