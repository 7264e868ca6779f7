"""Reports. This module stays import-light: the Snakefile reads the lists of report files from it.

A study's report folder holds the files every study gets (scores, contrasts, index.html) and one
subfolder per suite the study runs, with that suite's section (`Suite.report_files` and the HTML
fragment `section.html` that index.html embeds), and one for each section across the suites that the
study has (the Waggle runtime's, the Waggle matrix's, robustness under perturbations:
CROSS_SECTION_FILES).

The captions of the csv tables and png charts (`snakemake --report`) lie beside the code that writes
them: the common files' in this package's captions/, a suite's in its package's captions/ (a section
across the suites in its CROSS_SECTION_PACKAGES's), each <file stem>.rst.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

COMMON_FILES = (
    "scores.csv",
    "scores.md",
    "scores.tex",
    "scaling.html",
    "scaling.png",
    "contrasts.csv",
    "contrasts.md",
    "contrasts.tex",
    "forest.html",
    "forest.png",
    "index.html",
)
SECTION_FILE = "section.html"
# Every report page's style sheet (a study's page, the landing page).
STYLE = """body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-bottom: 1rem; }
th, td { padding: 0.3rem 0.7rem; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
table.paper thead th { text-align: center; }
table.paper tbody th { text-align: left; }"""
# Two sections run across a study's suites, each in its subfolder, their captions in WAGGLE_PACKAGE's:
# the Waggle runtime's (its ladder, modes, telemetry and intervention: hivebench.waggle.study.report)
# where the study runs a method on the runtime, and the Waggle matrix's comparisons across populations
# and horizons, over every method (retention, horizon, the key effects: hivebench.waggle.study.matrix)
# where one of them has a row.
WAGGLE_SECTION = "waggle"
MATRIX_SECTION = "matrix"
WAGGLE_PACKAGE = "hivebench.waggle.study"
WAGGLE_TABLES = ("ladder", "modes", "counters", "intervention")
MATRIX_TABLES = ("retention", "horizon", "effects")
# The robustness section (hivebench.perturb.report), where a study has perturbed arms: a table and its curves.
ROBUSTNESS_SECTION = "robustness"
ROBUSTNESS_TABLE = "robustness"
MEMBERS_TABLE = "members"  # mixed populations' per-agent metrics by member
CURVES_CHART = "curves"
CROSS_SECTION_FILES = {
    name: tuple(f"{stem}.{suffix}" for stem in tables for suffix in ("csv", "md", "tex")) + charts
    for name, tables, charts in (
        (WAGGLE_SECTION, WAGGLE_TABLES, ()),
        (MATRIX_SECTION, MATRIX_TABLES, ()),
        (ROBUSTNESS_SECTION, (ROBUSTNESS_TABLE, MEMBERS_TABLE), (f"{CURVES_CHART}.html", f"{CURVES_CHART}.png")),
    )
}
CROSS_SECTION_PACKAGES = {
    WAGGLE_SECTION: WAGGLE_PACKAGE,
    MATRIX_SECTION: WAGGLE_PACKAGE,
    ROBUSTNESS_SECTION: "hivebench.perturb",
}


@dataclass(frozen=True)
class Section:
    """What a suite's report section is given: `Suite.report` names a function that writes the
    section's files (`Suite.report_files`) into `out` and returns its HTML."""

    episodes: Any  # the suite's rows of the study's episodes table (a pandas DataFrame)
    out: Path  # reports/<study>/<suite>
    prefix: str  # what the section's links start with, from the study's page
    resamples: int  # the bootstrap's settings
    confidence: float
    seed: int
    published: dict[str, Any]  # the suite's published tables, from the anchors file
    anchors: Any  # the frozen anchors (hivebench.anchors.Anchors)


def section_files(suite: str, files: tuple[str, ...]) -> list[str]:
    """A suite's section files, as paths inside a study's report folder."""
    return [f"{suite}/{name}" for name in (*files, SECTION_FILE)]


def caption_file(package: str, name: str) -> Path:
    """The caption of report file `name` (scores.csv, table1.png) written by the code of `package`
    (hivebench.report for the common files, a suite's package for its section's): captions/<stem>.rst
    in that package, as an absolute path."""
    return Path(str(resources.files(package).joinpath("captions", f"{name.rsplit('.', 1)[0]}.rst")))


def section_cells(suite: Any, blocks: Iterable[Any]) -> list[str]:
    """The cell files (results/episodes/.../s<seed>.parquet) the report section of `suite` (a Suite)
    reads in a study of these job blocks (`Suite.report_cells`), in the order it names them."""
    if suite.report_cells is None:
        return []
    from hivebench.paths import cell_path

    cells = [cell for block in blocks if block.shared["suite"] == suite.name for cell in block.cells()]
    return [cell_path(cell) for cell in suite.report_cells(cells)]
