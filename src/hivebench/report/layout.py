"""Tables laid out as the papers print them: a row per task, a column group per population (or graph
family), the methods side by side in each group, each cell an estimate with its interval on one line;
and the columns that hold nothing for a study left out of what a page shows."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd


def interval_text(mean: float, lo: float, hi: float, digits: int, sd: float | None = None) -> str:
    """ "m [lo, hi]" to a fixed precision, "m ± sd [lo, hi]" with a sample s.d. (the papers' "mean ±
    sample s.d." beside the interval); "" for a missing estimate, "m" without an interval."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    spread = "" if sd is None or math.isnan(sd) else f" ± {sd:.{digits}f}"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return f"{mean:.{digits}f}{spread}"
    return f"{mean:.{digits}f}{spread} [{lo:.{digits}f}, {hi:.{digits}f}]"


def paper_layout(
    table: pd.DataFrame, rows: str, groups: str, methods: str, cell: str, label: Callable[[Any], str] = str
) -> pd.DataFrame:
    """`table` (one row per row key x group x method, its text in `cell`) pivoted wide: one row per value
    of `rows`, a column group per value of `groups` (named by `label`), the methods side by side in each,
    every order as first seen in `table`; "" where a method did not play a group."""
    order = {key: list(pd.unique(table[key])) for key in (rows, groups, methods)}
    wide = table.pivot_table(index=rows, columns=[groups, methods], values=cell, aggfunc="first", sort=False)
    columns = [(g, m) for g in order[groups] for m in order[methods] if (g, m) in wide.columns]
    wide = wide.reindex(index=order[rows], columns=pd.MultiIndex.from_tuples(columns)).fillna("")
    wide.columns = pd.MultiIndex.from_tuples([(label(g), m) for g, m in columns], names=[None, None])
    wide.index.name = None
    return wide


def filled(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns that hold something: a column of missing values or empty texts is left out."""
    empty = frame.isna() | frame.astype(str).eq("")
    return frame.loc[:, ~empty.all()]


def layout_html(wide: pd.DataFrame) -> str:
    """A paper-layout table: the column groups over their methods, the rows' names first."""
    return wide.to_html(escape=True, border=0, classes="data paper", na_rep="")


def rules_of(episodes: pd.DataFrame) -> pd.Series:
    """Each episode's rules (`compat` in its summary: the reference's, or the reference's settings it
    uses; hivebench's where the summary has none), so a report never pools two rules in one row."""
    if "compat" not in episodes:
        return pd.Series("hivebench", index=episodes.index)
    return episodes["compat"].fillna("hivebench")


def ruled(label: str, rules: str) -> str:
    """A row's label with its rules added where they are not hivebench's ("pursuit (reference)")."""
    return label if rules == "hivebench" else f"{label} ({rules})"
