"""Which episodes a study's report draws as pages: the first seeds of each method x task x N (and
replicate), `report.episode_pages` of them. Standard library only: the Snakefile asks at parse time."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hivebench.paths import EPISODES_DIR, cell_path

PAGES_FOLDER = "episodes"  # in a study's report folder: its episode pages, laid out as its cells
PAGES_DIR = "reports/{study}/" + PAGES_FOLDER
PAGES_INDEX = "index.json"  # in PAGES_DIR: each page with its cell's fields
REPORT_PAGE = "reports/{study}/index.html"  # the study's page, which links the pages of PAGES_INDEX
VEGA_BUNDLE = "reports/vega.js"  # the Vega bundle every study's pages load


def sampled(cells: Iterable[dict[str, Any]], per_group: int) -> list[dict[str, Any]]:
    """The cells with the `per_group` smallest seeds of each (suite, task, method, replicate, N), in
    the order given."""
    seeds: dict[tuple[Any, ...], list[int]] = {}
    cells = list(cells)
    for cell in cells:
        seeds.setdefault(group(cell), []).append(int(cell["seed"]))
    kept = {key: set(sorted(found)[:per_group]) for key, found in seeds.items()}
    return [cell for cell in cells if int(cell["seed"]) in kept[group(cell)]]


def group(cell: dict[str, Any]) -> tuple[Any, ...]:
    return (cell["suite"], cell["task"]["name"], cell["method"]["name"], cell.get("replicate"), cell["population"])


def page_of(cell: dict[str, Any]) -> str:
    """A cell's page inside its study's pages folder, laid out as its file under its study's folder
    of results/episodes: <suite>/<task>/<method>/n<N>/s<seed>.html."""
    study_folder = EPISODES_DIR.split("{suite}")[0].format(study=cell["study"])
    return cell_path(cell).removeprefix(study_folder).removesuffix(".parquet") + ".html"


def read_index(folder: str | Path) -> list[dict[str, Any]]:
    """The pages a folder holds, as write_pages listed them (none where it has no index)."""
    index = Path(folder) / PAGES_INDEX
    return json.loads(index.read_text(encoding="utf-8")) if index.exists() else []
