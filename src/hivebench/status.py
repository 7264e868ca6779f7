"""`hivebench status`: where each cell of a config stands, judged from the files on disk as Snakemake
judges them, and what the finished LLM cells cost so far. Reads file footers and job records only.

done:     the cell's file is whole (damage.job_damage: the rule Snakemake applies too) and has the cell's
          current hash;
damaged:  its file is missing after its job finished, changed since, not a whole Parquet file, holds
          another cell, or `hivebench verify` found it damaged: the next `snakemake` run redoes it (a
          study table that is damaged, and an episode page the report links that is missing, are
          named too);
failed:   not done, and the last run of its job failed (the job's record: exit status and error
          line) or was killed (the record says running, on this host, and its process is gone);
interrupted: not done, and its job was running when the Snakemake run that started it was killed
          (Snakemake's mark of its output is left in .snakemake/incomplete/, and no Snakemake runs here);
unfinished: not done, and the last run of its job stopped at a budget (hivebench.spend): the calls it
          paid for are in the cell's response cache, and a rerun with more budget goes on from them;
running:  not done, and its job is running (Snakemake's mark, or its job's record, says so);
pending:  the rest (never run, or stale after a parameter change).
"""

from __future__ import annotations

import base64
import binascii
import os
import socket
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hivebench.cells import Job
from hivebench.damage import job_record, study_damage
from hivebench.ids import digest
from hivebench.models import token_cost
from hivebench.paths import cell_files, cell_path
from hivebench.store import stored_summary

STATES = ("done", "damaged", "failed", "interrupted", "unfinished", "running", "pending")
COLUMNS = ("study", "method", "cells", *STATES, "llm_calls", "input_tokens", "output_tokens", "cost_usd")
LOCKS = Path(".snakemake/locks")
# Snakemake marks each output of a job it starts here, and removes the mark when the job ends (done or
# failed): one left behind with no Snakemake running is a job its killed run left unfinished.
INCOMPLETE = Path(".snakemake/incomplete")


@dataclass
class Report:
    rows: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)  # one line per failed or interrupted job and damaged file


def job_state(job: Job, started: frozenset[str] = frozenset(), live: bool = False) -> tuple[str | None, str]:
    """(failed | interrupted | unfinished | running | None, what to tell) from Snakemake's marks of the outputs of
    the jobs it started and has not seen end (`started`; `live`: a Snakemake run holds this directory),
    else from the record the job's last run wrote."""
    where = f"job {job.summary_path}"
    if job.summary_path in started:
        problem = f"{where}: interrupted (its Snakemake run was killed while it ran; the next run redoes it)"
        return ("running", "") if live else ("interrupted", problem)
    record = job_record(job)
    if record.get("state") == "failed":
        return "failed", f"{where}: failed (exit {record.get('exit')}): {record.get('error', '')}"
    if record.get("state") == "stopped":
        return "unfinished", f"{where}: stopped at a budget: {record.get('error', '')}"
    if record.get("state") == "running":
        if record.get("host") == socket.gethostname() and not _alive(record.get("pid")):
            return "failed", f"{where}: killed (process {record.get('pid')} is gone without an exit status)"
        return "running", ""
    return None, ""


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def incomplete_outputs() -> frozenset[str]:
    """The outputs Snakemake marked in INCOMPLETE: each mark is the output's path, URL-safe base64,
    cut into folders of "@"-prefixed parts where longer than a file name may be."""
    if not INCOMPLETE.is_dir():
        return frozenset()
    found = set()
    for mark in INCOMPLETE.rglob("*"):
        parts = mark.relative_to(INCOMPLETE).parts
        if not mark.is_file() or parts == ("migration_underway",):
            continue
        try:
            found.add(base64.urlsafe_b64decode("".join(p.removeprefix("@") for p in parts)).decode())
        except (binascii.Error, UnicodeDecodeError):  # not a mark of Snakemake's
            continue
    return frozenset(found)


def status(jobs: dict[str, list[Job]], prices: dict[str, dict[str, float]], pages: bool = False) -> Report:
    """Each study's cells by state, per method; `pages`: the studies' reports draw episode pages
    (`report.episode_pages`), whose missing files are named among the problems."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {**dict.fromkeys(COLUMNS[2:], 0), "cost_usd": 0.0}
    )
    problems = []
    started = incomplete_outputs()
    live = bool(started) and bool(running_snakemake())
    for study, study_jobs in jobs.items():
        found = study_damage(study, study_jobs, pages)  # what Snakemake's next run redoes
        for damage in found.values():
            problems += [f"{path}: {problem} (the next snakemake run redoes it)" for path, problem in damage.items()]
        for job in study_jobs:
            method = job.shared["method"]
            row = rows[(study, method["name"])]
            price = prices.get(method["params"].get("model", ""))
            damage = found.get(job.summary_path, {})
            state, problem = job_state(job, started, live)
            for cell in job.cells():
                row["cells"] += 1
                path = cell_path(cell)
                if any(file in damage for file in cell_files(cell)):
                    row["damaged"] += 1
                    continue
                summary = stored_summary(path, digest(cell))
                if summary is None:
                    row[state or "pending"] += 1
                    continue
                row["done"] += 1
                for key in ("llm_calls", "input_tokens", "output_tokens"):
                    row[key] += summary.get(key, 0)
                if price and "input_tokens" in summary:
                    row["cost_usd"] += token_cost(price, summary["input_tokens"], summary["output_tokens"])
            if problem and state in ("failed", "interrupted", "unfinished"):
                problems.append(problem)
    return Report([{"study": s, "method": m, **counts} for (s, m), counts in rows.items()], problems)


def lock_note() -> str | None:
    """What to say when Snakemake's lock on the working directory is held: by a run still going, or
    left by a run that was killed (every later run is refused until `snakemake --unlock`)."""
    if not _locked():
        return None
    runs = _snakemake_processes_here()
    if runs:
        return f"the working directory is locked by a Snakemake run in progress (process {', '.join(map(str, runs))})"
    return (
        "the working directory is locked, and no Snakemake process runs here: a run was killed. "
        "`snakemake --unlock` frees it; the next run keeps every finished cell"
    )


def running_snakemake() -> list[int]:
    """The Snakemake processes running in this working directory while its lock is held (their jobs
    may be writing results and job records); [] when the lock is free, or was left by a killed run."""
    return _snakemake_processes_here() if _locked() else []


def _locked() -> bool:
    return LOCKS.is_dir() and any(LOCKS.iterdir())


def _snakemake_processes_here() -> list[int]:
    import psutil  # installed with Snakemake

    here = os.getcwd()
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        cmdline = process.info["cmdline"] or []
        if process.info["cwd"] == here and any(Path(part).name == "snakemake" for part in cmdline[:3]):
            found.append(process.info["pid"])
    return found


def spend_table(rows: list[dict[str, Any]]) -> str:
    """The ledger's rows (hivebench.spend.ledger.by_method) as an aligned table."""
    from tabulate import tabulate

    columns = ("study", "method", "calls", "input_tokens", "output_tokens", "usd")
    return tabulate([[row[c] for c in columns] for row in rows], headers=columns, floatfmt=".4f")


def table(rows: list[dict[str, Any]], style: str = "plain") -> str:
    """Rows as an aligned table for people, or tab-separated values for scripts."""
    if style == "tsv":
        cells = [[f"{row[c]:.4f}" if c == "cost_usd" else row[c] for c in COLUMNS] for row in rows]
        return "\n".join("\t".join(map(str, line)) for line in [list(COLUMNS), *cells])
    from tabulate import tabulate

    return tabulate([[row[c] for c in COLUMNS] for row in rows], headers=COLUMNS, floatfmt=".4f")
