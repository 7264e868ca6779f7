"""A folder of episode pages (a study's reports/<study>/episodes/): one page per cell, laid out as the
cells are under results/episodes/<study>/, sharing one copy of the Vega bundle (the workflow's
reports/vega.js, shared by every study), and an index of them that the study's report page links."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hivebench.view.bundle import vega_bundle
from hivebench.view.episode import load
from hivebench.view.page import render
from hivebench.view.sample import PAGES_INDEX, page_of


def write_bundle(path: str | Path) -> Path:
    """The Vega bundle as a file pages can share."""
    bundle = Path(path)
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text(vega_bundle(), encoding="utf-8")
    return bundle


def write_pages(cells: Iterable[str], folder: str | Path, bundle: str | Path) -> list[dict[str, Any]]:
    """Write a page for each cell file into `folder`, each loading the bundle file (write_bundle), and
    the index; the index's rows."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for target in cells:
        episode = load(target)
        page = page_of(episode.cell)
        render(episode, out / page, Path(bundle))
        cell = episode.cell
        fields = {
            "suite": cell["suite"],
            "task": cell["task"]["name"],
            "method": cell["method"]["name"],
            "replicate": cell.get("replicate"),
            "population": cell["population"],
            "seed": cell["seed"],
        }
        rows.append({**fields, "page": page})
    (out / PAGES_INDEX).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return rows
