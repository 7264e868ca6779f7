"""When things go wrong in a real Snakemake run: damaged results redone (Snakemake and `hivebench
status` agree), a run killed with kill -9 resumed after `--unlock`, an unwritable folder failing its
own job while keep-going finishes the others, a broken config file named with its line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, read_only, snakemake_command, tiny_config, write_config
from test_workflow import planned_jobs, rerun_of, snakemake

pytestmark = pytest.mark.workflow

CELLS = "results/episodes/tiny/loopbench/cycle"


def hivebench_status(workdir: Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "hivebench", "status", "config.yaml", "--json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def counts(report: dict, state: str) -> int:
    return sum(row[state] for row in report["cells"])


@pytest.fixture
def finished(tiny_study: Path, tmp_path: Path) -> Path:
    """A copy of the finished run of tiny_config() (file times kept): tests change their copy."""
    return Path(shutil.copytree(tiny_study, tmp_path / "run", symlinks=True))


def test_damaged_results_are_redone_and_status_agrees(finished: Path) -> None:
    truncated = finished / CELLS / "random/n3/s2.parquet"
    truncated.write_bytes(truncated.read_bytes()[:200])
    (finished / CELLS / "soft_fp/n5/s7.parquet").unlink()
    (finished / CELLS / "random/n5/block5-9.parquet").write_bytes(b"overwritten")
    report = hivebench_status(finished)
    assert counts(report, "damaged") == 2 and counts(report, "done") == 38
    assert len(report["problems"]) == 3
    assert planned_jobs(finished) == rerun_of(3, pages=True)  # random/n3/block0-4 holds a drawn seed
    snakemake(finished)
    logs = {
        block: (finished / "logs/episodes/tiny/loopbench/cycle" / f"{block}.log").read_text()
        for block in ("random/n3/block0-4", "soft_fp/n5/block5-9", "random/n5/block5-9")
    }
    assert "1 of 5 cells computed, 4 already done" in logs["random/n3/block0-4"]
    assert "1 of 5 cells computed, 4 already done" in logs["soft_fp/n5/block5-9"]
    assert "0 of 5 cells computed, 5 already done" in logs["random/n5/block5-9"]
    report = hivebench_status(finished)
    assert counts(report, "done") == 40 and report["problems"] == []
    assert "Nothing to be done" in snakemake(finished, "-n").stdout


def test_a_run_killed_with_kill_9_resumes_after_unlock(tmp_path: Path) -> None:
    config = tiny_config()
    config["tasks"]["cycle"]["steps"] = 100  # a C2001 cell takes about a second: the kill lands mid-block
    config["studies"]["tiny"]["populations"] = [3, 2001]
    write_config(tmp_path / "config.yaml", config)
    command = snakemake_command(tmp_path, "--cores", "2")
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list((tmp_path / CELLS).glob("*/n2001/s*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGKILL)  # Snakemake and its jobs, mid-run
    run.wait()
    report = hivebench_status(tmp_path)
    assert "no Snakemake process runs here: a run was killed. `snakemake --unlock` frees it" in report["lock"]
    assert counts(report, "done") < 40
    # every cell finished before the kill survives the recovery untouched: same bytes, same mtime
    finished = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / CELLS).rglob("s*.parquet")}
    assert len(finished) == counts(report, "done") > 0
    refused = snakemake(tmp_path, check=False)
    assert refused.returncode != 0 and "--unlock" in refused.stdout + refused.stderr
    snakemake(tmp_path, "--unlock")
    snakemake(tmp_path)
    report = hivebench_status(tmp_path)
    assert counts(report, "done") == 40 and report["lock"] is None
    assert not list(tmp_path.rglob("*.tmp"))
    changed = [
        str(p.relative_to(tmp_path)) for p, kept in finished.items() if (p.read_bytes(), p.stat().st_mtime_ns) != kept
    ]
    assert not changed, f"cells finished before the kill were written again: {changed}"


def test_an_unwritable_folder_fails_its_job_and_keep_going_finishes_the_rest(tmp_path: Path) -> None:
    write_config(tmp_path / "config.yaml", tiny_config())
    with read_only(tmp_path / CELLS / "soft_fp/n5"):
        result = snakemake(tmp_path, "--keep-going", check=False)
    assert result.returncode != 0
    assert len(list((tmp_path / "results/episodes").rglob("block*.parquet"))) == 6  # the other jobs
    logs = list((tmp_path / "logs/episodes/tiny/loopbench/cycle/soft_fp/n5").glob("block*.log"))
    assert len(logs) == 2
    for log in logs:
        (line,) = log.read_text().strip().splitlines()  # one line, no traceback
        assert line.startswith(f"hivebench episodes: error: [Errno 1] cannot write {CELLS}/soft_fp/n5/s")
    report = hivebench_status(tmp_path)
    assert counts(report, "failed") == 10 and counts(report, "done") == 30
    assert all("failed (exit 2): [Errno 1] cannot write" in line for line in report["problems"])


def test_a_yaml_error_through_the_workflow_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("tasks:\n  cycle: {kind: coloring\nmethods: {}\n")
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--config",
        f"file={path}",
        "-n",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert f"invalid hivebench configuration {path}" in said and f'in "{path}", line 3' in said
