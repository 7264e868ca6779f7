"""Wall time of the whole default study from a clean results/, where it goes, and what job blocks buy.

1. `snakemake --cores 2` on config/config.yaml in an empty temporary folder, SmolLM2 already converted
   (hard links to models/ here, converted first if missing: the conversion is timed apart), every
   study, collect and report; with each job's wall time from Snakemake's log, summed by study and by
   rule, and the ten longest jobs.
2. The same 100 classical cells (C11, the five classical methods, 20 seeds) run as one job per cell
   (seeds_per_job: 1, the baseline) and as one job per (method, population) block (seeds_per_job: 100).
With --dtype, the local-model methods run in that precision instead of the config's `auto` (what the
default study costs on a CPU of the other kind, measured on this one).
Usage: python benchmarks/bench_default_study.py [--cores N] [--skip-blocks] [--dtype float32|bfloat16]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MODEL = "SmolLM2-135M-Instruct"
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$")


def snakemake(workdir: Path, config: dict, cores: int) -> tuple[float, str]:
    """Seconds of wall time and Snakemake's log of a run in `workdir`."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    command += ["--configfile", str(workdir / "config.yaml"), "--cores", str(cores), "all"]
    start = time.perf_counter()
    run = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, run.stdout + run.stderr


def job_seconds(log: str) -> list[tuple[float, str, str]]:
    """(seconds, rule, study) of each job: from the time stamp before its rule block to the one
    before its "Finished jobid" line (Snakemake stamps to the second)."""
    stamp, rule, started, finished, what = None, None, {}, {}, {}
    for line in log.splitlines():
        if m := STAMP.match(line):
            stamp = datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
        elif m := re.match(r"^(?:local)?rule (\w+):", line):
            rule = m[1]
        elif (m := re.match(r"^\s+jobid: (\d+)", line)) and rule:
            started[m[1]], what[m[1]] = stamp, (rule, "")
        elif (m := re.match(r"^\s+wildcards: .*?study=([^,\s]+)", line)) and started:
            last = list(started)[-1]
            what[last] = (what[last][0], m[1])
        elif m := re.match(r"^Finished jobid: (\d+)", line):
            finished[m[1]], rule = stamp, None
    return [((finished[j] - started[j]).total_seconds(), *what[j]) for j in finished if j in started]


def converted_model() -> Path:
    """SmolLM2 converted in models/ here (converting it now, timed, if it is not)."""
    from hivebench.models.builtin import prepare

    folder = REPO / "models" / MODEL
    if not (folder / "config.json").is_file():
        start = time.perf_counter()
        prepare(MODEL, folder)
        print(f"converted {MODEL}: {time.perf_counter() - start:.1f} s")
    return folder


def default_study(cores: int, dtype: str | None) -> None:
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for method in default["methods"].values():
        if dtype and method.get("dtype") == "auto":
            method["dtype"] = dtype
    model = converted_model()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(model, Path(tmp) / "models" / MODEL, copy_function=os.link)
        seconds, log = snakemake(Path(tmp), default, cores)
    jobs = job_seconds(log)
    precision = f"dtype {dtype}" if dtype else "dtype as configured"
    print(f"default study, model converted, {precision}: {seconds:.1f} s wall with --cores {cores}, {len(jobs)} jobs")
    for key, label in ((2, "study"), (1, "rule")):
        total: dict[str, float] = defaultdict(float)
        for job in jobs:
            total[job[key] or "(all studies)"] += job[0]
        print(
            f"  job seconds by {label}: "
            + ", ".join(f"{k} {v:.0f}" for k, v in sorted(total.items(), key=lambda kv: -kv[1]))
        )
    print(
        "  longest jobs: "
        + ", ".join(f"{rule} {study} {s:.0f} s" for s, rule, study in sorted(jobs, reverse=True)[:10])
    )


def blocks(cores: int) -> None:
    small = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    classical = [m for m in small["studies"]["loopbench"]["methods"] if small["methods"][m]["kind"] != "llm"]
    small["studies"] = {"loopbench": {"tasks": ["cycle"], "methods": classical, "populations": [11], "seeds": 20}}
    timings = {}
    for per_job in (1, 100):
        for method in small["methods"].values():
            method["seeds_per_job"] = per_job
        with tempfile.TemporaryDirectory() as tmp:
            timings[per_job] = snakemake(Path(tmp), small, cores)[0]
    print(f"100 classical cells, one job per cell (baseline): {timings[1]:.1f} s")
    print(
        f"100 classical cells, one job per block of seeds:  {timings[100]:.1f} s "
        f"({timings[1] / timings[100]:.1f}x faster)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--skip-blocks", action="store_true", help="only the default study")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], help="the local models' precision instead of auto")
    args = parser.parse_args()
    default_study(args.cores, args.dtype)
    if not args.skip_blocks:
        blocks(args.cores)


if __name__ == "__main__":
    main()
