"""What asynchronous clocks cost the engine: events per second on clocks against the synchronous
loop's agent-steps per second, on the same cells, in the same process and run (issue 42: within 3x).
A job block of --block seeds of one classical cell per case, played (not written) for --seconds each,
one block first, untimed.

Baseline: the synchronous loop on the same block (agent-steps: N x rounds x seeds per block). Events
on clocks, as the Waggle paper's asynchronous contract names them: a call started (an agent asked
when its timer fires), a call completed (its decision applied) and a message delivered (AgentsNet's
agents message their neighbours; on the bare medium each message sent is delivered the round after,
the answer round reading the last; LoopBench's agents send none); no membership event arises on these
arms (no churn). Beside it the rates of calls alone (started and completed) and of decisions applied
alone (each the clocks' counterpart of an agent-step, its ask and its apply), a period of 2 applying
about one an agent every 2.5 rounds.
Usage: python benchmarks/bench_clocks.py [--seconds S] [--block B]
"""

from __future__ import annotations

import argparse

import numpy as np
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
    print(
        f"{'task / method / N':32s} {'arm':12s} {'blocks/s':>9s} {'events/s':>10s} {'ratio':>6s} "
        f"{'calls/s':>10s} {'ratio':>6s} {'decisions/s':>12s} {'ratio':>6s}"
    )
    for task, method, n in CASES:
        base = 0.0
        for name, block in cells(task, method, n, args.block, CLOCKS).items():
            records = play_block(block)
            if name == "none":
                events = calls = decisions = sum(n * (len(r.agents["step"]) // n - 1) for r in records)
            else:
                decisions = sum(r.summary["decisions"] for r in records)
                calls = decisions + sum(int(np.sum(r.agents["asked"])) for r in records)
                events = calls + sum(r.summary.get("messages", 0) for r in records)
            blocks = rate(lambda _, block=block: play_block(block), args.seconds)
            base = base or blocks * events
            rates = "".join(
                f" {blocks * count:{width}.0f} {base / (blocks * count):5.2f}x"
                for count, width in ((events, 10), (calls, 10), (decisions, 12))
            )
            print(f"{f'{task} / {method} / {n}':32s} {name:12s} {blocks:9.2f}{rates}")


if __name__ == "__main__":
    main()
