"""A job: the cells of its blocks that are not on disk already, played in lockstep groups and written
one file each, and the job's summary that collecting a study reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from hivebench.cells import block_specs, make_cell, split_spec
from hivebench.config import LOCKSTEP_AGENTS
from hivebench.engine.loop import play_block
from hivebench.engine.writer import write_episode
from hivebench.ids import digest
from hivebench.paths import cell_files, cell_path, table_fields
from hivebench.perturb import axis
from hivebench.spend.meter import current
from hivebench.store import reap_temps, verified_summary, write_atomic


def summary_row(cell: dict[str, Any], cell_hash: str, summary: dict[str, Any]) -> dict[str, Any]:
    """A cell's row of its study's episodes table: its fields, its perturbation's axis and strength
    where it has one (the report's robustness curves), its summary."""
    row = {**table_fields(cell), "seed": cell["seed"], "cell_hash": cell_hash}
    if "perturbation" in cell:
        placed = axis(cell["perturbation"])
        row["perturbation_axis"], row["strength"] = (placed[0], float(placed[1])) if placed else ("", None)
    return {**row, **summary}


def run_job(spec: dict[str, Any], summary_path: str | Path) -> int:
    """Run every cell of a job's blocks that is not already on disk, whole and with the same hash.

    Each cell gets its own Parquet file; the job's summary holds one row per cell, so collecting a
    study never opens a trajectory. Returns how many cells were computed.
    """
    tables, computed = [], 0
    for block in block_specs(spec):
        rows: list[dict[str, Any]] = []
        computed += play_block_cells(block, rows)
        tables.append(pa.Table.from_pylist(rows))  # a table per block: tasks summarise in their own columns
    write_atomic(pa.concat_tables(tables, promote_options="default"), summary_path)
    return computed


def play_block_cells(spec: dict[str, Any], rows: list[dict[str, Any]]) -> int:
    """Play a block's missing cells (its seeds of one task), adding each cell's summary row to
    `rows`; how many were computed."""
    shared, seeds = split_spec(spec)
    cells = [make_cell(shared, seed) for seed in seeds]
    for cell in cells:  # what killed runs of this block left, also beside cells that are kept
        for path in cell_files(cell):
            reap_temps(path)
    summaries = {seed: verified_summary(cell_path(cell), digest(cell)) for seed, cell in zip(seeds, cells)}
    missing = [cell for cell in cells if summaries[cell["seed"]] is None]
    # The missing cells are played together, up to LOCKSTEP_AGENTS agents at once; each group's cells
    # are written as soon as it ends (a killed job keeps them).
    size = max(1, LOCKSTEP_AGENTS // shared["population"])
    meter = current()
    if meter is not None:
        meter.progress.cells += len(missing)
    for group in (missing[start : start + size] for start in range(0, len(missing), size)):
        for cell, record in zip(group, play_block(group)):
            summaries[cell["seed"]] = write_episode(cell, cell_path(cell), record)
            if meter is not None:
                meter.progress.cells_done += 1
    rows += [summary_row(cell, digest(cell), summaries[cell["seed"]]) for cell in cells]
    return len(missing)
