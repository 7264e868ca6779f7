"""`hivebench verify`: every finished file read back in full, for damage that leaves file times and
Parquet's framing intact (a disk error, a byte changed in a footer, a file restored with its old
time), which the check Snakemake makes on every run (`Block.damage`) cannot see. What it finds is
recorded (in the block's job record; a study table's beside collect's log), so that `snakemake` plans
the rerun and `hivebench status` counts the damage until the rerun has written those files again;
nothing is removed."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from hivebench.cells import TABLES_RECORD, Block, cell_files, cell_path, digest, study_damage, study_tables
from hivebench.store import read_cell, read_verified, write_json


def deep_damage(block: Block) -> dict[str, str]:
    """`Block.damage`, plus every file of a finished block that does not read back whole (page
    checksums), whose footer does not match its seal, that holds another cell (its hash), or that is a
    side table other than the one its cell file was written with."""
    damage = block.damage()
    if not Path(block.summary_path).exists():
        return damage
    if block.summary_path not in damage:
        try:
            read_verified(block.summary_path)
        except (OSError, pa.ArrowException):
            damage[block.summary_path] = "does not read back whole"
    for cell in block.cells():
        if not any(path in damage for path in cell_files(cell)):
            damage.update(read_cell(cell_path(cell), digest(cell))[1])
    return damage


def table_damage(study: str) -> dict[str, str]:
    """A study's tables that are there and do not read back whole (or that the quick check finds)."""
    damage = {table: problem for found in study_damage(study, []).values() for table, problem in found.items()}
    for table in study_tables(study):
        if table not in damage and os.path.exists(table):
            try:
                read_verified(table)
            except (OSError, pa.ArrowException):
                damage[table] = "does not read back whole"
    return damage


def record_block_damage(block: Block, damage: dict[str, str]) -> None:
    """Keep what was found in the block's job record, for its current summary only: the job's next run
    writes a new record (and summary)."""
    record = block.record()
    record.update(damage=damage, damage_summary_mtime_ns=os.stat(block.summary_path).st_mtime_ns)
    write_json(record, block.record_path)


def record_table_damage(study: str, damage: dict[str, str]) -> None:
    """Keep what was found in a study's tables, each entry for as long as that table is not written again."""
    path = TABLES_RECORD.format(study=study)
    if damage or os.path.exists(path):
        entries = {table: {"problem": problem, "mtime_ns": os.stat(table).st_mtime_ns} for table, problem in damage.items()}
        write_json(entries, path)
