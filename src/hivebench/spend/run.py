"""A workflow run's start and stop as the budgets see them (the Snakefile's onstart and onerror).

At the start the run's settings are written beside the ledger (every job reads them there), and each
capped scope's bound for the cells its episode jobs will run (hivebench.spend.bound) is compared with
what is left of its budget: where it passes, the run does not start unless `spend.over_estimate` is
go. At a stop, what the jobs that met a budget in this run said.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from hivebench.cells import Job
from hivebench.damage import job_record
from hivebench.spend.bound import bound, calls_server, to_run
from hivebench.spend.ledger import AMOUNTS, SPEND_DIR, Budget, Budgets, amount_text, read_ledger, scope_name, sums
from hivebench.spend.meter import SETTINGS, Settings
from hivebench.store import write_json


class OverEstimate(RuntimeError):
    """The estimate's bound for the cells still to run passes what is left of a budget."""


def settings_of(config: dict[str, Any]) -> Settings:
    spend = config["spend"]
    budgets = Budgets(
        Budget.of(spend.get("budget")),
        {name: Budget.of(study["budget"]) for name, study in config["studies"].items() if "budget" in study},
    )
    return Settings(budgets, config["prices"], tuple(spend["rate_limits"]), spend["progress_s"])


def budget_lines(
    config: dict[str, Any], jobs: dict[str, list[Job]], folder: Path = SPEND_DIR
) -> tuple[list[str], bool]:
    """Each capped scope's estimate bound for its cells still to run against what is left of its
    budget, a line each; and whether any bound passes."""
    spent = read_ledger(folder / "ledger.json")["spent"]
    lines, over = [], False
    for scope, budget in settings_of(config).budgets.capped_scopes():
        if scope is not None and scope not in jobs:
            continue
        blocks = [
            left
            for study in (jobs if scope is None else [scope])
            for job in jobs[study]
            for block in job.blocks
            if calls_server(block.shared["method"]) and (left := to_run(block))
        ]
        needed, cells = bound(blocks, config["prices"])
        used = sums(spent, scope)
        figures = "; ".join(
            f"{amount_text(k, getattr(used, k))} spent of {amount_text(k, cap)} "
            f"({amount_text(k, cap - getattr(used, k))} left), {amount_text(k, getattr(needed, k))} at most to go"
            for k in AMOUNTS
            if (cap := getattr(budget, k)) is not None
        )
        passes = budget.over(used + needed) is not None
        over |= passes
        lines.append(
            f"budget of {scope_name(scope)}: {figures} ({cells} cells still to run call servers)"
            + (": the estimate's bound PASSES it" if passes else "")
        )
    return lines, over


def begin(config: dict[str, Any], jobs: dict[str, list[Job]], folder: Path = SPEND_DIR) -> list[str]:
    """Write the run's settings; the budget lines to show. Raises OverEstimate, naming each scope and
    its figures, where a bound passes and the run may not go over its estimate."""
    write_json(settings_of(config).to_json(), folder / SETTINGS)
    lines, over = budget_lines(config, jobs, folder)
    if over and config["spend"]["over_estimate"] == "stop":
        raise OverEstimate(
            "the estimate's bound passes what is left of a budget, so no job starts:\n  "
            + "\n  ".join(lines)
            + "\nRaise the budget, or set spend.over_estimate: go to run until the ledger stops the jobs at the budget."
        )
    if over:
        lines.append("spend.over_estimate is go: the run starts, and its jobs stop where a budget is reached")
    return lines


def stop_note(jobs: dict[str, list[Job]], since: float) -> str | None:
    """What the jobs that stopped at a budget since `since` (a time.time()) said, and how to go on;
    None where none did."""
    stopped = []
    for study_jobs in jobs.values():
        for job in study_jobs:
            record = job_record(job)
            if record.get("state") == "stopped" and _finished(record) >= since - 1:
                stopped.append((job, record))
    if not stopped:
        return None
    job, record = stopped[0]
    return (
        f"{len(stopped)} job(s) stopped at a budget; their unfinished cells go on from the response cache "
        f"when rerun. {job.summary_path}: {record.get('error', '')}"
    )


def _finished(record: dict[str, Any]) -> float:
    try:
        return datetime.datetime.fromisoformat(record["finished"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return 0.0
