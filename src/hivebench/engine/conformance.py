"""The checks every suite passes on the one engine, shipped with hivebench so that a plug-in suite runs
the same checks as a built-in one (in the style of PettingZoo's `api_test`, `parallel_test` and
`seed_test`). Each plays real cells through the real loop (`hivebench.engine.loop.play_block`, what an
episode job runs) and raises ConformanceError, naming the check, the cell and what differs:

- check_same_episode: the same cell gives the same episode (per-agent table, summary, side tables)
  when played twice; a task or policy that draws from an unseeded generator fails it;
- check_lockstep: each cell gives the same episode alone and in lockstep with the other seeds of its
  job block (a job plays a block's cells together; `hivebench.engine.api.Task`);
- check_any_block: ... and at another place in another block (the block in reverse order): an
  episode's numbers depend on its own seed alone;
- check_record: the per-agent table has one row per (state, agent), states 0..horizon and agents
  0..N-1 in state-major order; the side tables are the ones the task kind declares
  (`TaskKind.tables`); the summary holds every metric the suite declares (`Suite.metrics`);
- check_seed_matters: the seed reaches the random streams: the example's method plays two seeds
  differently;
- check_refusals: a method kind that does not serve the suite is refused by the config check, which
  names the method and the suite;
- check_relabelling (suites with a Waggle adapter, `Suite.waggle`, whose task can relabel its agents:
  `Task.relabelling`): Proposition 1 of the Waggle paper. Relabelling the agents by a permutation
  (their starting state, their place in the graph, and every node- or edge-indexed random draw
  carried to its image) relabels the episode's records and leaves its summary (scores, counts)
  unchanged, under the cell's method (FixedSwarm, say) or the scripted controller
  (hivebench.agents.scripted_controller.rule). Compared: the summary, and every table's rows with the agent
  columns renamed, less the columns whose text names agents by index (the task's `indexed_text`:
  Silo-Bench's answers and message texts).

The cells come from the suite's example (`Suite.example`): the smallest task, population and method
that exercise it, expanded by the config check as a study's would be (`example_cells`).

Checking a plug-in suite
------------------------
Declare the example in the suite's `Suite` (standard library data):

    SUITE = Suite(
        name="mysuite", ...,
        # a task entry as a config writes it; a method kind of the suite whose episodes differ between
        # seeds (a random baseline); the population the checks play
        example={"task": {"kind": "mytask", "rounds": 4}, "method": "random", "population": 5},
    )

register the package (an entry point of the group `hivebench.suites` in its pyproject.toml, see
hivebench.registry), install it, and call the checks from the suite's tests:

    from hivebench.engine.conformance import check_suite

    def test_mysuite_conforms():
        check_suite("mysuite")  # every check, every method kind the suite implements

`suite_problems("mysuite")` returns the failures as sentences instead; for one test per check and
method kind, parametrise over CHECKS and the suite's methods:

    @pytest.mark.parametrize("check", list(CHECKS))
    @pytest.mark.parametrize("kind", list(SUITE.methods))
    def test_mysuite(check, kind):
        CHECKS[check](example_cells("mysuite", kind, seeds=5))

A task kind not (yet) in a suite can be checked by playing an example's cells under its kind: every
cell names its task kind, and the loop finds the class through hivebench.registry.TASK_KINDS
(tests/test_conformance.py does so for deliberately broken tasks, which these checks must reject).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.cells import expand_jobs
from hivebench.config import ConfigError, validate
from hivebench.engine.api import EpisodeRecord
from hivebench.engine.loop import make_policy, make_task, play_block, run
from hivebench.paths import inline_tables, side_tables
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.seeding import Streams
from hivebench.store import stored
from hivebench.suite import Suite

Cell = dict[str, Any]
EXAMPLE_KEYS = {"task": dict, "method": str, "population": int}


class ConformanceError(AssertionError):
    """A suite, task or method that fails a conformance check."""


def registered(suite: str | Suite) -> Suite:
    """The registered suite of this name (or this declaration, which must be the registered one: the
    checks expand and play cells through the registry, as a study does)."""
    name = suite if isinstance(suite, str) else suite.name
    found = SUITE_OBJECTS.get(name)
    if found is None:
        raise ConformanceError(
            f"suite {name!r} is not registered (known: {', '.join(SUITE_OBJECTS)}): "
            "add it to hivebench.registry.SUITES "
            "or register its package under the entry point group `hivebench.suites`, then check it by name"
        )
    if not isinstance(suite, str) and suite is not found:
        raise ConformanceError(
            f"the Suite given is not the one registered as {name!r} (the registry reads its package's SUITE)"
        )
    return found


def example_problems(suite: Suite) -> list[str]:
    """What is wrong with a suite's `example` declaration (empty: nothing)."""
    example = suite.example
    if not example:
        return [f"{suite.name}: declares no example (Suite.example: {{'task': ..., 'method': ..., 'population': ...}})"]
    problems = [
        f"{suite.name}: example: `{key}` must be a {kind.__name__}"
        for key, kind in EXAMPLE_KEYS.items()
        if not isinstance(example.get(key), kind)
    ]
    problems += [
        f"{suite.name}: example: unknown key {key!r} (known: {', '.join(EXAMPLE_KEYS)})"
        for key in set(example) - set(EXAMPLE_KEYS)
    ]
    if not problems and example["method"] not in suite.methods:
        problems.append(
            f"{suite.name}: example: method {example['method']!r} is not one the suite implements "
            f"({', '.join(suite.methods)})"
        )
    return problems


def example_cells(
    suite: str | Suite,
    method: str | None = None,
    seeds: int = 5,
    population: int | None = None,
    task: dict[str, Any] | None = None,
) -> list[Cell]:
    """The cells of the suite's example under a method kind (default: the example's), seeds 0..seeds-1,
    at the example's population (or `population`), its task entry updated by `task`, resolved by the
    config check as a study's cells are. They differ only in their seed: one job block."""
    declared = registered(suite)
    problems = example_problems(declared)
    if problems:
        raise ConformanceError("; ".join(problems))
    example = declared.example
    source = f"{declared.name}.example"
    config = {
        "tasks": {"example": {**copy.deepcopy(example["task"]), **(task or {})}},
        "methods": {"method": {"kind": method or example["method"]}},
        "studies": {
            "conformance": {
                "tasks": ["example"],
                "methods": ["method"],
                "populations": [population or example["population"]],
                "seeds": seeds,
            }
        },
    }
    jobs = expand_jobs(validate(config, source), source)["conformance"]
    return [cell for job in jobs for cell in job.cells()]


# Comparing records ---------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN (Arrow's `equals` and `==` both hold NaN unequal to itself)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _table_differences(what: str, a: pa.Table, b: pa.Table) -> list[str]:
    if a.schema != b.schema:
        return [
            f"{what}: the columns differ ({a.schema.names} of {a.schema.types} vs {b.schema.names} of {b.schema.types})"
        ]
    if a.num_rows != b.num_rows:
        return [f"{what}: {a.num_rows} rows vs {b.num_rows}"]
    found = []
    for name in a.column_names:
        x, y = a.column(name), b.column(name)
        if x.equals(y):
            continue
        xs, ys = x.to_pylist(), y.to_pylist()
        row = next((i for i, (u, v) in enumerate(zip(xs, ys)) if not _same(u, v)), None)
        if row is not None:
            found.append(f"{what}: column {name!r} differs first at row {row} ({xs[row]!r} vs {ys[row]!r})")
    return found


def _summary_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)  # NaN is written NaN: equal to itself here


def _summary_differences(a: EpisodeRecord, b: EpisodeRecord) -> list[str]:
    return [
        f"summary {key!r}: {a.summary.get(key, '(absent)')!r} vs {b.summary.get(key, '(absent)')!r}"
        for key in sorted(set(a.summary) | set(b.summary))
        if key not in a.summary
        or key not in b.summary
        or _summary_text(a.summary[key]) != _summary_text(b.summary[key])
    ]


def differences(a: EpisodeRecord, b: EpisodeRecord) -> list[str]:
    """How two records of one cell differ, as the store would write them (empty: they are the same)."""
    found = _table_differences("per-agent table", stored(pa.table(a.agents)), stored(pa.table(b.agents)))
    found += _summary_differences(a, b)
    if a.tables.keys() != b.tables.keys():
        found.append(f"side tables {sorted(a.tables)} vs {sorted(b.tables)}")
    else:
        for name in a.tables:
            found += _table_differences(f"side table {name!r}", stored(a.table(name)), stored(b.table(name)))
    return found


def describe(cell: Cell) -> str:
    return (
        f"suite {cell['suite']}, task {cell['task']['name']!r} (kind {cell['task']['kind']}), "
        f"method {cell['method']['name']!r} (kind {cell['method']['kind']}), "
        f"N = {cell['population']}, seed {cell['seed']}"
    )


def _fail(check: str, cell: Cell, problems: list[str], limit: int = 5) -> None:
    shown = problems[:limit] + ([f"... {len(problems) - limit} more"] if len(problems) > limit else [])
    raise ConformanceError(f"{check}: {describe(cell)}: " + "; ".join(shown))


def _play(cells: list[Cell]) -> list[EpisodeRecord]:
    records = play_block(copy.deepcopy(cells))
    if len(records) != len(cells):
        raise ConformanceError(
            f"the task's record() gave {len(records)} records for a block of {len(cells)} seeds ({describe(cells[0])})"
        )
    return records


# The checks ----------------------------------------------------------------------------------------


def check_same_episode(cells: list[Cell]) -> None:
    """The first cell, played twice, gives the same episode (an unseeded draw fails this)."""
    first, second = _play(cells[:1])[0], _play(cells[:1])[0]
    if problems := differences(first, second):
        _fail("the same cell gave two different episodes", cells[0], problems)


def check_lockstep(cells: list[Cell]) -> None:
    """Each cell gives the same episode alone as in lockstep with the others of its block."""
    together = _play(cells)
    for cell, record in zip(cells, together):
        if problems := differences(_play([cell])[0], record):
            _fail(
                f"a cell played alone and in lockstep with its block of {len(cells)} seeds gave different episodes",
                cell,
                problems,
            )


def check_any_block(cells: list[Cell]) -> None:
    """Each cell gives the same episode in its block and in the block's reverse order (at another
    place among other companions): nothing of a block but the cell's own seed reaches its episode."""
    forward, backward = _play(cells), _play(cells[::-1])[::-1]
    for cell, a, b in zip(cells, forward, backward):
        if problems := differences(a, b):
            _fail(
                f"a cell gave different episodes in a block of {len(cells)} seeds in order and in reverse order",
                cell,
                problems,
            )


def check_record(cells: list[Cell]) -> None:
    """The first cell's record: one per-agent row per (state, agent), states 0..horizon, agents 0..N-1,
    state-major; the side tables its task kind declares; the suite's metrics in the summary."""
    cell = cells[0]
    kind = task_kind(cell["task"]["kind"])
    task = kind.load()(cell["task"]["params"], cell["population"])
    task.reset([cell["seed"]])
    horizon, n = task.horizon, cell["population"]
    record = _play([cell])[0]
    table = stored(pa.table(record.agents))
    problems = [
        f"no {column!r} column in the per-agent table"
        for column in ("step", "agent")
        if column not in table.column_names
    ]
    if not problems:
        steps, agents = table.column("step").to_pylist(), table.column("agent").to_pylist()
        if len(steps) != (horizon + 1) * n:
            problems.append(
                f"{len(steps)} per-agent rows, not (horizon + 1) x N = ({horizon} + 1) x {n} = {(horizon + 1) * n}"
            )
        else:
            want = [(state, agent) for state in range(horizon + 1) for agent in range(n)]
            wrong = next((i for i, (s, a, w) in enumerate(zip(steps, agents, want)) if (s, a) != w), None)
            if wrong is not None:
                problems.append(
                    f"per-agent row {wrong} is (step {steps[wrong]}, agent {agents[wrong]}), not {want[wrong]}: "
                    "rows go state by "
                    f"state 0..{horizon}, agents 0..{n - 1} within each"
                )
    declared = set(side_tables(cell) + inline_tables(cell))
    if set(record.tables) != declared:
        problems.append(
            f"side tables {sorted(record.tables)}, but the task kind, method and perturbation declare "
            f"{sorted(declared)} (TaskKind.tables, MethodImpl.tables, hivebench.perturb.inline_tables)"
        )
    metrics = {metric.name for metric in SUITE_OBJECTS[cell["suite"]].metrics}
    if missing := sorted(metrics - set(record.summary)):
        problems.append(f"the summary lacks the suite's metrics {missing}")
    if problems:
        _fail("the record's shape", cell, problems)


def check_seed_matters(cells: list[Cell]) -> None:
    """The first two cells (two seeds), each played alone, give different episodes: the seed reaches
    the random streams. Only for a method whose play depends on the seed (the example's)."""
    first, second = _play(cells[:1])[0], _play(cells[1:2])[0]
    if not differences(first, second):
        raise ConformanceError(
            f"seeds {cells[0]['seed']} and {cells[1]['seed']} gave the same episode: "
            "the seed does not reach the random "
            f"streams ({describe(cells[0])})"
        )


def check_refusals(suite: str | Suite) -> None:
    """Every method kind that does not serve the suite is refused with the suite's example task, by
    the config check, in a message naming the method and the suite."""
    declared = registered(suite)
    example = declared.example
    for kind, method in METHODS.items():
        if declared.name in method.impls:
            continue
        config = {
            "tasks": {"t": copy.deepcopy(example["task"])},
            "methods": {"m": {"kind": kind}},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [example["population"]], "seeds": 1}},
        }
        try:
            validate(config, f"{declared.name}.example")
        except ConfigError as exc:
            if not re.search(
                rf"method 'm' \(kind {re.escape(kind)}, .*\) cannot run task 't' of suite {re.escape(declared.name)}",
                str(exc),
            ):
                raise ConformanceError(
                    f"method kind {kind} with suite {declared.name}'s task: refused, but not for its suite: {exc}"
                ) from None
        else:
            raise ConformanceError(
                f"method kind {kind} serves {', '.join(method.impls)}, not {declared.name}, "
                "yet the config check accepts it"
            )


# What every method kind of a suite passes, on its example's cells (a block of several seeds).
class RelabelledStreams(Streams):
    """Streams whose draws of a row per agent put agent i's row at sigma(i), and whose draws of a row
    per directed edge put edge e's at `edges[e]` (node- and edge-indexed draws carried to their images);
    a draw of any other shape is an error: the check cannot carry it."""

    def __init__(self, seeds: list[int], name: str, sigma: np.ndarray, edges: np.ndarray | None):
        super().__init__(seeds, name)
        self.sigma, self.edges = sigma, edges

    def child(self, name: str) -> Streams:
        return RelabelledStreams(self.seeds, f"{self.name}/{name}", self.sigma, self.edges)

    def _draw(self, kind: Any, shape: tuple[int, ...], split: Any) -> np.ndarray:
        out = super()._draw(kind, shape, split)
        if shape[0] == len(self.sigma):
            image = self.sigma
        elif self.edges is not None and shape[0] == len(self.edges):
            image = self.edges
        else:
            raise ConformanceError(
                f"stream {self.name!r}: a draw of shape {shape} is neither a row per agent nor per edge"
            )
        moved = np.empty_like(out)
        moved[image] = out
        return moved


AGENT_COLUMNS = ("agent", "sender", "receiver", "writer")  # columns holding agent indices (-1: none)


def _relabelled_rows(table: pa.Table, sigma: np.ndarray, indexed: tuple[str, ...]) -> list[tuple]:
    """A table's rows, without the columns whose text names agents by index (`indexed`) and with its
    agent columns mapped through sigma, sorted."""
    data = stored(table).to_pydict()
    names = sorted(set(data) - set(indexed))
    for name in set(names) & set(AGENT_COLUMNS):
        data[name] = [v if v is None or v < 0 else int(sigma[v]) for v in data[name]]
    return sorted(zip(*(map(repr, data[name]) for name in names)))


def _play_relabelled(cell: Cell, sigma: np.ndarray, target: Any) -> tuple[EpisodeRecord, tuple[str, ...]]:
    """The episode, and the columns of its tables whose text names agents by index (`indexed_text`)."""
    task = make_task(cell)
    task.relabelling = sigma
    task.reset([cell["seed"]])
    streams = RelabelledStreams([cell["seed"]], "policy", sigma, task.edge_image)
    return run(task, make_policy([cell], streams, target))[0], tuple(getattr(task, "indexed_text", ()))


def check_relabelling(cells: list[Cell], scripted: bool = False, seed: int = 0) -> None:
    """The first cell relabelled by a random permutation (from `seed`) gives its episode relabelled,
    under the cell's method, or with `scripted` the scripted controller in its place."""
    from hivebench.agents.scripted_controller.rule import ScriptedController

    cell = cells[0]
    target = ScriptedController if scripted else None
    n = cell["population"]
    sigma = np.random.default_rng(seed).permutation(n)
    (a, indexed), (b, _) = _play_relabelled(cell, np.arange(n), target), _play_relabelled(cell, sigma, target)
    problems = _summary_differences(a, b)
    identity = np.arange(n)
    tables = {"per-agent table": (pa.table(a.agents), pa.table(b.agents))}
    tables |= {f"side table {name!r}": (a.table(name), b.table(name)) for name in a.tables}
    for what, (x, y) in tables.items():
        if _relabelled_rows(x, sigma, indexed) != _relabelled_rows(y, identity, indexed):
            problems.append(f"{what}: the relabelled episode's rows are not the original's relabelled")
    if problems:
        who = "the scripted controller" if scripted else "its method"
        _fail(f"relabelling the agents by {sigma.tolist()} under {who} changed the episode", cell, problems)


CHECKS: dict[str, Callable[[list[Cell]], None]] = {
    "same episode": check_same_episode,
    "lockstep": check_lockstep,
    "any block": check_any_block,
    "record": check_record,
}
LOCKSTEP_SEEDS = 5  # the block the checks play


def cell_problems(cells: list[Cell], seed_matters: bool = False) -> list[str]:
    """Every check of CHECKS (and check_seed_matters if asked) on a block of cells: the failures."""
    checks = [*CHECKS.values(), *([check_seed_matters] if seed_matters else [])]
    problems = []
    for check in checks:
        try:
            check(cells)
        except ConformanceError as exc:
            problems.append(str(exc))
    return problems


def suite_problems(suite: str | Suite, methods: list[str] | None = None) -> list[str]:
    """Every check on a registered suite: CHECKS for each of `methods` (default: every method kind the
    suite implements) on its example, check_seed_matters for the example's method, check_refusals.
    The failures, each a sentence; empty: the suite conforms."""
    declared = registered(suite)
    if problems := example_problems(declared):
        return problems
    for kind in methods or list(declared.methods):
        problems += cell_problems(example_cells(declared, kind, seeds=LOCKSTEP_SEEDS))
    for check, argument in ((check_seed_matters, example_cells(declared, seeds=2)), (check_refusals, declared)):
        try:
            check(argument)
        except ConformanceError as exc:
            problems.append(str(exc))
    return problems


def check_suite(suite: str | Suite, methods: list[str] | None = None) -> None:
    """Raise ConformanceError listing every failure of suite_problems."""
    if problems := suite_problems(suite, methods):
        raise ConformanceError(f"{len(problems)} conformance problems:\n- " + "\n- ".join(problems))
