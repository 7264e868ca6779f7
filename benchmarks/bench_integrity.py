"""What checking results for damage costs, on the 10,000-cell study of bench_scale.py.

The cells are run in-process, then each check is timed against the baseline every Snakemake run
already pays: a dry run (`snakemake -n`: reading the workflow, building the DAG of 1,000 jobs) of the
finished study, which includes the quick check.
1. the quick check the workflow makes on every run (study_damage: file times, framing bytes, each
   cell's hash in its footer, the jobs' records);
2. `hivebench status` (the quick check plus each cell's footer);
3. `hivebench verify` (every cell and summary read back in full, page checksums checked).
Usage: python benchmarks/bench_integrity.py [--seeds 500]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from bench_scale import REPO, study

from hivebench.cells import all_blocks, job_cells
from hivebench.config import validate
from hivebench.damage import study_damage
from hivebench.engine.jobs import run_job
from hivebench.status import status
from hivebench.store import write_json
from hivebench.verify import deep_damage


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=500)
    args = parser.parse_args()
    config = study(seeds_per_job=10)
    config["studies"]["scale"]["seeds"] = args.seeds
    config = validate(config, "bench")
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        blocks = all_blocks(config, Path("."))
        cells = sum(len(b.seeds) for b in blocks["scale"])
        run_time = timed(lambda: [run_job(b.spec(), b.summary_path) for b in blocks["scale"]])
        for b in blocks["scale"]:  # the record each job writes as it ends, which the quick check reads
            write_json({"state": "done", **job_cells(b.spec())}, b.record_path)
        print(f"{cells:,} cells in {len(blocks['scale'])} blocks, run in-process in {run_time:.1f} s")
        Path("config.yaml").write_text(yaml.safe_dump(config))
        command = [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--configfile",
            "config.yaml",
            "-n",
        ]
        dry = timed(lambda: subprocess.run(command, capture_output=True, check=True))
        quick = timed(lambda: study_damage("scale", blocks["scale"]))
        report = timed(lambda: status(blocks, {}))
        deep = timed(lambda: [deep_damage(block) for block in blocks["scale"]])
        print(f"  baseline, snakemake -n of the finished study: {dry:.2f} s")
        for name, seconds in (
            ("quick check on every run", quick),
            ("hivebench status", report),
            ("hivebench verify", deep),
        ):
            print(
                f"  {name}: {seconds:.2f} s ({seconds / cells * 1e6:.1f} us per cell), "
                f"{seconds / dry:.2f}x the baseline"
            )


if __name__ == "__main__":
    main()
