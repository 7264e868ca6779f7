"""The names used in config mapped to implementations, with their semantic versions.

Kept import-free (classes are loaded by dotted path on first use) because the Snakefile reads the
versions at parse time. Bump a `version` when an implementation's results change: every cell that
uses it reruns, and no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any


@dataclass(frozen=True)
class Entry:
    target: str  # "package.module:Class"
    version: int
    suite: str = ""  # tasks only: the benchmark suite the task belongs to

    def load(self) -> Any:
        module, name = self.target.split(":")
        return getattr(import_module(module), name)


TASKS: dict[str, Entry] = {
    "coloring": Entry("hivebench.tasks.coloring:ColoringTask", version=1, suite="loopbench"),
}

METHODS: dict[str, Entry] = {
    "random": Entry("hivebench.methods.classical:RandomColorer", version=1),
    "conservative_random": Entry("hivebench.methods.classical:ConservativeRandomColorer", version=1),
    "soft_fp": Entry("hivebench.methods.classical:SoftColorerFP", version=1),
    "soft_cfp": Entry("hivebench.methods.classical:SoftColorerCFP", version=1),
    "greedy": Entry("hivebench.methods.classical:GreedyColorer", version=1),
    "llm": Entry("hivebench.methods.llm_coloring:LLMColorer", version=1),
}


@dataclass(frozen=True)
class Metric:
    name: str  # the episodes-table column
    higher_is_better: bool = True
    normalised_by_anchor: bool = False  # divided by a frozen anchor (suite, task, population) in scores


# The metrics each suite reports, by the name of their column in the episodes table.
SUITE_METRICS: dict[str, tuple[Metric, ...]] = {
    "loopbench": (Metric("proximity"), Metric("stability")),
}
