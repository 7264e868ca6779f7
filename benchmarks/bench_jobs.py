"""What a job's start-up costs, and what playing several tasks in one job saves (`tasks_per_job`).

The study: Silo-Bench's 30 tasks on degree-three ports, nine rounds, the three Waggle controls
(FixedSwarm, NoComm, NativeMsg), N = 16, five seeds (450 cells): the classical part of the Waggle
matrix's Silo-Bench study at its smallest N. Baseline: the same study with `tasks_per_job: 1` (a job
per task, 90 jobs); hivebench's default plays ten tasks a job (9 jobs). Each is run by the real
workflow (`snakemake --cores N`) from an empty folder, wall time, one run each; the cells are the same
(the script checks the two episodes tables hold the same cells).
Usage: python benchmarks/bench_jobs.py [--cores 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]


def study(tasks_per_job: int) -> dict:
    methods = {name: {"kind": name, "tasks_per_job": tasks_per_job} for name in ("fixedswarm", "nocomm", "nativemsg")}
    return {
        "anchors": str(REPO / "config/anchors.yaml"),
        "tasks": {"silo": {"kind": "silobench", "task": "all", "topology": "regular3", "rounds": 9}},
        "methods": methods,
        "studies": {"silo": {"tasks": ["silo"], "methods": list(methods), "populations": [16], "seeds": 5}},
    }


def played(tasks_per_job: int, cores: int) -> tuple[float, pd.DataFrame]:
    """Wall seconds of the whole workflow from an empty folder, and the episodes table it made."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-jobs-{tasks_per_job}-"))
    (folder / "config.yaml").write_text(yaml.safe_dump(study(tasks_per_job)))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(folder)]
    command += ["--configfile", str(folder / "config.yaml"), "--cores", str(cores), "-q"]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return seconds, pd.read_parquet(folder / "results/silo/episodes.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    single, one = played(1, args.cores)
    grouped, ten = played(10, args.cores)
    assert sorted(one["cell_hash"]) == sorted(ten["cell_hash"]) and len(one) == 450
    print(f"450 cells, {args.cores} cores, the whole workflow from an empty folder:")
    print(f"  a job per task (90 episode jobs):       {single:6.1f} s")
    print(f"  ten tasks a job (9 episode jobs):       {grouped:6.1f} s  ({single / grouped:.2f}x faster)")


if __name__ == "__main__":
    main()
