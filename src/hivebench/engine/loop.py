"""The one synchronous round loop of every suite, the episode writer, and job blocks of cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from hivebench import __version__
from hivebench.cells import calls_path, cell_files, cell_path, make_cell, path_fields, side_path, split_spec
from hivebench.config import LOCKSTEP_AGENTS
from hivebench.engine.api import EpisodeRecord
from hivebench.ids import canonical_json, digest
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.seeding import Streams
from hivebench.store import (
    CELL_KEY, HASH_KEY, SUMMARY_KEY, TABLES_KEY, VERSION_KEY,
    file_digest, reap_temps, sealed, verified_summary, write_atomic,
)  # fmt: skip
from hivebench.suite import load


def make_policy(cells: list[dict[str, Any]]) -> Any:
    """The cells' method as it runs their suite, with one random stream per cell; a method that calls
    models also gets each cell's response cache, one that reads text the suite's text view."""
    first = cells[0]
    impl = METHODS[first["method"]["kind"]].impl(first["suite"])
    extra: dict[str, Any] = {}
    if impl.calls_models:
        extra["cache_paths"] = [calls_path(cell) for cell in cells]
    if impl.reads_text:
        extra["view"] = load(SUITE_OBJECTS[first["suite"]].text_view)()
    return impl.load()(first["method"]["params"], Streams([cell["seed"] for cell in cells], "policy"), **extra)


def play_block(cells: list[dict[str, Any]]) -> list[EpisodeRecord]:
    """Play cells that differ only in their seed to the end, in lockstep: each round, observe every
    agent of every episode, decide for all at once, apply. One record per cell."""
    first = cells[0]
    task = task_kind(first["task"]["kind"]).load()(first["task"]["params"], first["population"])
    task.reset([cell["seed"] for cell in cells])
    policy = make_policy(cells)
    while not task.done:
        task.step(policy.decide(task.observe()))
    records = task.record()
    for episode, record in enumerate(records):
        record.agents.update(policy.columns(episode) if hasattr(policy, "columns") else {})
        record.summary.update(policy.summary(episode) if hasattr(policy, "summary") else {})
    return records


def play(cell: dict[str, Any]) -> EpisodeRecord:
    """Play one cell to the end."""
    return play_block([cell])[0]


def run_episode(cell: dict[str, Any]) -> tuple[pa.Table, dict[str, Any]]:
    """Play one cell; its per-agent table and its summary."""
    record = play(cell)
    return stored(pa.table(record.agents)), record.summary


def stored(table: pa.Table) -> pa.Table:
    """A record's table as the store holds it: dictionary-encoded columns (texts a block shares, such
    as names or classical messages) written out as their values."""
    fields = [pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in table.schema]
    return table.cast(pa.schema(fields))


def write_episode(cell: dict[str, Any], path: str | Path, record: EpisodeRecord | None = None) -> dict[str, Any]:
    """Write a cell's Parquet (playing it unless its `record` is given), with the resolved cell and
    summary in the file metadata, sealed (`store.seal`).

    Side tables go first, each to its own file beside `path`; the per-agent file goes last and holds
    their content hashes, so a cell is there (and whole) exactly when that file is."""
    record = record or play(cell)
    hashes = {}
    for name in record.tables:
        side = side_path(path, name)
        write_atomic(stored(record.table(name)), side)
        hashes[name] = file_digest(side)
    metadata = {
        CELL_KEY: canonical_json(cell).encode(),
        HASH_KEY: digest(cell).encode(),
        SUMMARY_KEY: json.dumps(record.summary).encode(),
        TABLES_KEY: json.dumps(hashes).encode(),
        VERSION_KEY: __version__.encode(),
    }
    table = stored(pa.table(record.agents))
    write_atomic(table, path, sealed(metadata, table.schema))
    return record.summary


def summary_row(cell: dict[str, Any], cell_hash: str, summary: dict[str, Any]) -> dict[str, Any]:
    return {**path_fields(cell), "seed": cell["seed"], "cell_hash": cell_hash, **summary}


def run_block(spec: dict[str, Any], summary_path: str | Path) -> int:
    """Run every cell of a job block that is not already on disk, whole and with the same hash.

    Each cell gets its own Parquet file next to the block summary; the block summary holds one row per
    cell, so collecting a study never opens a trajectory. Returns how many cells were computed.
    """
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
    for group in (missing[start : start + size] for start in range(0, len(missing), size)):
        for cell, record in zip(group, play_block(group)):
            summaries[cell["seed"]] = write_episode(cell, cell_path(cell), record)
    rows = [summary_row(cell, digest(cell), summaries[cell["seed"]]) for cell in cells]
    write_atomic(pa.Table.from_pylist(rows), summary_path)
    return len(missing)
