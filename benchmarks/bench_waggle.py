"""The Waggle controls' speed: agent-steps per second of whole blocks (observations, the runtime's
field, validator and compiler, the task, the record), in-process.

Baseline, measured in the same run on the same cells: the suite's classical method, the one each
control's private proposal comes from: SwarmBench's `heuristic` (Pursuit, 100 rounds) and Silo-Bench's
`distributed` flood (III-23 on degree-three ports, 9 rounds). The issue's target: FixedSwarm within 3x
of it (ratio >= 0.33). NoComm and NativeMsg run on the same runtime without the field.
Usage: python benchmarks/bench_waggle.py [--n N] [--block B] [--seconds S]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench_episodes import rate  # benchmarks/ is the script's folder: its first import path

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block

SUITES = {
    "SwarmBench Pursuit": ({"kind": "swarmbench", "task": "pursuit", "rounds": 100}, "heuristic"),
    "Silo-Bench III-23 ports": (
        {"kind": "silobench", "task": "III-23", "topology": "regular3", "rounds": 9},
        "distributed",
    ),
}
CONTROLS = ("nocomm", "nativemsg", "fixedswarm", "scripted_controller")


def cells(task: dict, kind: str, n: int, seeds: list[int]) -> list[dict]:
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [n], "seeds": seeds}},
    }
    return list(all_blocks(validate(config, "bench.yaml"), Path("."))["s"][0].cells())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=64, help="agents per episode")
    parser.add_argument("--block", type=int, default=4, help="seeds a block plays in lockstep")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    print(f"N = {args.n}, blocks of {args.block} seeds")
    print(f"{'suite':26s} {'method':20s} {'agent-steps/s':>14s} {'vs baseline':>12s}")
    for suite, (task, baseline_kind) in SUITES.items():
        rounds = task["rounds"] + 1
        baseline = None
        for kind in (baseline_kind, *CONTROLS):

            def block(i: int, kind: str = kind, task: dict = task) -> None:
                seeds = list(range(i * args.block, (i + 1) * args.block))
                play_block(cells(task, kind, args.n, seeds))

            steps = rate(block, args.seconds) * args.block * args.n * rounds
            baseline = baseline or steps
            print(f"{suite:26s} {kind:20s} {steps:14,.0f} {steps / baseline:11.2f}x")


if __name__ == "__main__":
    main()
