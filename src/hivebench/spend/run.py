"""A workflow run's start and stop as the budgets see them (the Snakefile's onstart and onerror).

At the start the run's settings are written beside the ledger (every job reads them there), and each
capped scope's estimate bound for the cells still to run (hivebench estimate's, on the cells with no
finished file) is compared with what is left of its budget: where it passes, the run does not start
unless `spend.over_estimate` is go. At a stop, what the jobs that met a budget said.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hivebench.cells import Block, Job
from hivebench.damage import job_record
from hivebench.ids import digest
from hivebench.paths import cell_path
from hivebench.spend.ledger import AMOUNTS, SPEND_DIR, Budget, Budgets, Charge, amount_text, read_ledger, sums
from hivebench.spend.meter import SETTINGS, Settings
from hivebench.store import stored_summary, write_json


class OverEstimate(RuntimeError):
    """The estimate's bound for the cells still to run passes what is left of a budget."""


def settings_of(config: dict[str, Any]) -> Settings:
    spend = config["spend"]
    budgets = Budgets(
        Budget.of(spend.get("budget")),
        {name: Budget.of(study["budget"]) for name, study in config["studies"].items() if "budget" in study},
    )
    return Settings(budgets, config["prices"], tuple(spend["rate_limits"]), spend["progress_s"])


def to_run(block: Block) -> Block | None:
    """The block's cells with no finished file (None where every one has)."""
    seeds = tuple(
        s for s, cell in zip(block.seeds, block.cells()) if stored_summary(cell_path(cell), digest(cell)) is None
    )
    return dataclasses.replace(block, seeds=seeds) if seeds else None


def bound(blocks: list[Block], prices: dict[str, dict[str, float]]) -> tuple[Charge, int]:
    """The estimate's bound for some blocks' calls to model servers (local models cost nothing), and
    how many cells make them."""
    from hivebench.estimate import estimate

    total, cells = Charge(), 0
    for row in estimate(blocks):
        if row.server:
            total += Charge(row.cost_bound(prices) or 0.0, row.input_tokens_bound, row.output_tokens_bound)
            cells += row.cells
    return total, cells


def budget_lines(
    config: dict[str, Any], jobs: dict[str, list[Job]], folder: Path = SPEND_DIR
) -> tuple[list[str], bool]:
    """Each capped scope's estimate bound for its cells still to run against what is left of its
    budget, a line each; and whether any bound passes."""
    budgets = settings_of(config).budgets
    scopes = [("run", budgets.run, list(jobs))] if budgets.run.capped else []
    scopes += [(s, b, [s]) for s, b in budgets.studies.items() if s in jobs and b.capped]
    spent = read_ledger(folder / "ledger.json")["spent"]
    lines, over = [], False
    for scope, budget, studies in scopes:
        blocks = [left for study in studies for job in jobs[study] for block in job.blocks if (left := to_run(block))]
        needed, cells = bound(blocks, config["prices"])
        used = sums(spent, None if scope == "run" else scope)
        name = "the run (spend.budget)" if scope == "run" else f"study {scope} (studies.{scope}.budget)"
        figures = "; ".join(
            f"{amount_text(k, getattr(used, k))} spent of {amount_text(k, cap)} "
            f"({amount_text(k, cap - getattr(used, k))} left), {amount_text(k, getattr(needed, k))} at most to go"
            for k in AMOUNTS
            if (cap := getattr(budget, k)) is not None
        )
        passes = budget.over(used + needed) is not None
        over |= passes
        lines.append(
            f"budget of {name}: {figures} ({cells} cells still to run call servers)"
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


def stop_note(jobs: dict[str, list[Job]]) -> str | None:
    """What the jobs that stopped at a budget said, and how to go on; None where none did."""
    stopped = [
        (job, record)
        for study_jobs in jobs.values()
        for job in study_jobs
        if (record := job_record(job)).get("state") == "stopped"
    ]
    if not stopped:
        return None
    job, record = stopped[0]
    return (
        f"{len(stopped)} job(s) stopped at a budget; their unfinished cells go on from the response cache "
        f"when rerun. {job.summary_path}: {record.get('error', '')}"
    )
