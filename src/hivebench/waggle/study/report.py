"""The Waggle section of a study's report, for the episodes of methods on the Waggle runtime: the
admission ladder of each controller (the paper's counts beside ours), the derived mode of the
admitted records per task, the runtime's telemetry per task (the paper's Table 11 counters and the
receiver-delivered messages), and the late-counterevidence intervention's metrics (README.md defines
them: the paper names them without formulas)."""

from __future__ import annotations

import html
from functools import partial

import pandas as pd

from hivebench.agents.waggle.ladder import RUNGS
from hivebench.replicated import episode_ci, replicate_labels
from hivebench.report import WAGGLE_TABLES, Section
from hivebench.report.page import html_table, optional_table, table_links, write_tables
from hivebench.waggle.runtime.policy import COUNTERS
from hivebench.waggle.runtime.records import MODES

TASK = ["method", "suite", "task"]
TRACE_COUNTS = ("traces_written", "trace_deliveries", "traces_expired")
# The intervention's metrics, as the report names them, from each episode's summary (recovery: a share)
INTERVENTION = {
    "recovery (%)": ("recovery", 100.0),
    "stale answers (%)": ("stale_answers", 100.0),
    "stale-field burden": ("stale_field_burden", 1.0),
    "post-conflict traffic": ("post_conflict_traffic", 1.0),
}


def on_runtime(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes of methods on the Waggle runtime (every one counts its delivered frames)."""
    if "delivered_frames" not in episodes:
        return episodes.iloc[:0]
    return episodes[episodes["delivered_frames"].notna()].reset_index(drop=True)


def ladder_table(episodes: pd.DataFrame, published: dict) -> pd.DataFrame:
    """Per controller and suite, where each first decode landed, and what the row counts (its cells:
    tasks x populations, its replicates, its episodes); the paper's counts as rows beside, with what
    the paper says they count."""
    columns = [f"ladder_{rung}" for rung in RUNGS]
    if not set(columns) <= set(episodes):
        ours = pd.DataFrame(columns=["method", "suite", "counts", *columns])
    else:
        played = episodes[episodes["ladder_executable"].notna()]
        played = played.assign(replicate=replicate_labels(played))
        groups = played.groupby(["method", "suite"], sort=False)
        ours = groups[columns].sum().reset_index()
        ours.insert(2, "counts", [_counts(group) for _, group in groups])
    ours = ours.rename(columns={f"ladder_{rung}": rung for rung in RUNGS})
    paper = published.get("ladder")
    if paper is not None:
        rows = [
            {
                "method": label,
                "suite": group,
                "counts": " ".join(paper["provenance"].split()),
                **dict(zip(paper["columns"], values)),
            }
            for label, groups in paper["rows"].items()
            for group, values in groups.items()
        ]
        ours = pd.concat([ours, pd.DataFrame(rows)[["method", "suite", "counts", *RUNGS]]], ignore_index=True)
    ours[list(RUNGS)] = ours[list(RUNGS)].astype(int)
    ours.insert(3, "first decodes", ours[list(RUNGS)].sum(axis=1))
    ours["executable (%)"] = 100 * ours["executable"] / ours["first decodes"].where(ours["first decodes"] > 0)
    return ours


def _counts(group: pd.DataFrame) -> str:
    """What one controller's ladder row counts: its cells (task x population), replicates, episodes."""
    cells, tasks = group.groupby(["task", "population"]).ngroups, group["task"].nunique()
    replicates = max(group["replicate"].nunique(), 1)
    populations = ", ".join(map(str, sorted(group["population"].unique())))
    return (
        f"{_many(cells, 'cell')} ({_many(tasks, 'task')} x N = {populations}), "
        f"{_many(replicates, 'replicate')}, {_many(len(group), 'episode')}"
    )


def _many(count: int, thing: str) -> str:
    return f"{count} {thing}{'s' * (count != 1)}"


def mode_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per method and task, how many records were admitted and each derived mode's share (%)."""
    columns = [f"mode_{mode}" for mode in MODES]
    counts = episodes.groupby(TASK, sort=False)[columns].sum()
    records = counts.sum(axis=1)
    shares = 100 * counts.div(records.where(records > 0), axis=0)
    shares.columns = [f"{mode} (%)" for mode in MODES]
    return pd.concat([records.rename("records").astype(int), shares], axis=1).reset_index()


def counter_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per method and task, each counter's mean per episode (trace counts where the method has a field)."""
    columns = [c for c in (*COUNTERS, *TRACE_COUNTS, "delivered_per_agent") if c in episodes]
    grouped = episodes.groupby(TASK, sort=False)
    return pd.concat([grouped.size().rename("episodes"), grouped[columns].mean()], axis=1).reset_index()


def intervention_table(episodes: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per method and task with the intervention, each metric's mean over episodes and its bootstrap
    interval."""
    rows = []
    if "intervention_round" in episodes:
        late = episodes[episodes["intervention_round"].notna()]
        for (method, suite, task), group in late.groupby(TASK, sort=False):
            for metric, (column, scale) in INTERVENTION.items():
                if column not in group or group[column].isna().all():
                    continue  # a task without the metric (recovery is each suite's own)
                scaled = group.assign(value=scale * group[column])
                ci = episode_ci(scaled, "value", resamples, confidence, seed)
                rows.append(
                    {
                        "method": method,
                        "suite": suite,
                        "task": task,
                        "round": int(group["intervention_round"].iloc[0]),
                        "metric": metric,
                        "mean": ci.estimate,
                        "lo": ci.lo,
                        "hi": ci.hi,
                        "episodes": ci.n,
                    }
                )
    columns = [*TASK, "round", "metric", "mean", "lo", "hi", "episodes"]
    return pd.DataFrame(rows, columns=columns)


def render(section: Section) -> str:
    """Write the section's tables into section.out and return its HTML."""
    episodes = on_runtime(section.episodes)
    ladder = ladder_table(episodes, section.published)
    modes = mode_table(episodes)
    counters = counter_table(episodes)
    late = intervention_table(episodes, section.resamples, section.confidence, section.seed)
    for frame, stem in zip((ladder, modes, counters, late), WAGGLE_TABLES):
        write_tables(frame, section.out, stem)
    late_html = optional_table(late, "No episode of this study has the intervention.")
    paper = section.published.get("ladder")
    provenance = f"<p>Beside ours: {html.escape(paper['provenance'])}.</p>" if paper else ""
    links = partial(table_links, section.prefix)

    return f"""<h2>Waggle runtime</h2>
<h3>Admission ladder</h3>
<p>Where each controller's first decodes landed, per suite: executable as decoded, envelope-normalised,
repaired by one regeneration asked with the validator's code, conservatively projected (invalid content
deleted), or the no-communication fallback (the private proposal).</p>
{provenance}
{html_table(ladder)}
{links("ladder")}
<h3>Derived modes per task</h3>
<p>The admitted records by derived mode (the first that applies of challenge, synthesize, relay,
deposit, wait, private): analysis labels, not instructions.</p>
{html_table(modes)}
{links("modes")}
<h3>Telemetry per task</h3>
<p>Each counter's mean per episode (the paper's Table 11 counters, receiver-delivered frames per agent,
the field's traces).</p>
{html_table(counters)}
{links("counters")}
<h3>Late-counterevidence intervention</h3>
<p>At the task's intervention round verified counterevidence contradicts what the field holds (Pursuit:
the prey is relocated; Silo-Bench III-26: one agent's shard changes). Recovery: the share of agents
with the relocated prey in view at the end (Pursuit), or answering the changed data (Silo-Bench);
stale-field burden: traces written before that round still held, summed over the rounds from it on,
per agent; post-conflict traffic: receiver-delivered frames sent from that round on, per agent. Means
over episodes with {section.confidence:.0%} bootstrap intervals, each method's own (unpaired).</p>
{late_html}
{links("intervention")}"""
