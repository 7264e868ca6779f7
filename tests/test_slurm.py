"""The workflow on a real single-node SLURM cluster (scripts/slurm-cluster.sh: Debian's slurm-wlm and
munge), through `snakemake --profile profiles/slurm`: results equal a local run's byte for byte, and a
job cancelled with scancel is retried with no partial file left; jobs on the cluster share one spend
ledger and one rate limit with the run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    REPO,
    require_vllm,
    served_study,
    smollm2_method,
    snakemake_command,
    with_model,
    write_config,
)
from servers import FaultProxy, start_vllm, stop_vllm

from hivebench.spend.ledger import read_ledger

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]

CLUSTER = REPO / "scripts" / "slurm-cluster.sh"
# The profile, with the first status check after 2 s rather than its 6 (the plugin adds 10 s after each
# check that finds no job finished): the tests wait less on jobs of seconds.
PROFILE = ("--profile", str(REPO / "profiles/slurm"), "--slurm-init-seconds-before-status-checks", "2")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory):
    if os.geteuid() != 0 or shutil.which("apt-get") is None:  # a failure in CI (tests/conftest.py)
        pytest.skip("the SLURM tests need root and apt-get (Debian) to start their cluster")
    state = tmp_path_factory.mktemp("slurm")
    started = subprocess.run([str(CLUSTER), "start", str(state)], capture_output=True, text=True, timeout=600)
    assert started.returncode == 0, f"{CLUSTER} start failed:\n{started.stdout}\n{started.stderr}"
    yield state
    subprocess.run([str(CLUSTER), "stop", str(state)], capture_output=True, timeout=120)


def study(workdir: Path, llm: bool = True) -> Path:
    config: dict = {
        "tasks": {"cycle": {"kind": "coloring", "steps": 4}},
        "methods": {
            "random": {"kind": "random", "seeds_per_job": 3},
            "soft_fp": {"kind": "soft_fp", "p": 0.3, "seeds_per_job": 3},
            # dtype auto: float32 on a CPU without bf16 instructions; the local replay keeps it
            "smollm2": smollm2_method(dtype="auto", seeds_per_job=1, resources={"runtime": 20, "mem_mb": 3000}),
        },
        "studies": {
            "s": {
                "tasks": ["cycle"],
                "methods": ["random", "soft_fp", "smollm2"],
                "populations": [3],
                "seeds": 3,
                "method_seeds": {"smollm2": 1},
            }
        },
        "report": {"bootstrap_resamples": 200},
    }
    if not llm:
        del config["methods"]["smollm2"], config["studies"]["s"]["method_seeds"]
        config["studies"]["s"]["methods"].remove("smollm2")
    workdir.mkdir(parents=True, exist_ok=True)
    return write_config(workdir / "config.yaml", config)


def snakemake(workdir: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(snakemake_command(workdir, *args), capture_output=True, text=True, timeout=timeout)


def cell_files(workdir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workdir)): p.read_bytes() for p in sorted((workdir / "results/episodes").rglob("s*.parquet"))
    }


def test_a_study_through_slurm_equals_a_local_run(slurm: Path, tmp_path: Path) -> None:
    remote = tmp_path / "slurm"
    study(remote)
    run = snakemake(remote, *PROFILE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    log = run.stdout + run.stderr
    submitted = set(re.findall(r"SLURM jobid (\d+)", log)) | set(re.findall(r"SLURM run ID: \S+ .*?(\d+)", log))
    # prepare_model, 2 classical blocks and 1 LLM block ran as SLURM jobs; the aggregation ran locally.
    assert len(submitted) >= 4, log[-3000:]
    controller = (slurm / "log" / "slurmctld.log").read_text()
    for job in submitted:
        assert f"JobId={job}" in controller
    local = tmp_path / "local"
    study(local)
    with_model(local, remote / "models" / "SmolLM2-135M-Instruct")  # converted by the SLURM job above
    # The LLM cell replays the SLURM run's model replies (its wall-clock latencies are in the file).
    cache = next((remote / "results/episodes").rglob("*.calls.jsonl"))
    target = local / cache.relative_to(remote)
    target.parent.mkdir(parents=True)
    shutil.copy(cache, target)
    assert snakemake(local, "--cores", "2").returncode == 0
    remote_cells, local_cells = cell_files(remote), cell_files(local)
    assert len(remote_cells) == 3 + 3 + 1 and remote_cells == local_cells


def test_a_cancelled_job_is_resubmitted_and_leaves_no_partial_file(slurm: Path, tmp_path: Path) -> None:
    work = tmp_path / "cancel"
    study(work, llm=False)
    process = subprocess.Popen(
        snakemake_command(work, *PROFILE),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    cancelled = None
    deadline = time.monotonic() + 300
    while cancelled is None and time.monotonic() < deadline and process.poll() is None:
        running = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING", "-o", "%i"], capture_output=True, text=True
        ).stdout.split()
        if running:
            cancelled = running[0]
            subprocess.run(["scancel", cancelled], check=True)
        time.sleep(0.2)
    output, _ = process.communicate(timeout=600)
    assert cancelled is not None, output[-3000:]
    assert process.returncode == 0, output[-3000:]
    assert f"SLURM-job '{cancelled}' failed" in output and "CANCELLED" in output
    assert len(cell_files(work)) == 6
    assert not [p for p in work.rglob("*.tmp")], "an interrupted write left a partial file"


@pytest.fixture(scope="module")
def served(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM serving the tiny model, started for this module (the session's server lives on another
    pytest-xdist worker: this module's tests share the cluster, which one worker starts)."""
    require_vllm()
    process, url = start_vllm(tiny_model, "tiny", tmp_path_factory.mktemp("vllm") / "server.log")
    yield url
    stop_vllm(process)


@pytest.mark.vllm
def test_slurm_jobs_share_one_ledger_and_one_rate_limit(slurm: Path, served: str, tmp_path: Path) -> None:
    proxy = FaultProxy(served)
    try:
        limit = {"base_url": proxy.url, "model": "tiny", "requests_per_minute": 90}
        served_study(tmp_path, proxy.url, population=4, seeds=2, rate_limits=[limit])
        run = snakemake(tmp_path, *PROFILE)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    finally:
        proxy.stop()
    records = [json.loads(p.read_text()) for p in (tmp_path / "logs/episodes").rglob("*.job.json")]
    assert len(records) == 2 and all(r["state"] == "done" for r in records)
    assert len(set(re.findall(r"SLURM jobid (\d+)", run.stdout + run.stderr))) >= 2  # both on the cluster
    ledger = read_ledger(tmp_path / "results/spend/ledger.json")
    assert ledger["spent"]["s"]["tiny"]["tiny"]["calls"] == proxy.forwarded and ledger["held"] == {}
    times = sorted(proxy.arrivals)
    rate = (len(times) - 1) / (times[-1] - times[0]) * 60
    assert len(times) >= 32 and 0.9 * 90 <= rate <= 1.1 * 90, (len(times), rate)
