"""Classical AgentsNet episodes per second, in-process, at n = 16 and n = 100.

Baseline: the same algorithms written as a plain per-agent Python loop (each agent reads its inbox,
updates its state and writes one message per neighbour into the next round's inboxes), on the same
instance with the same number of rounds, measured in the same run. hivebench's number is a whole
episode (`engine.loop.play`: observations, the vectorised policy, the medium's checks, the per-agent
and message tables, the score); the graph instance is built once for both (`instances: 1`).
Usage: python benchmarks/bench_agentsnet.py [--seconds S]
"""

from __future__ import annotations

import argparse
import random

from bench_episodes import rate  # benchmarks/ is the script's folder: its first import path
from hivebench.cells import expand_blocks
from hivebench.config import validate
from hivebench.engine.loop import play
from hivebench.suites.agentsnet.graphs import Instance, instance
from hivebench.suites.agentsnet.problems import paper_rounds


def cell(problem: str, n: int) -> dict:
    config = {
        "tasks": {"t": {"kind": "agentsnet", "problem": problem, "family": "watts_strogatz", "instances": 1}},
        "methods": {"d": {"kind": "distributed"}},
        "studies": {"s": {"tasks": ["t"], "methods": ["d"], "populations": [n], "seeds": 1}},
    }
    return next(expand_blocks(validate(config, "bench.yaml"), "bench.yaml")["s"][0].cells())


def neighbour_lists(graph: Instance) -> list[list[int]]:
    return [graph.neighbours(v).tolist() for v in range(graph.n)]


def loop_leader_election(graph: Instance, rounds: int, seed: int) -> list[str]:
    """Flooding of the greatest name, agent by agent."""
    adjacency = neighbour_lists(graph)
    best = list(graph.names)
    inbox: list[dict[int, str]] = [{} for _ in range(graph.n)]
    for _ in range(rounds):
        outbox: list[dict[int, str]] = [{} for _ in range(graph.n)]
        for v in range(graph.n):
            best[v] = max([best[v], *inbox[v].values()])
            for u in adjacency[v]:
                outbox[u][v] = best[v]
        inbox = outbox
    return ["Yes" if max([best[v], *inbox[v].values()]) == graph.names[v] else "No" for v in range(graph.n)]


def loop_vertex_cover(graph: Instance, rounds: int, seed: int) -> list[str]:
    """Luby's maximal independent set, agent by agent; the rest is the cover."""
    rng = random.Random(seed)
    adjacency = neighbour_lists(graph)
    state = ["undecided"] * graph.n
    priority = [rng.random() for _ in range(graph.n)]
    inbox: list[dict[int, tuple[str, float]]] = [{} for _ in range(graph.n)]
    for _ in range(rounds):
        outbox: list[dict[int, tuple[str, float]]] = [{} for _ in range(graph.n)]
        for v in range(graph.n):
            if state[v] == "undecided" and inbox[v]:
                heard = inbox[v].values()
                if any(s == "in" for s, _ in heard):
                    state[v] = "out"
                elif all(priority[v] > p for s, p in heard if s == "undecided"):
                    state[v] = "in"
            priority[v] = rng.random()
            for u in adjacency[v]:
                outbox[u][v] = (state[v], priority[v])
        inbox = outbox
    return ["No" if s == "in" else "Yes" for s in state]


BASELINES = {"leader_election": loop_leader_election, "vertex_cover": loop_vertex_cover}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    print(f"{'AgentsNet, Watts-Strogatz, paper rounds':44s} {'episodes/s':>11s}")
    for n in (16, 100):
        for problem, baseline in BASELINES.items():
            graph = instance("watts_strogatz", n, 0)
            rounds = paper_rounds(problem, n, graph.diameter)
            shared = cell(problem, n)
            loop = rate(lambda s: baseline(graph, rounds, s), args.seconds)
            engine = rate(lambda s: play(shared | {"seed": s}), args.seconds)
            print(f"{f'per-agent Python loop, {problem}, n={n}, R={rounds}':44s} {loop:11.0f}")
            print(f"{f'hivebench play, {problem}, n={n}':44s} {engine:11.0f}   ratio {engine / loop:.2f}x")


if __name__ == "__main__":
    main()
