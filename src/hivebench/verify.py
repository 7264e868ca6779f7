"""`hivebench verify`: every finished file read back in full, for damage that leaves file times and
Parquet's framing intact (a disk error, a byte changed in a footer, a file restored with its old
time), which the check Snakemake makes on every run (`damage.job_damage`) cannot see. What it finds is
recorded (in the job's record; a study table's beside collect's log), so that `snakemake` plans
the rerun and `hivebench status` counts the damage until the rerun has written those files again;
nothing is removed."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from hivebench.cells import Job
from hivebench.damage import job_damage, job_record, table_damage
from hivebench.ids import digest
from hivebench.paths import TABLES_RECORD, cell_files, cell_path, study_tables
from hivebench.store import read_cell, read_verified, write_json


def mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def deep_damage(job: Job) -> dict[str, str]:
    """`job_damage`, plus every file of a finished job that does not read back whole (page
    checksums), whose footer does not match its seal, that holds another cell (its hash), or that is a
    side table other than the one its cell file was written with."""
    damage = job_damage(job)
    if not Path(job.summary_path).exists():
        return damage
    if job.summary_path not in damage:
        try:
            read_verified(job.summary_path)
        except (OSError, pa.ArrowException):
            damage[job.summary_path] = "does not read back whole"
    for cell in job.cells():
        if not any(path in damage for path in cell_files(cell)):
            damage.update(read_cell(cell_path(cell), digest(cell))[1])
    return damage


def deep_table_damage(study: str) -> dict[str, str]:
    """`table_damage`, plus every study table that is there and does not read back whole."""
    damage = table_damage(study)
    for table in study_tables(study):
        if table not in damage and os.path.exists(table):
            try:
                read_verified(table)
            except (OSError, pa.ArrowException):
                damage[table] = "does not read back whole"
    return damage


def verify_job(job: Job) -> tuple[dict[str, str], bool]:
    """(`deep_damage` of a finished job, whether it holds for the job's summary now): damage is
    recorded in the job record only if the summary is the one there before its files were read (a
    job that wrote it again meanwhile wrote new files, which this read did not see)."""
    before = mtime_ns(job.summary_path)
    damage = deep_damage(job)
    if before is None or mtime_ns(job.summary_path) != before:
        return damage, False
    if damage:
        record_job_damage(job, damage, before)
    return damage, True


def verify_tables(study: str) -> tuple[dict[str, str], list[str]]:
    """(`deep_table_damage` of a study's tables, the tables written again while they were read): what
    was found is recorded for the tables that were not."""
    before = {table: mtime_ns(table) for table in study_tables(study)}
    damage = deep_table_damage(study)
    changed = [table for table, mtime in before.items() if mtime_ns(table) != mtime]
    record_table_damage(study, {t: p for t, p in damage.items() if t not in changed}, before)
    return damage, changed


def record_job_damage(job: Job, damage: dict[str, str], summary_mtime_ns: int) -> None:
    """Keep what was found in the job's record, for the summary that was there when its files
    were read (`summary_mtime_ns`) only: the job's next run writes a new record (and summary)."""
    record = job_record(job)
    record.update(damage=damage, damage_summary_mtime_ns=summary_mtime_ns)
    write_json(record, job.record_path)


def record_table_damage(study: str, damage: dict[str, str], mtimes: dict[str, int | None]) -> None:
    """Keep what was found in a study's tables, each entry for as long as that table is not written
    again since it was read (`mtimes`: their times then; a damaged table was there)."""
    path = TABLES_RECORD.format(study=study)
    if damage or os.path.exists(path):
        write_json({table: {"problem": problem, "mtime_ns": mtimes[table]} for table, problem in damage.items()}, path)
