"""Classical AgentsNet episodes per second, in-process, at n = 16 and n = 100.

Baseline: the same algorithms written as a plain per-agent Python loop (each agent reads its inbox,
updates its state and writes one message per neighbour into the next round's inboxes), on the same
instance with the same number of rounds, measured in the same run. hivebench's numbers are whole
episodes (observations, the vectorised policy, the medium's checks, the per-agent and message tables,
the score): `play` one episode at a time, and `play_block` a job block of `--block` seeds in lockstep;
the graph instance is built once for all (`instances: 1`). The last column writes each block's cells
as `run_job` does (two Parquet files per cell), to show what a job's disk leaves of the speed-up.
Each row runs in a fresh process, as a job does.
Usage: python benchmarks/bench_agentsnet.py [--seconds S] [--block B]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench_episodes import (
    rate,  # benchmarks/ is the script's folder: its first import path
)

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play, play_block
from hivebench.engine.writer import write_episode
from hivebench.suites.agentsnet.graphs import Instance, instance
from hivebench.suites.agentsnet.problems import paper_rounds


def cell(problem: str, n: int) -> dict:
    """A cell of the problem on Watts-Strogatz graphs of n agents, at the paper's rounds."""
    config = {
        "tasks": {"t": {"kind": "agentsnet", "problem": problem, "family": "watts_strogatz", "instances": 1}},
        "methods": {"d": {"kind": "distributed"}},
        "studies": {"s": {"tasks": ["t"], "methods": ["d"], "populations": [n], "seeds": 1}},
    }
    return next(all_blocks(validate(config, "bench.yaml"), Path("."))["s"][0].cells())


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
    """Luby's maximal independent set, agent by agent (priorities in 0..n-1, ties broken by index);
    the rest is the cover."""
    rng = random.Random(seed)
    adjacency = neighbour_lists(graph)
    state = ["undecided"] * graph.n
    priority = [rng.randrange(graph.n) for _ in range(graph.n)]
    inbox: list[dict[int, tuple[str, int]]] = [{} for _ in range(graph.n)]
    for _ in range(rounds):
        outbox: list[dict[int, tuple[str, int]]] = [{} for _ in range(graph.n)]
        for v in range(graph.n):
            if state[v] == "undecided" and inbox[v]:
                heard = inbox[v]
                if any(s == "in" for s, _ in heard.values()):
                    state[v] = "out"
                elif all((priority[v], v) > (p, u) for u, (s, p) in heard.items() if s == "undecided"):
                    state[v] = "in"
            priority[v] = rng.randrange(graph.n)
            for u in adjacency[v]:
                outbox[u][v] = (state[v], priority[v])
        inbox = outbox
    return ["No" if s == "in" else "Yes" for s in state]


BASELINES = {"leader_election": loop_leader_election, "vertex_cover": loop_vertex_cover}


def measure(problem: str, n: int, seconds: float, block_size: int, tmp: str) -> tuple[str, list[float]]:
    """One row, in a process of its own as a job is (what earlier rows left in the allocator would
    otherwise change it)."""
    graph = instance("watts_strogatz", n, 0)
    rounds = paper_rounds(problem, n, graph.diameter)
    shared = cell(problem, n)

    def block(s: int) -> list[dict]:
        return [shared | {"seed": s * block_size + k} for k in range(block_size)]

    def written(s: int) -> None:  # each block to a folder of its own, as a job's cells are
        for c, record in zip(block(s), play_block(block(s))):
            write_episode(c, Path(tmp) / f"{problem}-{n}-b{s}" / f"s{c['seed']}.parquet", record)

    figures = [
        rate(lambda s: BASELINES[problem](graph, rounds, s), seconds),
        rate(lambda s: play(shared | {"seed": s}), seconds),
        block_size * rate(lambda s: play_block(block(s)), seconds),
        block_size * rate(written, seconds),
    ]
    return f"{problem}, n={n}, R={rounds}", figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--block", type=int, default=100, help="seeds per lockstep block")
    args = parser.parse_args()
    columns = ("loop", "play", "block", "block+write")
    print(
        f"{'AgentsNet, Watts-Strogatz, paper rounds':40s}" + "".join(f"{c:>13s}" for c in columns) + "   (episodes/s)"
    )
    spawn = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(1, spawn, max_tasks_per_child=1) as pool:
        for n in (16, 100):
            for problem in BASELINES:
                label, figures = pool.submit(measure, problem, n, args.seconds, args.block, tmp).result()
                ratios = ", ".join(f"{x / figures[0]:.2f}x" for x in figures[1:])
                print(f"{label:40s}" + "".join(f"{x:13.0f}" for x in figures) + f"   vs loop: {ratios}", flush=True)


if __name__ == "__main__":
    main()
