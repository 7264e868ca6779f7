"""Silo-Bench classical cells: instance generation, the distributed algorithm and the answers' scoring
for all 30 tasks at N = 64, in cells per second, in-process.

hivebench: a job block of `--block` seeds per task played in lockstep as a job plays it, the record
(per-agent table, every message's text, scores) included. Baseline, in the same run: a naive loop of
the same algorithm, one agent at a time in plain Python (a set of held shards per agent, each round
every agent passes its new shards to each neighbour but their source, then every agent solves the
task on what it holds and is judged), on the same instances, with no record.
Usage: python benchmarks/bench_silobench.py [--block B] [--seconds S] [--n N]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from hivebench.seeding import Streams
from hivebench.suites.silobench.baselines import Distributed
from hivebench.suites.silobench.catalogue import BY_ID, TASKS
from hivebench.suites.silobench.instances import PROBLEMS, instance, own_answer
from hivebench.suites.silobench.network import topology
from hivebench.suites.silobench.scoring import judge
from hivebench.suites.silobench.task import SiloTask

SETTINGS = {"complete": 1, "regular3": 9}  # topology -> rounds (the Waggle study runs 9 on the ports)


def params(task: str, kind: str) -> dict[str, Any]:
    return {
        "task": task,
        "protocol": "p2p",
        "topology": kind,
        "rounds": SETTINGS[kind],
        "message_chars": 16000,
        "store_chars": 1_000_000,
        "writes_per_round": 8,
        "oracle": False,
    }


def hivebench_block(task: str, kind: str, n: int, seeds: list[int]) -> float:
    game = SiloTask(params(task, kind), n)
    game.reset(seeds)
    policy = Distributed({}, Streams(seeds, "policy"))
    while not game.done:
        game.step(policy.decide(game.observe()))
    records = game.record()
    for record in records:
        record.table("messages")
    return sum(r.summary["success"] for r in records)


def naive_cell(task: str, kind: str, n: int, seed: int) -> float:
    """The same flood, one agent and one neighbour at a time."""
    inst = instance(task, n, seed)
    graph = topology(kind, n, seed)
    neighbours = [graph.neighbours(v).tolist() for v in range(n)]
    held = [{v} for v in range(n)]
    source = [{v: -1} for v in range(n)]
    fresh = [{v} for v in range(n)]  # not passed on yet
    for _ in range(SETTINGS[kind]):
        sent = [(v, u, {o for o in fresh[v] if source[v][o] != u}) for v in range(n) for u in neighbours[v]]
        fresh = [set() for _ in range(n)]
        for v, u, shards in sent:
            for owner in shards:
                if owner not in held[u]:
                    held[u].add(owner)
                    source[u][owner] = v
                    fresh[u].add(owner)
    level = BY_ID[task].level
    exact = 0
    for v in range(n):
        owners = sorted(held[v])
        whole = PROBLEMS[task].solve([inst.shards[o] for o in owners], inst.public)
        exact += judge(own_answer(inst, whole, owners, v), inst.expected(v), level)[0]
    return float(exact == n)


def rate(run: Any, block: int, seconds: float) -> float:
    """Cells per second of `run(seeds)` over all 30 tasks, fresh instances each pass."""
    cells, start, first = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        seeds = list(range(first, first + block))
        for entry in TASKS:
            run(entry.id, seeds)
        cells += block * len(TASKS)
        first += block
    return cells / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--block", type=int, default=10, help="seeds per task per lockstep block")
    parser.add_argument("--seconds", type=float, default=10.0, help="time per measurement")
    parser.add_argument("--n", type=int, default=64, help="agents")
    args = parser.parse_args()
    print(f"N = {args.n}, all 30 tasks, the distributed algorithm over p2p; cells/s (higher is better)")
    print(f"{'topology':10s} {'rounds':>6s} {'naive loop':>11s} {'hivebench':>10s} {'ratio':>6s}")
    for kind, rounds in SETTINGS.items():
        for entry in TASKS:  # imports, and every path once
            assert hivebench_block(entry.id, kind, args.n, [10**6]) == 1.0 == naive_cell(entry.id, kind, args.n, 10**6)
        naive = rate(lambda task, seeds, kind=kind: [naive_cell(task, kind, args.n, s) for s in seeds], 1, args.seconds)
        ours = rate(lambda task, seeds, kind=kind: hivebench_block(task, kind, args.n, seeds), args.block, args.seconds)
        print(f"{kind:10s} {rounds:6d} {naive:11.1f} {ours:10.1f} {ours / naive:5.1f}x")


if __name__ == "__main__":
    main()
