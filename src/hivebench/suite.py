"""What a suite plugs into hivebench: its task kinds with their parse-time hooks, the methods it
implements, its metrics, its schema fragment and its report section.

Standard library only: the Snakefile reads every suite's declaration at parse time. Runtime classes
are named by dotted path ("package.module:Name") and imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hivebench.method import MethodImpl


def load(target: str) -> Any:
    """The object a "package.module:Name" path names."""
    module, name = target.split(":")
    return getattr(import_module(module), name)


class PluginError(RuntimeError):
    """A suite or method package that cannot be registered (most often an installed plug-in): one
    paragraph naming it, its entry point where it has one, and what is wrong (hivebench.registry)."""


class TaskParamError(ValueError):
    """A task parameter that cannot be used; `key` is the parameter (`graph`, `rounds`, ...)."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


class TaskHooks:
    """A task kind's parse-time answers about its parameters (standard library only). The defaults
    fit a task whose size is the study's population and whose parameters need no resolving."""

    # Parameters that act only on a method reading the task as text (MethodImpl.reads_text: what an
    # LLM agent's prompt shows); given in a study with no such method, they are refused (they would
    # change the other methods' cells and nothing else).
    text_settings: tuple[str, ...] = ()

    def resolve(self, params: dict[str, Any], base: Path) -> dict[str, Any]:
        """The parameters as a cell stores them (files read and inlined in canonical form); raise
        TaskParamError naming the parameter. `base` is the config file's folder."""
        return params

    def members(self, params: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
        """An entry that stands for several tasks (e.g. every task of a suite's level): each member's
        name suffix and parameters (the config holds them as `<entry>.<suffix>`); None: one task."""
        return None

    def fixed_size(self, params: dict[str, Any]) -> int | None:
        """The population when the parameters fix it (a fixed graph), else None: the study's."""
        return None

    def problems(self, params: dict[str, Any]) -> Iterator[str]:
        """Problems of resolved parameters, each starting with the parameter's key."""
        return iter(())

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        """Why the task cannot run with n agents (a sentence each)."""
        return iter(())

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        """Rows of one episode's per-agent table: agents x decision rounds (bounded in config)."""
        raise NotImplementedError

    def method_problems(self, params: dict[str, Any], method: str, sizes: list[int]) -> Iterator[str]:
        """Why a method of kind `method` cannot run the task at these populations (a classical
        algorithm's messages over the cap), each starting with the parameter's key."""
        return iter(())

    def episode_bytes(self, params: dict[str, Any], method: str, n: int) -> int:
        """About the most memory one episode of n agents under a method of kind `method` holds, where
        it grows faster than the agent-steps, or where the agent-steps do not bound it (a single-agent
        oracle cell of an instance for n); a job holds `config.held_episodes` of them at once. 0: not
        bounded beyond the agent-steps."""
        return 0

    def anchor_key(self, name: str, entry: dict[str, Any]) -> str:
        """The task as the anchors file names it: the value of its suite's `anchor_column` in the
        task's episodes (by default the config's task name). `entry`: the task's entry in the config
        (`kind` and its parameters as written, defaults not filled in)."""
        return name


def sends_classical_messages(method: str, suite: str) -> bool:
    """Whether a method of kind `method` sends a classical algorithm's messages on `suite`
    (MethodImpl.classical_messages)."""
    from hivebench.registry import METHODS  # the registry imports the suites: not at import time

    return METHODS[method].impl(suite).classical_messages


def message_cap_problems(
    cap: int | None, method: str, suite: str, sizes: list[int], need: Callable[[int], int], what: str
) -> Iterator[str]:
    """A `message_chars` below what a method of kind `method` sends on `suite` at the neediest of
    `sizes` (`need(n)` characters: `what` at N = n); nothing without a cap, or for a method that sends
    no classical messages (none, or an LLM's: cut to the cap and counted)."""
    if cap is None or not sends_classical_messages(method, suite):
        return
    chars, n = max((need(n), n) for n in sizes)
    if cap < chars:
        yield f"message_chars: {cap} is below the {chars} characters {what} at N = {n}; raise it to at least {chars}"


@dataclass(frozen=True)
class TaskKind:
    target: str  # the runtime task class
    version: int  # bump when results change: every cell of this kind reruns
    hooks: TaskHooks
    tables: tuple[str, ...] = ()  # side tables a cell writes beside its per-agent table (s<seed>.<name>.parquet)
    # what its agents learn of one another passes through the task's `medium` (a perturbation may wrap it)
    medium: bool = False

    def load(self) -> Any:
        return load(self.target)


@dataclass(frozen=True)
class Metric:
    name: str  # the episodes-table column
    higher_is_better: bool = True
    normalised_by_anchor: bool = False  # divided by its task's frozen anchor in scores (Suite.anchored)
    paired: bool = True  # contrasted by default; False for one undefined in some episodes (a unit would drop)


@dataclass(frozen=True)
class Suite:
    name: str
    tasks: dict[str, TaskKind]  # task kind -> its implementation
    methods: dict[str, MethodImpl]  # method kinds this suite implements itself
    metrics: tuple[Metric, ...]  # the episode-summary columns scores and contrasts run over
    # the schema fragment ($defs `<kind>_task` / `<kind>_method`): a file of the suite's package (a path in it)
    schema: str
    text_view: str  # the LLM agent's view of this suite's observations ("module:Class")
    # renders the suite's report section ("module:function"): hivebench.report.Section (its episodes,
    # folder, link prefix, bootstrap settings, its published tables and the frozen anchors from the
    # anchors file) -> HTML
    report: str
    # files the section writes into reports/<study>/<suite>/; each .csv and .png has its caption for
    # `snakemake --report` in the suite's package, captions/<file stem>.rst
    report_files: tuple[str, ...] = field(default=())
    # draws one episode for the episode viewer ("module:function"): hivebench.view.episode.Episode ->
    # hivebench.view.scene.Scene (its agents on its contact structure, its per-step measures). None:
    # the viewer places the agents on a circle, without contacts.
    viewer: str | None = None
    # Anchor-normalised metrics: the episodes column naming the anchored task (its values are the
    # anchors file's task keys), and the values that must have an anchor (None: every one); the
    # others get no normalised score.
    anchor_column: str = "task"
    anchored: tuple[str, ...] | None = None
    # Published tables (anchors file, `published`) whose column groups are populations N (or
    # "overall"): the report sorts and labels them as numbers.
    population_tables: tuple[str, ...] = ()
    # The smallest cell the conformance checks play (hivebench.engine.conformance): `task`, a task
    # entry as a config writes it; `method`, a method kind of the suite whose episodes differ between
    # seeds (a random baseline); `population`, the N they run at.
    example: dict[str, Any] = field(default_factory=dict)
    # The cells whose per-agent files (results/episodes/.../s<seed>.parquet) the report section reads,
    # from the suite's cells of a study in the study's order (that of its episodes table); standard
    # library, asked at parse time: each becomes an input of the section's rule. None: the section
    # reads the episodes table and the anchors file alone.
    report_cells: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    # The suite's Waggle adapter class ("package.module:Name", hivebench.waggle.runtime.adapter.Adapter):
    # what the Waggle runtime and its controls need of it. None: they do not run it.
    waggle: str | None = None
    # Per-agent columns that score each agent at an episode's last state (a solver's `exact`): a mixed
    # population's summary holds each one's mean over each member's agents, `<column>@<member>`.
    agent_metrics: tuple[str, ...] = ()
    # The suite's adversary ("package.module:Name", hivebench.perturb.agents.Adversary): what an agent of
    # an `adversarial` fault does instead of its method. None: the suite has none.
    adversary: str | None = None
