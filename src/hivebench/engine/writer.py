"""An episode written as its cell's files: the per-agent table, its side tables, and the resolved cell
and summary in the file metadata, sealed (hivebench.store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from hivebench import __version__
from hivebench.engine.api import EpisodeRecord
from hivebench.engine.loop import play
from hivebench.ids import canonical_json, digest
from hivebench.paths import inline_tables, side_path
from hivebench.store import (
    CELL_KEY,
    HASH_KEY,
    INLINE_KEY,
    SUMMARY_KEY,
    TABLES_KEY,
    VERSION_KEY,
    file_digest,
    inline_text,
    sealed,
    stored,
    write_atomic,
)


def run_episode(cell: dict[str, Any]) -> tuple[pa.Table, dict[str, Any]]:
    """Play one cell; its per-agent table and its summary."""
    record = play(cell)
    return stored(pa.table(record.agents)), record.summary


def write_episode(cell: dict[str, Any], path: str | Path, record: EpisodeRecord | None = None) -> dict[str, Any]:
    """Write a cell's Parquet (playing it unless its `record` is given), with the resolved cell and
    summary in the file metadata, sealed (`store.seal`).

    Side tables go first, each to its own file beside `path`; the per-agent file goes last and holds
    their content hashes, so a cell is there (and whole) exactly when that file is. The cell's inline
    tables (`paths.inline_tables`) go in that file's metadata (`store.inline_text`)."""
    record = record or play(cell)
    inline = inline_tables(cell)
    hashes = {}
    for name in (name for name in record.tables if name not in inline):
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
    if inline:
        metadata[INLINE_KEY] = inline_text({name: record.table(name) for name in inline})
    table = stored(pa.table(record.agents))
    write_atomic(table, path, sealed(metadata, table.schema))
    return record.summary
