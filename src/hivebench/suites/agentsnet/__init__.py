"""AgentsNet: colouring, vertex cover, matching, leader election and consensus by synchronous
message passing between named agents on Watts-Strogatz, Barabasi-Albert and Delaunay graphs.
Parse-time part: standard library only."""

from __future__ import annotations

from typing import Any, Iterator

from hivebench.suite import MethodImpl, Metric, Suite, TaskHooks, TaskKind

PACKAGE = "hivebench.suites.agentsnet"
# The smallest graph each family builds: networkx's Watts-Strogatz needs n >= k = 4 (n = 4 is K4),
# Barabasi-Albert n > m = 2, a triangulation three points.
SMALLEST = {"watts_strogatz": 4, "barabasi_albert": 3, "delaunay": 3}
LARGEST = 10_000  # the exact diameter (the paper's rounds) is a breadth-first search from every node


class NetHooks(TaskHooks):
    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        family = params["family"]
        if n < SMALLEST[family]:
            yield f"a {family} graph needs at least {SMALLEST[family]} nodes, got {n}"
        elif n > LARGEST:
            yield f"AgentsNet graphs have at most {LARGEST:,} nodes (the diameter is computed exactly), got {n:,}"

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        # decisions per agent: R + 1, with R at most 2 * (n - 1) + 1 under the paper's rule
        rounds = 2 * n - 1 if params["rounds"] == "paper" else params["rounds"]
        return n * (rounds + 1)


SUITE = Suite(
    name="agentsnet",
    tasks={"agentsnet": TaskKind(f"{PACKAGE}.task:NetTask", version=1, hooks=NetHooks(), tables=("messages",))},
    methods={
        "distributed": MethodImpl(f"{PACKAGE}.baselines:DistributedAlgorithm", version=2),
        "random": MethodImpl(f"{PACKAGE}.baselines:RandomAnswers", version=2),
    },
    metrics=(Metric("score"), Metric("solved")),
    schema="suites/agentsnet/schema.yaml",
    text_view=f"{PACKAGE}.text:NetView",
    report=f"{PACKAGE}.report:render",
    report_files=("agentsnet.csv", "agentsnet.md", "agentsnet.tex", "agentsnet_scaling.html", "agentsnet_scaling.png"),
)
