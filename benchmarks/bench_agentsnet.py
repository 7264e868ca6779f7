"""Classical AgentsNet episodes per second, in-process, at n = 16 and n = 100.

Baseline: the same algorithms written as a plain per-agent Python loop (each agent reads its inbox,
updates its state and writes one message per neighbour into the next round's inboxes), on the same
instance with the same number of rounds, measured in the same run. hivebench's numbers are whole
episodes (observations, the vectorised policy, the medium's checks, the per-agent and message tables,
the score): `play` one episode at a time, and `play_block` a job block of `--block` seeds in lockstep;
the graph instance is built once for all (`instances: 1`). The last column writes each block's cells
as `run_block` does (two Parquet files per cell), to show what a job's disk leaves of the speed-up.
Usage: python benchmarks/bench_agentsnet.py [--seconds S] [--block B]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from bench_episodes import rate  # benchmarks/ is the script's folder: its first import path
from hivebench.cells import expand_blocks
from hivebench.config import validate
from hivebench.engine.loop import play, play_block, write_episode
from hivebench.suites.agentsnet.graphs import Instance, instance
from hivebench.suites.agentsnet.problems import paper_rounds


def cell(problem: str, n: int) -> dict:
    """A cell of the problem on Watts-Strogatz graphs of n agents, at the paper's rounds."""
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
    parser.add_argument("--block", type=int, default=100, help="seeds per lockstep block")
    args = parser.parse_args()
    columns = ("loop", "play", "block", "block+write")
    print(f"{'AgentsNet, Watts-Strogatz, paper rounds':40s}" + "".join(f"{c:>13s}" for c in columns) + "   (episodes/s)")
    for n in (16, 100):
        for problem, baseline in BASELINES.items():
            graph = instance("watts_strogatz", n, 0)
            rounds = paper_rounds(problem, n, graph.diameter)
            shared = cell(problem, n)
            blocks = lambda s: [shared | {"seed": s * args.block + k} for k in range(args.block)]  # noqa: E731
            loop = rate(lambda s: baseline(graph, rounds, s), args.seconds)
            alone = rate(lambda s: play(shared | {"seed": s}), args.seconds)
            together = args.block * rate(lambda s: play_block(blocks(s)), args.seconds)
            with tempfile.TemporaryDirectory() as tmp:

                def written(s: int) -> None:
                    for c, record in zip(blocks(s), play_block(blocks(s))):
                        write_episode(c, Path(tmp) / f"s{c['seed']}.parquet", record)

                stored = args.block * rate(written, args.seconds)
            figures = "".join(f"{x:13.0f}" for x in (loop, alone, together, stored))
            ratios = ", ".join(f"{x / loop:.2f}x" for x in (alone, together, stored))
            print(f"{f'{problem}, n={n}, R={rounds}':40s}{figures}   vs loop: {ratios}")


if __name__ == "__main__":
    main()
