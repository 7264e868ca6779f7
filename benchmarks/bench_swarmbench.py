"""SwarmBench classical episodes: agent-steps per second, in-process.

Random moves (the reference's baseline measurement: random actions), 100 rounds, a block of
`--block` seeds played in lockstep as a job plays it, the record included. Baseline: the reference
environment (RUC-GSAI/YuLan-SwarmIntell, random actions on its default 10 x 10 level) runs 380-590
agent-steps/s at N = 8-16 on this kind of machine (measured with its own environment class; it
cannot be installed here, so that figure is the baseline, not measured in this run). The ratio below
is against its upper end, 590.
Usage: python benchmarks/bench_swarmbench.py [--block B] [--seconds S]
"""

from __future__ import annotations

import argparse
import time

from hivebench.seeding import Streams
from hivebench.suites.swarmbench.task import SwarmActions, SwarmTask

REFERENCE = 590.0  # agent-steps/s, the top of the reference's range at N = 8-16
TASKS = ("pursuit", "synchronization", "foraging", "flocking", "transport")


def episode_block(task: str, n: int, seeds: list[int]) -> None:
    game = SwarmTask(
        {"task": task, "rounds": 100, "view": 5, "grid": "auto", "message_chars": 120, "to_sender": False}, n
    )
    game.reset(seeds)
    rng = Streams(seeds, "policy")
    actions = 6 if task == "synchronization" else 5
    while not game.done:
        views = game.observe()
        game.step(SwarmActions(rng.integers(0, actions, (len(views.present),))))
    game.record()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--block", type=int, default=10, help="seeds per lockstep block")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    print(f"{'task':16s} {'N':>4s} {'agent-steps/s':>14s} {'us per agent-step':>18s} {'vs reference':>13s}")
    for task in TASKS:
        for n in (8, 16, 64, 128):
            episode_block(task, n, [0])  # imports, caches
            blocks, start = 0, time.perf_counter()
            while time.perf_counter() - start < args.seconds:
                episode_block(task, n, list(range(blocks * args.block, (blocks + 1) * args.block)))
                blocks += 1
            rate = blocks * args.block * n * 100 / (time.perf_counter() - start)
            print(f"{task:16s} {n:4d} {rate:14,.0f} {1e6 / rate:18.2f} {rate / REFERENCE:12.0f}x")


if __name__ == "__main__":
    main()
