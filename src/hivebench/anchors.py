"""Frozen normalisation anchors (config/anchors.yaml): raw score / anchor = task-normalised score.

Standard library and PyYAML only: the config check reads the anchors file at parse time.
"""

from __future__ import annotations

import math
from pathlib import Path

from hivebench.config import ConfigError, read_yaml

Anchors = dict[tuple[str, str, int], tuple[float, str]]


class AnchorError(KeyError):
    """A normalised aggregate needs an anchor that config/anchors.yaml does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_anchors(path: str | Path) -> Anchors:
    """(suite, task, population) -> (anchor value, provenance); ConfigError naming the file and the
    entry for anything else than suite -> task -> N -> {value: a positive number, provenance: text}."""
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), ["the top level must map suites to tasks to populations"])
    anchors, problems = {}, []
    for suite, tasks in data.items():
        if not isinstance(tasks, dict):
            problems.append(f"{suite}: must map task names to populations")
            continue
        for task, populations in tasks.items():
            if not isinstance(populations, dict):
                problems.append(f"{suite}.{task}: must map populations to {{value, provenance}}")
                continue
            for population, entry in populations.items():
                where = f"{suite}.{task}.{population}"
                if not isinstance(population, int) or isinstance(population, bool) or population < 1:
                    problems.append(f"{where}: the population must be a positive integer")
                elif not isinstance(entry, dict) or set(entry) != {"value", "provenance"}:
                    problems.append(f"{where}: needs value and provenance, and nothing else")
                elif not _positive_number(entry["value"]):
                    problems.append(f"{where}.value: must be a positive finite number")  # the value is not quoted: it may be anything
                elif not isinstance(entry["provenance"], str) or not entry["provenance"].strip():
                    problems.append(f"{where}.provenance: must say where the anchor comes from")
                else:
                    anchors[(str(suite), str(task), population)] = (float(entry["value"]), entry["provenance"])
    if problems:
        raise ConfigError(str(path), problems)
    return anchors


def _positive_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return (isinstance(value, int) or math.isfinite(value)) and value > 0


def normalise(raw: float, suite: str, task: str, population: int, anchors: Anchors) -> float:
    """A raw score divided by its frozen anchor; a missing anchor is an error, never a silent 1.0."""
    try:
        value, _ = anchors[(suite, task, population)]
    except KeyError:
        raise AnchorError(f"no anchor for {suite}/{task} at N={population} in config/anchors.yaml") from None
    return raw / value
