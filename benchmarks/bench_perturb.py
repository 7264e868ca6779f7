"""What a perturbation costs a classical cell: job blocks of one suite's classical baseline played in
lockstep (`play_block`), unperturbed and under each perturbation, in the same process and run; and
the same blocks played and written as a job writes them (each cell's Parquet files, `write_episode`).

Baseline: the same block unperturbed. The must: a perturbed classical cell costs at most 1.3x the
unperturbed one (issue 41). Blocks of --block seeds, timed over --seconds each (steady state: one
block first, untimed). Arms ending -c keep the medium's counts without its `transit` table.
Usage: python benchmarks/bench_perturb.py [--seconds S] [--block B] [--tasks cycle ...]
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import yaml
from bench_episodes import rate  # benchmarks/ is the script's folder: its first import path

from hivebench.cells import study_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.engine.writer import write_episode

CONFIG = Path(__file__).parents[1] / "config" / "config.yaml"
CASES = [  # (task of the default config, classical method, N)
    ("cycle", "soft_fp", 11),
    ("coloring-ws", "distributed", 16),
    ("matching-ws", "distributed", 16),
    ("swarm-foraging", "heuristic", 16),
    ("silo-waggle", "distributed", 16),
]
PERTURBATIONS = {
    "loss-0.1": {"medium": {"loss": 0.1}},
    "delay-2": {"medium": {"delay": 2}},
    "loss-0.1-c": {"medium": {"loss": 0.1, "transit": False}},  # -c: counts only, no transit table
    "delay-2-c": {"medium": {"delay": 2, "transit": False}},
    "crash-0.25": {"faults": {"kind": "crash", "fraction": 0.25}},
    "stuck-0.25": {"faults": {"kind": "stuck", "fraction": 0.25}},
    "active-0.7": {"activation": {"probability": 0.7}},
    "period-2": {"clocks": {"period": 2}},
    "latency-1-3": {"clocks": {"latency": 1, "latency_max": 3}},
}


def cells(task: str, method: str, n: int, seeds: int, perturbations: dict | None = None) -> dict[str, list[dict]]:
    """The block of each arm (`none`: unperturbed) of one task and method, under these perturbations
    (PERTURBATIONS unless given)."""
    perturbations = PERTURBATIONS if perturbations is None else perturbations
    config = yaml.safe_load(CONFIG.read_text())
    config["perturbations"] = copy.deepcopy(perturbations)
    names = ["none", *perturbations]
    config["studies"] = {
        "b": {"tasks": [task], "methods": [method], "populations": [n], "seeds": seeds, "perturbations": names}
    }
    config = validate(config, str(CONFIG))
    return {
        block.shared.get("perturbation", {}).get("name", "none"): list(block.cells())
        for block in study_blocks(config, "b", CONFIG.parent)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--block", type=int, default=10, help="seeds per block")
    parser.add_argument("--tasks", nargs="*", default=[c[0] for c in CASES], help="of the cases' tasks, these")
    args = parser.parse_args()
    print(f"{'task / method / N':36s} {'arm':12s} {'ms/cell':>8s} {'cost':>6s} {'written':>8s} {'cost':>6s}")
    folder = Path(tempfile.mkdtemp())

    def written(block: list[dict]) -> None:
        for k, (cell, record) in enumerate(zip(block, play_block(block))):
            write_episode(cell, folder / f"s{k}.parquet", record)

    for task, method, n in (case for case in CASES if case[0] in args.tasks):
        base: tuple[float, float] | None = None
        for name, block in cells(task, method, n, args.block).items():
            played = 1000 / rate(lambda _, block=block: play_block(block), args.seconds) / len(block)
            kept = 1000 / rate(lambda _, block=block: written(block), args.seconds) / len(block)
            base = base or (played, kept)
            row = f"{played:8.2f} {played / base[0]:5.2f}x {kept:8.2f} {kept / base[1]:5.2f}x"
            print(f"{f'{task} / {method} / {n}':36s} {name:12s} {row}")


if __name__ == "__main__":
    main()
