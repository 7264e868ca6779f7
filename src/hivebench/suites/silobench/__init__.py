"""Silo-Bench: N agents each hold one private shard of the data and must all output the global answer
of one of 30 distributed-computation tasks (aggregation, mesh, global shuffle) after R rounds of
point-to-point messages, broadcasts or a shared key-value store (arXiv 2603.01045). Parse-time part:
standard library only."""

from __future__ import annotations

from typing import Any, Iterator

from hivebench.suite import MethodImpl, Metric, Suite, TaskHooks, TaskKind
from hivebench.suites.silobench.catalogue import selected

PACKAGE = "hivebench.suites.silobench"


class SiloHooks(TaskHooks):
    def members(self, params: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
        """`task: I-01` is one task; a list, a level or `all` one member per ID, named by it."""
        if isinstance(params["task"], str) and selected(params["task"]) == [params["task"]]:
            return None
        return {task: {**params, "task": task} for task in selected(params["task"])}

    def problems(self, params: dict[str, Any]) -> Iterator[str]:
        if params["protocol"] == "store" and params["topology"] != "complete" and not params["oracle"]:
            yield "topology: the shared store reaches every agent; a topology (regular3) applies to p2p and broadcast"

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        if params["oracle"]:
            return
        if n < 2:
            yield f"a Silo-Bench episode needs at least 2 agents, got {n} (single-agent cells: oracle: true)"
        elif params["topology"] == "regular3" and (n < 4 or n % 2):
            yield f"a 3-regular topology needs an even number of agents, at least 4, got {n}"

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        return 1 if params["oracle"] else n * (params["rounds"] + 1)


SUITE = Suite(
    name="silobench",
    tasks={"silobench": TaskKind(f"{PACKAGE}.task:SiloTask", version=1, hooks=SiloHooks(), tables=("messages",))},
    methods={
        "distributed": MethodImpl(f"{PACKAGE}.baselines:Distributed", version=1),
        "local": MethodImpl(f"{PACKAGE}.baselines:LocalOnly", version=1),
        "random": MethodImpl(f"{PACKAGE}.baselines:RandomGossip", version=1),
    },
    metrics=(Metric("exact"), Metric("success"), Metric("partial")),
    schema="suites/silobench/schema.yaml",
    text_view=f"{PACKAGE}.text:SiloView",
    report=f"{PACKAGE}.report:render",
    report_files=("silobench.csv", "silobench.md", "silobench.tex", "silobench_tasks.csv", "silobench_scaling.html", "silobench_scaling.png"),
)
