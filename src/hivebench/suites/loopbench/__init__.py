"""LoopBench (seed paper 000): two-colouring over-constrained odd cycles, one agent per node, no
messages; Proximity and Stability of the conflict trajectory. Parse-time part: standard library only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import MethodImpl
from hivebench.suite import Metric, Suite, TaskHooks, TaskKind, TaskParamError
from hivebench.suites.loopbench.graphs import (
    GraphError,
    GraphSpec,
    cycle_conf_best,
    resolve_graph,
)

PACKAGE = "hivebench.suites.loopbench"


def graph_of(params: dict[str, Any]) -> GraphSpec:
    """The GraphSpec of resolved parameters ("cycle" or a canonical edge list)."""
    graph = params["graph"]
    return GraphSpec(edges=None if graph == "cycle" else tuple(tuple(e) for e in graph))


class ColoringHooks(TaskHooks):
    def resolve(self, params: dict[str, Any], base: Path) -> dict[str, Any]:
        try:
            graph = resolve_graph(params["graph"], base)
        except GraphError as exc:
            raise TaskParamError("graph", str(exc)) from None
        return {**params, "graph": graph.as_param()}

    def fixed_size(self, params: dict[str, Any]) -> int | None:
        # nodes are 0..n-1 in a resolved edge list: no GraphSpec (and no copy of the edges) needed
        graph = params["graph"]
        return None if graph == "cycle" else 1 + max(max(edge) for edge in graph)

    def problems(self, params: dict[str, Any]) -> Iterator[str]:
        """A fixed graph's conf_best: at most its number of edges, and the exact optimum where the
        graph is small enough to search (numpy is imported only then)."""
        graph = graph_of(params)
        if graph.fixed_size is None:
            return
        colors = params["colors"]
        if "conf_best" not in params:
            if not graph.brute_force_feasible(colors):
                yield (
                    f"conf_best: required for a graph of {graph.fixed_size} nodes and {colors} colours "
                    "(too large to compute exactly)"
                )
            return
        given = params["conf_best"]
        if given > len(graph.edges or ()):
            yield f"conf_best: {given} is more than the graph's {len(graph.edges or ())} edges"
        elif graph.brute_force_feasible(colors):
            import numpy as np

            from hivebench.suites.loopbench.task import exact_conf_best

            exact = exact_conf_best(np.asarray(graph.edges), graph.fixed_size, colors)
            if given != exact:
                yield f"conf_best: {given} is wrong: the optimum is {exact} (leave conf_best out to use it)"

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        if params["graph"] != "cycle":  # a fixed graph runs at its own size
            return
        if n < 3:
            yield f"a cycle needs at least 3 nodes, got {n}"
        elif "conf_best" in params and params["conf_best"] != cycle_conf_best(n, params["colors"]):
            yield (
                f"conf_best = {params['conf_best']} is wrong for C{n} with {params['colors']} colours: the optimum "
                f"is {cycle_conf_best(n, params['colors'])} (leave conf_best out to use it)"
            )

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        return n * params["steps"]


def _classical(name: str) -> MethodImpl:
    return MethodImpl(f"{PACKAGE}.baselines:{name}", version=1)


SUITE = Suite(
    name="loopbench",
    tasks={"coloring": TaskKind(f"{PACKAGE}.task:ColoringTask", version=3, hooks=ColoringHooks(), medium=True)},
    methods={
        "random": _classical("RandomColorer"),
        "conservative_random": _classical("ConservativeRandomColorer"),
        "soft_fp": _classical("SoftColorerFP"),
        "soft_cfp": _classical("SoftColorerCFP"),
        "greedy": _classical("GreedyColorer"),
    },
    metrics=(
        Metric("proximity"),
        Metric("stability"),
        Metric("reached_optimum"),
        Metric("final_optimal"),
        Metric("first_optimal_step", higher_is_better=False, paired=False),  # NaN: never optimal
    ),
    schema="schema.yaml",
    text_view=f"{PACKAGE}.text:ColoringView",
    agent_metrics=("conflicts",),
    example={"task": {"kind": "coloring", "graph": "cycle", "steps": 6}, "method": "random", "population": 5},
    report=f"{PACKAGE}.report:render",
    viewer=f"{PACKAGE}.view:scene",
    report_files=(
        "table1.csv",
        "table1.md",
        "table1.tex",
        "conflicts.html",
        "conflicts.png",
    ),
)
