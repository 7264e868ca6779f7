"""Classical LoopBench episodes per second, in-process.

Baseline: the same Soft Colorer FP rule written as a plain Python loop over agents (no numpy),
measured in the same run. hivebench one episode at a time (`run_episode`) and a job block of 100
seeds in lockstep (`play_block`, what a job runs), at N = 3 to 1,001; agent-steps/s = episodes/s x N
x T. Usage: python benchmarks/bench_episodes.py [--seconds S]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hivebench.cells import CELL_FORMAT, make_cell
from hivebench.engine.loop import play_block
from hivebench.engine.writer import run_episode, write_episode

TASK = {
    "name": "cycle",
    "kind": "coloring",
    "version": 1,
    "params": {"graph": "cycle", "colors": 2, "init": "same", "steps": 15, "metric_window": "from_initial"},
}
METHODS = {
    "random": {},
    "conservative_random": {},
    "soft_fp": {"p": 0.3},
    "soft_cfp": {"p": 0.3},
    "greedy": {},
}


BLOCK = 100  # seeds per lockstep block


def cell(method: str, n: int, seed: int) -> dict:
    shared = {
        "format": CELL_FORMAT,
        "study": "bench",
        "suite": "loopbench",
        "task": TASK,
        "population": n,
        "method": {"name": method, "kind": method, "version": 1, "params": METHODS[method]},
    }
    return make_cell(shared, seed)


def python_loop_fp(n: int, seed: int, steps: int = 15, p: float = 0.3) -> list[int]:
    """The baseline: Soft Colorer FP on C_n, one agent at a time in plain Python."""
    rng = random.Random(seed)
    colors = [0] * n
    conflicts = [n]
    for _ in range(steps):
        new = colors[:]
        for v in range(n):
            if rng.random() < p:
                left, right = colors[v - 1], colors[(v + 1) % n]
                cost = [(left == c) + (right == c) for c in (0, 1)]
                best = [c for c in (0, 1) if cost[c] == min(cost)]
                new[v] = rng.choice(best)
        colors = new
        conflicts.append(sum(colors[v] == colors[(v + 1) % n] for v in range(n)))
    return conflicts


def rate(fn: Callable[[int], object], seconds: float) -> float:
    """Calls per second in the steady state: one call first, untimed (imports, caches, instances)."""
    fn(0)
    count, start = 1, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn(count)
        count += 1
    return (count - 1) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    steps = TASK["params"]["steps"]
    print(f"{'measurement':48s} {'episodes/s':>11s} {'agent-steps/s':>14s}")

    def show(label: str, episodes: float, n: int, baseline: float | None = None) -> None:
        ratio = f"   ratio {episodes / baseline:.2f}x" if baseline else ""
        print(f"{label:48s} {episodes:11.0f} {episodes * n * steps / 1e6:12.2f} M{ratio}")

    for n in (3, 5, 11, 101, 1001):
        loop = rate(lambda s, n=n: python_loop_fp(n, s), args.seconds)
        fp = rate(lambda s, n=n: run_episode(cell("soft_fp", n, s)), args.seconds)
        block = BLOCK * rate(
            lambda s, n=n: play_block([cell("soft_fp", n, s * BLOCK + k) for k in range(BLOCK)]), args.seconds
        )
        show(f"baseline: plain-Python loop FP, C{n}", loop, n)
        show(f"hivebench soft_fp run_episode, C{n}", fp, n, loop)
        show(f"hivebench soft_fp play_block of {BLOCK}, C{n}", block, n, loop)
    for method in METHODS:
        r = BLOCK * rate(
            lambda s, m=method: play_block([cell(m, 11, s * BLOCK + k) for k in range(BLOCK)]), args.seconds
        )
        show(f"play_block of {BLOCK} {method}, C11", r, 11)
    with tempfile.TemporaryDirectory() as tmp:
        r = rate(lambda s: write_episode(cell("soft_fp", 11, s), Path(tmp) / f"s{s}.parquet"), args.seconds)
        show("write_episode soft_fp, C11 (run + Parquet file)", r, 11)


if __name__ == "__main__":
    main()
