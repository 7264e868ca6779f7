"""Every suite, task kind and method kind hivebench knows, with their semantic versions.

A suite is one package and one line in SUITES. Its package's `__init__` declares a `SUITE`
(hivebench.suite.Suite) with the standard library alone, because the Snakefile reads the registry at
parse time; runtime classes are imported on first use. Bump a `version` when an implementation's
results change: every cell that uses it reruns, and no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from hivebench.suite import MethodImpl, Metric, Suite, TaskKind

SUITES: dict[str, str] = {
    "loopbench": "hivebench.suites.loopbench",
    "agentsnet": "hivebench.suites.agentsnet",
    "swarmbench": "hivebench.suites.swarmbench",
    "silobench": "hivebench.suites.silobench",
}

# Methods every suite runs: they reach the task only through the suite's text view.
GENERIC_METHODS: dict[str, MethodImpl] = {
    "llm": MethodImpl("hivebench.agents.llm:LLMAgent", version=3, calls_models=True, reads_text=True),
    "replay": MethodImpl("hivebench.agents.replay:ReplayAgent", version=1, reads_text=True),
}


@dataclass(frozen=True)
class MethodKind:
    """A method kind and the suites it serves, each with its implementation."""

    name: str
    impls: dict[str, MethodImpl]  # suite -> implementation

    @property
    def calls_models(self) -> bool:
        return any(impl.calls_models for impl in self.impls.values())

    def impl(self, suite: str) -> MethodImpl:
        return self.impls[suite]


def _suites() -> dict[str, Suite]:
    found = {}
    for name, package in SUITES.items():
        suite = import_module(package).SUITE
        if suite.name != name:
            raise RuntimeError(f"registry: {package} declares suite {suite.name!r}, registered as {name!r}")
        found[name] = suite
    return found


def _task_kinds(suites: dict[str, Suite]) -> dict[str, tuple[str, TaskKind]]:
    kinds: dict[str, tuple[str, TaskKind]] = {}
    for suite in suites.values():
        for kind, task in suite.tasks.items():
            if kind in kinds:
                raise RuntimeError(f"registry: task kind {kind!r} is declared by {kinds[kind][0]} and {suite.name}")
            kinds[kind] = (suite.name, task)
    return kinds


def _method_kinds(suites: dict[str, Suite]) -> dict[str, MethodKind]:
    impls: dict[str, dict[str, MethodImpl]] = {kind: dict.fromkeys(suites, impl) for kind, impl in GENERIC_METHODS.items()}
    for suite in suites.values():
        for kind, impl in suite.methods.items():
            if kind in GENERIC_METHODS:
                raise RuntimeError(f"registry: {suite.name} redefines the generic method {kind!r}")
            impls.setdefault(kind, {})[suite.name] = impl
    return {kind: MethodKind(kind, by_suite) for kind, by_suite in impls.items()}


SUITE_OBJECTS: dict[str, Suite] = _suites()
TASK_KINDS: dict[str, tuple[str, TaskKind]] = _task_kinds(SUITE_OBJECTS)  # kind -> (suite, task)
METHODS: dict[str, MethodKind] = _method_kinds(SUITE_OBJECTS)
SUITE_METRICS: dict[str, tuple[Metric, ...]] = {name: suite.metrics for name, suite in SUITE_OBJECTS.items()}


def task_suite(kind: str) -> str:
    return TASK_KINDS[kind][0]


def task_kind(kind: str) -> TaskKind:
    return TASK_KINDS[kind][1]
