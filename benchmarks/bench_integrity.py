"""What checking results for damage costs, on the 10,000-cell study of bench_scale.py.

The cells are run in-process (no Snakemake), then each check is timed against the baseline every
Snakemake run already pays when it reads the workflow: expanding the config into job blocks.
1. the quick check the workflow makes on every run (Block.damage: file times and framing bytes);
2. `hivebench status` (the quick check plus each cell's footer);
3. `hivebench verify` (every cell and summary read back in full, page checksums checked).
Usage: python benchmarks/bench_integrity.py [--seeds 500]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench_scale import study

from hivebench.cells import all_blocks, rerun_damaged
from hivebench.config import validate
from hivebench.runtime import run_block
from hivebench.status import status
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
        run_time = timed(lambda: [run_block(b.spec(), b.summary_path) for b in blocks["scale"]])
        print(f"{cells:,} cells in {len(blocks['scale'])} blocks, run in-process in {run_time:.1f} s")
        expand = timed(lambda: all_blocks(config, Path(".")))
        quick = timed(lambda: list(rerun_damaged(blocks["scale"])))
        report = timed(lambda: status(blocks, {}))
        deep = timed(lambda: list(rerun_damaged(blocks["scale"], deep_damage)))
        print(f"  baseline, expanding the config into blocks: {expand * 1e3:.0f} ms")
        for name, seconds in (("quick check on every run", quick), ("hivebench status", report), ("hivebench verify", deep)):
            print(f"  {name}: {seconds * 1e3:.0f} ms ({seconds / cells * 1e6:.1f} us per cell), {seconds / expand:.1f}x the baseline")


if __name__ == "__main__":
    main()
