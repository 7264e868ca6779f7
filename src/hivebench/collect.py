"""Collect a study's block summaries into one table of episodes (reads no trajectories)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.runtime import write_atomic


def collect(block_summaries: list[str | Path], out: str | Path) -> pa.Table:
    """Concatenate block summaries, in the order given (the study's order), into `out`."""
    if not block_summaries:
        raise ValueError("no block summaries to collect")
    table = pa.concat_tables([pq.read_table(path) for path in block_summaries], promote_options="default")
    duplicated = len(table) - len(set(table.column("cell_hash").to_pylist()))
    if duplicated:
        raise ValueError(f"{duplicated} cells appear in more than one block summary")
    write_atomic(table, out)
    return table
