"""Damage: what cannot be trusted of a study's finished output (a cell file missing, changed after its
job, not a whole Parquet file or holding another cell, a study table that is not whole, damage
`hivebench verify` recorded, an episode page its report links missing), judged from file times,
framing bytes and footers read as bytes, so Snakemake can ask it on every run; and the job records it
reads.

Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hivebench.ids import digest
from hivebench.paths import TABLES_RECORD, cell_files, study_tables
from hivebench.view.sample import PAGES_DIR, PAGES_INDEX, REPORT_PAGE, VEGA_BUNDLE

if TYPE_CHECKING:
    from hivebench.cells import Job

# The types of what a job record holds (`hivebench episodes` and `hivebench verify` write them).
RECORD_TYPES: dict[str, type] = {
    "state": str,
    "spec": str,
    "host": str,
    "pid": int,
    "exit": int,
    "error": str,
    "damage_summary_mtime_ns": int,
}


def well_formed_record(record: Any) -> bool:
    """Whether a job record read from JSON holds what `job_damage` and `hivebench status` use with
    the types they use it as: seeds a list of integers, hashes a list of strings, damage {path: text}."""

    def all_of(kind: type, values: Any) -> bool:
        return isinstance(values, list) and all(isinstance(v, kind) and not isinstance(v, bool) for v in values)

    if not isinstance(record, dict):
        return False
    if any(
        key in record and (not isinstance(record[key], kind) or isinstance(record[key], bool))
        for key, kind in RECORD_TYPES.items()
    ):
        return False
    damage = record.get("damage", {})
    return (
        all_of(int, record.get("seeds", []))
        and all_of(str, record.get("hashes", []))
        and isinstance(damage, dict)
        and all(isinstance(v, str) for v in damage.values())
    )


def job_record(job: Job) -> dict[str, Any]:
    """The record of a job's last run ({} when none, unreadable, or malformed: a record
    edited by hand is as good as none, rather than an error in every Snakemake run)."""
    try:
        record = json.loads(Path(job.record_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if well_formed_record(record) else {}


def job_damage(job: Job) -> dict[str, str]:
    """What cannot be trusted of a job's finished output, as {path: what is wrong}: a cell
    file missing, changed after the job wrote its summary, not a whole Parquet file, or
    holding another cell (its footer lacks the hash the job wrote), such a summary, and damage
    `hivebench verify` recorded since the summary was written. Judged from file times, Parquet's
    framing bytes and footers read as bytes (no file is parsed), so Snakemake can ask it on every
    run; {} for a job that has not run (no summary)."""
    try:
        written = os.stat(job.summary_path).st_mtime_ns
    except OSError:  # not there (or its folder is not a folder): the job has not finished
        return {}
    record = job_record(job)
    # found by `hivebench verify` in this very summary's output (a well-formed record's is {path: text})
    found = dict(record.get("damage", {})) if record.get("damage_summary_mtime_ns") == written else {}
    if job.summary_path not in found and parquet_problem(job.summary_path) is not None:
        found[job.summary_path] = NOT_WHOLE
    done = record.get("state") == "done"
    ran = set(record.get("seeds", ())) if done else None
    # The hashes the job wrote, if it ran exactly these cells (else the config changed since: the
    # params changed, and the stale cells are not damage).
    hashes: list[str] = []  # in the job's order of cells
    if done and record.get("spec") == digest(job.spec()):
        hashes = record.get("hashes", [])
    for position, cell in enumerate(job.cells()):
        expected = hashes[position] if position < len(hashes) else None
        for index, path in enumerate(cell_files(cell)):
            if path in found:
                continue
            # the cell's own file (first) holds its hash; side tables do not
            problem = parquet_problem(path, expected if index == 0 else None, written)
            if problem == MISSING and ran is not None and cell["seed"] not in ran:
                continue  # a seed the config has just added
            if problem:
                found[path] = problem
    return found


def study_damage(study: str, jobs: Iterable[Job], pages: bool = False) -> dict[str, dict[str, str]]:
    """Damage in a study's finished output, by the output whose job must redo it: a job summary
    ({path: what is wrong} of `job_damage`), a study table (`table_damage`), and, where the study's
    report draws episode pages (`pages`), its pages folder (`pages_damage`). Nothing is changed on disk."""
    found = {job.summary_path: damage for job in jobs if (damage := job_damage(job))}
    found.update({table: {table: problem} for table, problem in table_damage(study).items()})
    if pages:
        found.update(pages_folder_damage(study))
    return found


def pages_folder_damage(study: str) -> dict[str, dict[str, str]]:
    """{the study's pages folder: its `pages_damage`} where it has any (the pages rule redoes it), else {}."""
    damage = pages_damage(study)
    return {PAGES_DIR.format(study=study): damage} if damage else {}


def pages_damage(study: str) -> dict[str, str]:
    """{path: what is wrong} of a study's episode pages once its report page links them: the pages
    folder, its index, a page the index lists or the Vega bundle the pages load missing (deleted by
    hand: the report would keep dead links). Snakemake sees the pages rule's output, a directory(),
    only as a whole, so its files are checked here; {} before the report page is written."""
    if not os.path.exists(REPORT_PAGE.format(study=study)):
        return {}
    folder = PAGES_DIR.format(study=study)
    if not os.path.isdir(folder):
        return {folder: MISSING}
    index = f"{folder}/{PAGES_INDEX}"
    try:
        rows = json.loads(Path(index).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {index: MISSING}
    except (OSError, ValueError):
        rows = None
    if not isinstance(rows, list):
        return {index: "not a readable page index"}
    listed = [row["page"] for row in rows if isinstance(row, dict) and isinstance(row.get("page"), str)]
    found = {path: MISSING for path in (f"{folder}/{page}" for page in listed) if not os.path.isfile(path)}
    if not os.path.isfile(VEGA_BUNDLE):
        found[VEGA_BUNDLE] = MISSING
    return found


def table_damage(study: str) -> dict[str, str]:
    """{table: what is wrong} of a study's tables that are not whole Parquet files, or that
    `hivebench verify` found damaged since they were written (a table not there yet is no damage)."""
    recorded = recorded_table_damage(study)
    found = {}
    for table in study_tables(study):
        if parquet_problem(table) == NOT_WHOLE:
            found[table] = NOT_WHOLE
        elif table in recorded:
            found[table] = recorded[table]
    return found


def recorded_table_damage(study: str) -> dict[str, str]:
    """{table: what is wrong} that `hivebench verify` recorded of a study's tables, for each table
    not written again since."""
    try:
        record = json.loads(Path(TABLES_RECORD.format(study=study)).read_text(encoding="utf-8"))
        return {
            table: entry["problem"]
            for table, entry in record.items()
            if table in study_tables(study)  # (a path edited into the record by hand is none of ours)
            and isinstance(entry["problem"], str)
            and os.path.exists(table)
            and os.stat(table).st_mtime_ns == entry["mtime_ns"]
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


MISSING = "missing"
NOT_WHOLE = "not a whole Parquet file"


def parquet_problem(path: str, holds: str | None = None, written: int | None = None) -> str | None:
    """What is wrong with a Parquet file, judged from its time (changed after `written`), its framing
    bytes and, given `holds` (a cell's hash), whether its footer holds it; None when nothing. A few
    small reads: Snakemake asks this of every cell file on every run."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError:  # unreadable
        return NOT_WHOLE
    try:
        info = os.fstat(fd)
        if written is not None and info.st_mtime_ns > written:
            return "changed after its job finished"
        if info.st_size < 12:  # the two magic numbers and a footer length at least
            return NOT_WHOLE
        tail = os.pread(fd, 8, info.st_size - 8)
        if os.pread(fd, 4, 0) != b"PAR1" or tail[4:] != b"PAR1":
            return NOT_WHOLE
        if holds is None:
            return None
        length = min(int.from_bytes(tail[:4], "little"), info.st_size - 12)
        footer = os.pread(fd, length, info.st_size - 8 - length)
        return None if holds.encode() in footer else "holds another cell (its footer lacks the cell's hash)"
    except OSError:
        return NOT_WHOLE
    finally:
        os.close(fd)
