"""Frozen normalisation anchors (config/anchors.yaml): raw score / anchor = task-normalised score.

Standard library and PyYAML only: the config check reads the anchors file at parse time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.config import ConfigError, read_yaml


class Anchors(dict[tuple[str, str], tuple[float, int, str]]):
    """(suite, task) -> (anchor value, the population it was frozen at, provenance): an anchor is frozen
    at one population and applies at every population, so a task's normalised score stays comparable
    as N grows. `source`: the file they were read from; `rules`: per suite, the rules its anchors were
    measured under (a report's rules label: "reference", "hivebench", or the settings), where the
    file says."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source
        self.rules: dict[str, str] = {}


class AnchorError(KeyError):
    """A normalised aggregate needs an anchor that the anchors file does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_anchors(path: str | Path) -> Anchors:
    """(suite, task) -> (anchor value, the population it was frozen at, provenance); ConfigError naming
    the file and the entry for anything else than suite -> task -> N -> {value: a positive number,
    provenance: text}, one N per task."""
    data = read_yaml(path)
    if data is None:
        return Anchors(str(path))
    if not isinstance(data, dict):
        raise ConfigError(str(path), ["the top level must map suites to tasks to populations"])
    anchors, problems = Anchors(str(path)), list(_published_problems(data.get(PUBLISHED)))
    for suite, tasks in data.items():
        if suite == PUBLISHED:
            continue
        if not isinstance(tasks, dict):
            problems.append(f"{suite}: must map task names to populations")
            continue
        if RULES in tasks:
            rules = tasks[RULES]
            if isinstance(rules, str) and rules.strip():
                anchors.rules[str(suite)] = rules
            else:
                problems.append(
                    f"{suite}.{RULES}: must name the rules the anchors were measured under (reference, hivebench, "
                    "or the settings as a report labels them)"
                )
        for task, populations in tasks.items():
            if task == RULES:
                continue
            if not isinstance(populations, dict):
                problems.append(f"{suite}.{task}: must map populations to {{value, provenance}}")
                continue
            if len(populations) > 1:
                problems.append(
                    f"{suite}.{task}: one anchor per task, frozen at one population and applied at every one; "
                    f"got N = {', '.join(map(str, populations))}"
                )
                continue
            for population, entry in populations.items():
                where = f"{suite}.{task}.{population}"
                if not _population(population):
                    problems.append(f"{where}: the population must be a positive integer")
                elif not isinstance(entry, dict) or set(entry) != {"value", "provenance"}:
                    problems.append(f"{where}: needs value and provenance, and nothing else")
                elif not _positive_number(entry["value"]):
                    problems.append(
                        f"{where}.value: must be a positive finite number"
                    )  # the value is not quoted: it may be anything
                elif not isinstance(entry["provenance"], str) or not entry["provenance"].strip():
                    problems.append(f"{where}.provenance: must say where the anchor comes from")
                else:
                    anchors[(str(suite), str(task))] = (float(entry["value"]), population, entry["provenance"])
    if problems:
        raise ConfigError(str(path), problems)
    return anchors


PUBLISHED = "published"  # the key of published tables, shown beside hivebench's own
RULES = "rules"  # a suite's key: the rules its anchors were measured under


def _published_problems(published: object) -> Iterator[str]:
    """published -> suite -> table -> {provenance, columns, rows: label -> group -> [values]}; a
    suite's `population_tables` have populations (or "overall") as their groups."""
    from hivebench.registry import SUITE_OBJECTS

    if published is None:
        return
    if not isinstance(published, dict):
        yield f"{PUBLISHED}: must map suites to tables"
        return
    for suite, tables in published.items():
        for name, table in tables.items() if isinstance(tables, dict) else [(None, None)]:
            where = f"{PUBLISHED}.{suite}.{name}"
            if not isinstance(table, dict) or set(table) != {"provenance", "columns", "rows"}:
                yield f"{where}: needs provenance, columns and rows, and nothing else"
            elif not isinstance(table["provenance"], str) or not table["provenance"].strip():
                yield f"{where}.provenance: must say where the table comes from"
            elif not isinstance(table["columns"], list) or not isinstance(table["rows"], dict):
                yield f"{where}: columns must be a list and rows a mapping"
            else:
                by_population = suite in SUITE_OBJECTS and name in SUITE_OBJECTS[suite].population_tables
                for label, groups in table["rows"].items():
                    if not isinstance(groups, dict) or not all(
                        isinstance(v, list) and len(v) == len(table["columns"]) and all(_number(x) for x in v)
                        for v in groups.values()
                    ):
                        yield f"{where}.rows.{label}: must map column groups to {len(table['columns'])} numbers each"
                    elif by_population:
                        for group in groups:
                            if group != "overall" and not _population(group):
                                yield (
                                    f"{where}.rows.{label}: {group!r} is neither a population "
                                    "(a positive integer) nor overall"
                                )


def load_published(path: str | Path, suite: str) -> dict[str, dict[str, Any]]:
    """A suite's published tables from the anchors file (checked when the config is), by name."""
    data = read_yaml(path)
    return (data or {}).get(PUBLISHED, {}).get(suite, {}) if isinstance(data, dict) else {}


def _population(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _positive_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return (isinstance(value, int) or math.isfinite(value)) and value > 0


def normalise(
    raw: float,
    suite: str,
    task: str,
    anchors: dict[tuple[str, str], tuple[float, int, str]],
    rules: str = "hivebench",
) -> float:
    """A raw score divided by its task's frozen anchor, at any population, where the score's `rules`
    are those the anchors were measured under (NaN where they differ: not like for like); a missing
    anchor is an error naming the file (Anchors.source), never a silent 1.0."""
    try:
        value, _, _ = anchors[(suite, task)]
    except KeyError:
        source = getattr(anchors, "source", "the anchors file")  # a plain dict: no file read
        raise AnchorError(f"no anchor for {suite}/{task} in {source}") from None
    return raw / value if comparable(anchors, suite, rules) else math.nan


def comparable(anchors: dict[tuple[str, str], tuple[float, int, str]], suite: str, rules: str) -> bool:
    """Whether scores under `rules` may be divided by the suite's anchors: the file states no rules
    for the suite, or the same."""
    stated = getattr(anchors, "rules", {}).get(suite)
    return stated is None or stated == rules


def mismatch(anchors: dict[tuple[str, str], tuple[float, int, str]], suite: str, rules: str) -> str:
    """Why scores under `rules` are not normalised ("" where they are)."""
    if comparable(anchors, suite, rules):
        return ""
    return f"not normalised: rules {rules}, the anchors' {anchors.rules[suite]}"  # type: ignore[attr-defined]
