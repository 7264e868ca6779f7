"""The synchronous round loop, the episode Parquet writer, and job blocks of cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench import __version__
from hivebench.cells import calls_path, canonical_json, cell_path, digest, make_cell, path_fields, split_spec
from hivebench.registry import METHODS, TASKS
from hivebench.seeding import stream
from hivebench.store import CELL_KEY, HASH_KEY, SUMMARY_KEY, VERSION_KEY, reap_temps, verified_summary, write_atomic


def graph_label(cell: dict[str, Any]) -> str:
    """The column a table groups by: C5 for a 5-cycle, else the task's name."""
    if cell["task"]["params"]["graph"] == "cycle":
        return f"C{cell['population']}"
    return cell["task"]["name"]


def run_episode(cell: dict[str, Any]) -> tuple[pa.Table, dict[str, Any]]:
    """Play one cell to the end; return its per-agent-per-step table and its summary."""
    task = TASKS[cell["task"]["kind"]].load()(cell["task"]["params"], cell["population"])
    task.reset(stream(cell["seed"], "init"))
    method_class = METHODS[cell["method"]["kind"]].load()
    extra = {"cache_path": calls_path(cell)} if getattr(method_class, "uses_models", False) else {}
    method = method_class(cell["method"]["params"], stream(cell["seed"], "policy"), **extra)
    while not task.done:
        task.step(method.decide(task.views()))

    states, n = task.trajectory.shape
    colors = task.trajectory
    changed = np.zeros_like(colors, dtype=bool)
    changed[1:] = colors[1:] != colors[:-1]
    table = pa.table(
        {
            "step": np.repeat(np.arange(states, dtype=np.int32), n),
            "agent": np.tile(np.arange(n, dtype=np.int32), states),
            "color": colors.ravel().astype(np.int16),
            "conflicts": task.agent_conflicts().ravel().astype(np.int16),
            "changed": changed.ravel(),
            **(method.columns() if hasattr(method, "columns") else {}),
        }
    )
    usage = method.summary() if hasattr(method, "summary") else {}
    return table, {"graph": graph_label(cell), **task.metrics(), **usage}


def write_episode(cell: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Run a cell and write its Parquet, with the resolved cell and summary in the file metadata."""
    table, summary = run_episode(cell)
    write_atomic(
        table,
        path,
        {
            CELL_KEY: canonical_json(cell).encode(),
            HASH_KEY: digest(cell).encode(),
            SUMMARY_KEY: json.dumps(summary).encode(),
            VERSION_KEY: __version__.encode(),
        },
    )
    return summary


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
        reap_temps(cell_path(cell))
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
