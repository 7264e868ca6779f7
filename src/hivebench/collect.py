"""Collect a study's block summaries into one table of episodes (reads no trajectories)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hivebench.models import token_cost
from hivebench.store import read_verified, write_atomic


def collect(
    block_summaries: list[str | Path], out: str | Path, prices: dict[str, dict[str, float]] | None = None
) -> pa.Table:
    """Concatenate block summaries, in the order given (the study's order), into `out`.

    `prices` (USD per million input/output tokens, by method name) adds a `cost_usd` column; it is
    applied here, not stored in episodes, so a price change recomputes no episode."""
    if not block_summaries:
        raise ValueError("no block summaries to collect")
    table = pa.concat_tables([read_summary(path) for path in block_summaries], promote_options="default")
    duplicated = len(table) - len(set(table.column("cell_hash").to_pylist()))
    if duplicated:
        raise ValueError(f"{duplicated} cells appear in more than one block summary")
    if prices and "input_tokens" in table.column_names:
        table = table.append_column("cost_usd", pa.array(episode_costs(table, prices), pa.float64()))
    write_atomic(table, out)
    return table


def read_summary(path: str | Path) -> pa.Table:
    try:
        return read_verified(path)
    except (OSError, pa.ArrowException) as exc:
        raise ValueError(
            f"{path}: not a readable block summary ({exc}); `hivebench verify` sets its job to be redone"
        ) from None


def episode_costs(table: pa.Table, prices: dict[str, dict[str, float]]) -> list[float | None]:
    rows = zip(
        table.column("method").to_pylist(),
        table.column("input_tokens").to_pylist(),
        table.column("output_tokens").to_pylist(),
    )
    return [
        None if method not in prices or tokens_in is None else token_cost(prices[method], tokens_in, tokens_out)
        for method, tokens_in, tokens_out in rows
    ]
