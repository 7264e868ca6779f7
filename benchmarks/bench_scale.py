"""Snakemake's own overhead on a 10,000-cell study, against a trivial Snakefile with as many jobs.

The study: 5 classical methods x 4 populations x 500 seeds = 10,000 cells in blocks of
`--seeds-per-job` (default 10: 1,000 episode jobs). The baseline: a Snakefile of one rule with the
same number of independent jobs, each with one short param, nothing imported.
Measured (wall time, one run each):
1. dry run (`snakemake -n`, the DAG build) from an empty folder, study vs baseline;
2. a no-op rerun once everything is up to date (after a real run of both: minutes for the study);
3. a one-method parameter change: how many jobs the dry run schedules (should be that method's only).
Usage: python benchmarks/bench_scale.py [--seeds-per-job N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

TRIVIAL = """
N = int(config["jobs"])
rule all:
    input: expand("out/{i}.txt", i=range(N))
rule job:
    output: "out/{i}.txt"
    params: p=lambda wc: wc.i
    shell: "echo {params.p} > {output}"
"""


def study(seeds_per_job: int, p: float = 0.3) -> dict:
    methods = {
        "soft_fp": {"kind": "soft_fp", "p": p},
        "soft_cfp": {"kind": "soft_cfp", "p": 0.3},
        "conservative_random": {"kind": "conservative_random"},
        "random": {"kind": "random"},
        "greedy": {"kind": "greedy"},
    }
    for method in methods.values():
        method["seeds_per_job"] = seeds_per_job
    return {
        "tasks": {"cycle": {"kind": "coloring", "steps": 15}},
        "methods": methods,
        "studies": {
            "scale": {"tasks": ["cycle"], "methods": list(methods), "populations": [3, 5, 7, 11], "seeds": 500}
        },
    }


def run(args: list[str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return seconds, result.stdout


def planned(stdout: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", stdout, re.M) if m[1] != "total"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds-per-job", type=int, default=10)
    args = parser.parse_args()
    common = ["--cores", "2", "--scheduler", "greedy"]
    with tempfile.TemporaryDirectory() as scratch:
        work, base = Path(scratch) / "study", Path(scratch) / "trivial"
        work.mkdir()
        base.mkdir()
        (work / "config.yaml").write_text(yaml.safe_dump(study(args.seeds_per_job)))
        (base / "Snakefile").write_text(TRIVIAL)
        flags = ["-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", *common]
        dry, out = run([*flags, "-n"], work)
        jobs = planned(out)["episodes"]
        trivial_flags = ["--config", f"jobs={jobs}", *common]
        trivial_dry, _ = run([*trivial_flags, "-n"], base)
        print(
            f"10,000 cells in {jobs} episode jobs (seeds per job {args.seeds_per_job}); baseline: {jobs} trivial jobs"
        )
        print(f"  dry run (DAG build): study {dry:.2f} s, trivial {trivial_dry:.2f} s, ratio {dry / trivial_dry:.2f}")
        full, _ = run([*flags, "-q"], work)
        trivial_full, _ = run([*trivial_flags, "-q"], base)
        print(f"  full run: study {full:.1f} s (10,000 episodes), trivial {trivial_full:.1f} s")
        noop, out = run([*flags, "-n"], work)
        trivial_noop, _ = run([*trivial_flags, "-n"], base)
        assert "Nothing to be done" in out, out[-2000:]
        print(
            f"  no-op rerun (all up to date): study {noop:.2f} s, trivial {trivial_noop:.2f} s, "
            f"ratio {noop / trivial_noop:.2f}"
        )
        (work / "config.yaml").write_text(yaml.safe_dump(study(args.seeds_per_job, p=0.25)))
        changed, out = run([*flags, "-n"], work)
        plan = planned(out)
        print(
            f"  soft_fp.p changed: {plan.get('episodes', 0)} episode jobs scheduled of {jobs} "
            f"(soft_fp has {jobs // 5}); dry run {changed:.2f} s"
        )


if __name__ == "__main__":
    main()
