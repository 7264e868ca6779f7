"""SwarmBench beside its reference: random agents at the paper's size (N = 12 on 10 x 10, k = 5, 100
rounds), each task's score over seeds 0..S-1 as mean ± standard deviation, under hivebench's own rules
and under `compat: reference`, with the reference environment's own figures beside them.

    .venv/bin/python benchmarks/fidelity_swarmbench.py [--seeds 10] [--method random]
    .venv/bin/python benchmarks/fidelity_swarmbench.py --each --seeds 400 [--method heuristic]

`--each` measures every difference alone: the tasks it touches, on hivebench's rules with that one
setting on the reference's side, against hivebench's rules, on the same seeds (the mean difference and
its standard error over seeds; Foraging's maze at N = 32, where the two mazes differ).

The reference's figures: RUC-GSAI/YuLan-SwarmIntell's SwarmEnvironment (commit c164678) driven with
uniform random moves over seeds 0..9 (one numpy generator per seed, in agent order; issue 23). Its
Flocking always plays its seed 42's level, so that row compares different levels.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.suites.swarmbench import DIFFERENCES, ONLY_ON

TASKS = ("pursuit", "synchronization", "foraging", "flocking", "transport")
# mean, standard deviation over seeds 0..9 of the reference environment under random moves
REFERENCE = {
    "pursuit": (0.70, 0.95),
    "synchronization": (0.0, 0.0),
    "foraging": (0.30, 0.48),
    "flocking": (9.70, 1.34),
    "transport": (0.0, 0.0),
}


def scores(
    method: str, seeds: int, settings: dict, tasks: tuple[str, ...] = TASKS, population: int = 12
) -> dict[str, np.ndarray]:
    entries = {task: {"kind": "swarmbench", "task": task, **settings} for task in tasks}
    config = {
        "tasks": entries,
        "methods": {method: {"kind": method, "seeds_per_job": seeds}},
        "studies": {
            "paper": {"tasks": list(entries), "methods": [method], "populations": [population], "seeds": seeds}
        },
    }
    blocks = all_blocks(validate(config, "fidelity.yaml"), Path("."))["paper"]
    found = {}
    for block in blocks:
        cells = list(block.cells())
        found[cells[0]["task"]["params"]["task"]] = np.array([r.summary["score"] for r in play_block(cells)])
    return found


def spread(values: np.ndarray) -> str:
    return f"{values.mean():5.2f} ± {values.std(ddof=1):4.2f}"


def each(method: str, seeds: int) -> None:
    """Every difference alone against hivebench's rules, on the tasks it touches."""
    print(f"{method} agents, 100 rounds, seeds 0..{seeds - 1}: the reference's side of one setting - hivebench's")
    for difference in DIFFERENCES:
        key = difference.key
        tasks = (ONLY_ON[key],) if key in ONLY_ON else TASKS
        population = 32 if key == "foraging_maze" else 12
        ours = scores(method, seeds, {}, tasks, population)
        theirs = scores(method, seeds, {key: difference.reference}, tasks, population)
        for task in tasks:
            change = theirs[task] - ours[task]
            se = change.std(ddof=1) / np.sqrt(seeds)
            print(
                f"{key:18s} {task:16s} N={population:<3d} {ours[task].mean():6.2f} -> {theirs[task].mean():6.2f}"
                f"  ({change.mean():+.2f} ± {se:.2f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--method", default="random", choices=["random", "heuristic"])
    parser.add_argument("--each", action="store_true", help="measure every difference alone")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.each:
        each(args.method, args.seeds)
        print(f"({time.perf_counter() - start:.0f} s)")
        return
    ours = scores(args.method, args.seeds, {"compat": "hivebench"})
    theirs = scores(args.method, args.seeds, {"compat": "reference"})
    print(f"{args.method} agents, N = 12 on 10 x 10, 100 rounds, seeds 0..{args.seeds - 1}: mean ± sd")
    print(f"{'task':16s} {'hivebench':>12s} {'compat: reference':>18s} {'reference code':>15s}")
    for task in TASKS:
        reference = f"{REFERENCE[task][0]:5.2f} ± {REFERENCE[task][1]:4.2f}"
        print(f"{task:16s} {spread(ours[task]):>12s} {spread(theirs[task]):>18s} {reference:>15s}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
