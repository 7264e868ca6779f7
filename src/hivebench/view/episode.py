"""One cell's files as the viewer reads them: the per-agent table, its side tables, the resolved cell
and summary from the file metadata, and the calls in its response cache."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from hivebench.agents.mixed import members_of
from hivebench.models.cache import cache_records
from hivebench.paths import CELL_FILE, calls_path, cell_path, side_path
from hivebench.store import CELL_KEY, SUMMARY_KEY, TABLES_KEY, read_inline
from hivebench.view import EpisodeError


@dataclass(frozen=True)
class Episode:
    path: Path  # results/episodes/<study>/<suite>/<task>/<method>/n<N>/s<seed>.parquet
    cell: dict[str, Any]  # the resolved cell
    summary: dict[str, Any]
    agents: pd.DataFrame  # one row per agent per state: step, agent, then the suite's and method's columns
    tables: dict[str, pd.DataFrame]  # side tables by name (messages, traces, ...)
    calls: dict[str, dict[str, Any]]  # response-cache key -> {messages, result}

    @property
    def n(self) -> int:
        return int(self.cell["population"])

    @property
    def steps(self) -> int:
        """The last state's index."""
        return int(self.agents["step"].max()) if len(self.agents) else 0


def cell_file(target: str) -> Path:
    """The cell file a `hivebench view` argument names: a path to it, with or without its folder
    results/episodes/ (study/suite/task/method/n<N>/s<seed>), with or without .parquet."""
    text = target.removesuffix(".parquet")
    root = CELL_FILE.split("{", 1)[0]  # results/episodes/
    for candidate in (Path(text + ".parquet"), Path(root + text + ".parquet")):
        if candidate.is_file():
            return candidate
    raise EpisodeError(
        f"{target}: no such cell file (give results/episodes/<study>/<suite>/<task>/<method>/n<N>/s<seed>.parquet,"
        " or the part after results/episodes/)"
    )


def page_path(path: Path) -> Path:
    """Where `hivebench view` writes a cell's page unless told: beside its file, s<seed>.html."""
    return path.with_suffix(".html")


def read_calls(path: str | Path) -> dict[str, dict[str, Any]]:
    """A response cache's records by key: the chat asked (`messages`) and the result."""
    return {
        record["key"]: {"messages": record.get("messages", []), "result": record["result"]}
        for record, _ in cache_records(path)
    }


def load(target: str | Path) -> Episode:
    path = cell_file(str(target))
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's errors for a file that is not Parquet are of several kinds
        raise EpisodeError(f"{path}: not a readable Parquet file ({exc})") from None
    metadata = table.schema.metadata or {}
    if CELL_KEY not in metadata:
        raise EpisodeError(f"{path}: not a cell file (no resolved cell in its metadata)")
    cell = json.loads(metadata[CELL_KEY])
    names = json.loads(metadata.get(TABLES_KEY, b"{}"))
    tables = {name: pd.read_parquet(side_path(path, name)) for name in names}
    tables |= {name: table.to_pandas() for name, table in read_inline(metadata).items()}
    return Episode(
        path=path,
        cell=cell,
        summary=json.loads(metadata.get(SUMMARY_KEY, b"{}")),
        agents=table.to_pandas(),
        tables=tables,
        calls=cell_calls(path, cell),
    )


def cell_calls(path: Path, cell: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The calls in a cell's response cache (beside its file), and in its members' where it is a mixed
    population (each in its member's folder: hivebench.agents.mixed.member_cell)."""
    calls = read_calls(path.with_name(Path(calls_path(cell)).name))
    own = cell_path(cell)
    root = str(path)[: -len(own)] if str(path).endswith(own) else None  # where results/ lies
    for member in members_of(cell) if root is not None else []:
        calls |= read_calls(root + calls_path(member))
    return calls
