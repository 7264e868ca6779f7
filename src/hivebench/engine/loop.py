"""The one synchronous round loop of every suite, the episode writer, and job blocks of cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from hivebench import __version__
from hivebench.cells import calls_path, canonical_json, cell_files, cell_path, digest, make_cell, path_fields, side_path, split_spec
from hivebench.engine.api import EpisodeRecord
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.seeding import stream
from hivebench.store import (
    CELL_KEY, HASH_KEY, SUMMARY_KEY, TABLES_KEY, VERSION_KEY,
    file_digest, reap_temps, verified_summary, write_atomic,
)  # fmt: skip
from hivebench.suite import load


def make_policy(cell: dict[str, Any]) -> Any:
    """The cell's method as it runs the cell's suite, with its own random stream; a method that calls
    models also gets the cell's response cache, one that reads text the suite's text view."""
    impl = METHODS[cell["method"]["kind"]].impl(cell["suite"])
    extra: dict[str, Any] = {}
    if impl.calls_models:
        extra["cache_path"] = calls_path(cell)
    if impl.reads_text:
        extra["view"] = load(SUITE_OBJECTS[cell["suite"]].text_view)()
    return impl.load()(cell["method"]["params"], stream(cell["seed"], "policy"), **extra)


def play(cell: dict[str, Any]) -> EpisodeRecord:
    """Play one cell to the end: observe, decide for every agent at once, apply, until the horizon."""
    task = task_kind(cell["task"]["kind"]).load()(cell["task"]["params"], cell["population"])
    task.reset(cell["seed"])
    policy = make_policy(cell)
    while not task.done:
        task.step(policy.decide(task.observe()))
    record = task.record()
    record.agents.update(policy.columns() if hasattr(policy, "columns") else {})
    record.summary.update(policy.summary() if hasattr(policy, "summary") else {})
    return record


def run_episode(cell: dict[str, Any]) -> tuple[pa.Table, dict[str, Any]]:
    """Play one cell; its per-agent table and its summary."""
    record = play(cell)
    return pa.table(record.agents), record.summary


def write_episode(cell: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Run a cell and write its Parquet, with the resolved cell and summary in the file metadata.

    Side tables go first, each to its own file beside `path`; the per-agent file goes last and holds
    their content hashes, so a cell is there (and whole) exactly when that file is."""
    record = play(cell)
    hashes = {}
    for name, table in record.tables.items():
        side = side_path(path, name)
        write_atomic(table, side)
        hashes[name] = file_digest(side)
    write_atomic(
        pa.table(record.agents),
        path,
        {
            CELL_KEY: canonical_json(cell).encode(),
            HASH_KEY: digest(cell).encode(),
            SUMMARY_KEY: json.dumps(record.summary).encode(),
            TABLES_KEY: json.dumps(hashes).encode(),
            VERSION_KEY: __version__.encode(),
        },
    )
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
    rows, computed = [], 0
    for cell in cells:
        cell_hash = digest(cell)
        path = cell_path(cell)
        summary = verified_summary(path, cell_hash)
        if summary is None:
            summary = write_episode(cell, path)
            computed += 1
        rows.append(summary_row(cell, cell_hash, summary))
    write_atomic(pa.Table.from_pylist(rows), summary_path)
    return computed
