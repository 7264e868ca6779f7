"""What asynchronous clocks cost the engine: decisions applied per second on clocks against the
synchronous loop's agent-steps per second, on the same cells, in the same process and run (issue 42:
within 3x). A job block of --block seeds of one classical cell per case, played (not written) for
--seconds each, one block first, untimed.

Baseline: the synchronous loop on the same block (agent-steps: N x rounds x seeds per block). Under
clocks an agent applies fewer decisions than it has rounds (a period of 2: about half), so the rate is
of decisions applied, each the clocks' counterpart of an agent-step (its ask and its apply).
Usage: python benchmarks/bench_clocks.py [--seconds S] [--block B]
"""

from __future__ import annotations

import argparse

from bench_episodes import rate  # benchmarks/ is the script's folder: its first import path
from bench_perturb import cells

from hivebench.engine.loop import play_block

CASES = [  # (task of the default config, classical method, N)
    ("cycle", "soft_fp", 64),
    ("cycle", "soft_fp", 1024),
    ("coloring-ws", "distributed", 64),
    ("coloring-ws", "distributed", 1024),
]
CLOCKS = {
    "period-2": {"clocks": {"period": 2, "jitter": 1}},
    "latency-1-3": {"clocks": {"latency": 1, "latency_max": 3}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--block", type=int, default=4, help="seeds per block")
    args = parser.parse_args()
    print(f"{'task / method / N':32s} {'arm':12s} {'blocks/s':>9s} {'decisions/s':>12s} {'ratio':>6s}")
    for task, method, n in CASES:
        base = None
        for name, block in cells(task, method, n, args.block, CLOCKS).items():
            records = play_block(block)
            per_block = sum(
                r.summary["decisions"] if name != "none" else n * (len(r.agents["step"]) // n - 1) for r in records
            )
            blocks = rate(lambda _, block=block: play_block(block), args.seconds)
            decisions = blocks * per_block
            base = base or decisions
            print(
                f"{f'{task} / {method} / {n}':32s} {name:12s} {blocks:9.2f} {decisions:12.0f} {base / decisions:5.2f}x"
            )


if __name__ == "__main__":
    main()
