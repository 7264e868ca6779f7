"""AgentsNet: colouring, vertex cover, matching, leader election and consensus by synchronous
message passing between named agents on Watts-Strogatz, Barabasi-Albert and Delaunay graphs.
Parse-time part: standard library only."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from hivebench import compat
from hivebench.compat import Difference
from hivebench.method import MethodImpl
from hivebench.suite import Metric, Suite, TaskHooks, TaskKind, message_cap_problems
from hivebench.suites.agentsnet.names import longest_name

PACKAGE = "hivebench.suites.agentsnet"
# The smallest graph each family builds: networkx's Watts-Strogatz needs n >= k = 4 (n = 4 is K4),
# Barabasi-Albert n > m = 2, a triangulation three points.
SMALLEST = {"watts_strogatz": 4, "barabasi_albert": 3, "delaunay": 3}
LARGEST = 10_000  # the exact diameter (the paper's rounds) is a breadth-first search from every node
# Where hivebench's AgentsNet departs from the reference's code (floriangroetschla/AgentsNet): each a task
# parameter; `compat: reference` takes the reference's side of every one.
DIFFERENCES = (
    Difference(
        "message_chars",
        1000,
        None,
        "the reference passes messages of any length; hivebench cuts them at 1,000 characters (and counts "
        "the cuts) so one verbose model cannot flood its neighbours' prompts",
        kept=True,
    ),
)


def behaviour(params: dict[str, Any]) -> str:
    """A task's rules as its report rows name them (`compat.behaviour`)."""
    return compat.behaviour(params, DIFFERENCES)


class NetHooks(TaskHooks):
    def resolve(self, params: dict[str, Any], base: Path) -> dict[str, Any]:
        return compat.resolve(params, DIFFERENCES)

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        family = params["family"]
        if n < SMALLEST[family]:
            yield f"a {family} graph needs at least {SMALLEST[family]} nodes, got {n}"
        elif n > LARGEST:
            yield f"AgentsNet graphs have at most {LARGEST:,} nodes (the diameter is computed exactly), got {n:,}"

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        # decisions per agent: R + 1. The paper's R = 2 * diameter + 1 is known once the graph is
        # built: counted here at its least (R = 3, diameter 1), checked exactly by the episode
        # (NetTask.reset), so the 10,000 nodes LARGEST allows pass here.
        rounds = 3 if params["rounds"] == "paper" else params["rounds"]
        return n * (rounds + 1)

    def method_problems(self, params: dict[str, Any], method: str, sizes: list[int]) -> Iterator[str]:
        # distributed, and the Waggle methods that send its messages (random and NoComm send nothing)
        problem = params["problem"]
        sender = "" if method == "distributed" else f" (sent by {method})"
        what = f"a distributed {problem} message{sender} can take"
        need = partial(classical_message_chars, problem)
        yield from message_cap_problems(params["message_chars"], method, "agentsnet", sizes, need, what)


def classical_message_chars(problem: str, n: int) -> int:
    """The characters of the longest message `distributed` can send on any graph of n nodes, whatever
    the seed (baselines.py's texts): a colour up to Δ + 1 <= n, a priority below n, a matching signal,
    or a name (with a bit, for consensus)."""
    if problem == "coloring":
        return len(f"settled Group {n}")  # Δ + 1 <= n colours
    if problem == "vertex_cover":
        return len(f"undecided {n - 1}")  # priorities 0 .. n - 1
    if problem == "matching":
        return len("propose")
    return longest_name(n) + (len(" 1") if problem == "consensus" else 0)  # flooding: a name (and a bit)


SUITE = Suite(
    name="agentsnet",
    tasks={
        "agentsnet": TaskKind(f"{PACKAGE}.task:NetTask", version=1, hooks=NetHooks(), tables=("messages",), medium=True)
    },
    methods={
        "distributed": MethodImpl(f"{PACKAGE}.baselines:DistributedAlgorithm", version=2, classical_messages=True),
        "random": MethodImpl(f"{PACKAGE}.baselines:RandomAnswers", version=2),
    },
    metrics=(Metric("score"), Metric("solved")),
    schema="schema.yaml",
    text_view=f"{PACKAGE}.text:NetView",
    example={
        "task": {"kind": "agentsnet", "problem": "matching", "family": "delaunay", "rounds": 4},
        "method": "random",
        "population": 8,
    },
    report=f"{PACKAGE}.report:render",
    viewer=f"{PACKAGE}.view:scene",
    report_files=("agentsnet.csv", "agentsnet.md", "agentsnet.tex", "agentsnet_scaling.html", "agentsnet_scaling.png"),
    waggle=f"{PACKAGE}.waggle:NetAdapter",
    adversary=f"{PACKAGE}.adversary:NetAdversary",
)
