"""Wall time of the whole default study from a clean results/, and what job blocks buy.

1. `snakemake --cores 2` on config/config.yaml in an empty temporary folder (all 1,500 cells,
   collect and report).
2. The same 100 cells (C11, five methods, 20 seeds) run as one job per cell (seeds_per_job: 1,
   the baseline) and as one job per (method, population) block (seeds_per_job: 100).
Usage: python benchmarks/bench_default_study.py [--cores N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def snakemake(workdir: Path, config: dict, cores: int) -> float:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(workdir),
            "--configfile",
            str(workdir / "config.yaml"),
            "--cores",
            str(cores),
            "--quiet",
            "all",
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        seconds = snakemake(Path(tmp), default, args.cores)
    cells = len(default["studies"]["loopbench"]["methods"]) * 3 * default["studies"]["loopbench"]["seeds"]
    print(f"default study: {cells} cells, {seconds:.1f} s wall with --cores {args.cores}")

    small = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    small["studies"]["loopbench"].update(populations=[11], seeds=20)
    timings = {}
    for per_job in (1, 100):
        for method in small["methods"].values():
            method["seeds_per_job"] = per_job
        with tempfile.TemporaryDirectory() as tmp:
            timings[per_job] = snakemake(Path(tmp), small, args.cores)
    print(f"100 cells, one job per cell (baseline): {timings[1]:.1f} s")
    print(
        f"100 cells, one job per block of seeds:  {timings[100]:.1f} s   ratio {timings[1] / timings[100]:.1f}x faster"
    )


if __name__ == "__main__":
    main()
