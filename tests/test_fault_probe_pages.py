"""Faults a probe found in real Snakemake runs: a study's episode pages deleted by hand (one page, or
the whole folder) are redone, and named by `hivebench status` and `hivebench verify`; the jobs a run
killed with kill -9 was running are counted as interrupted, not pending."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import snakemake_command, tiny_config, write_config
from test_workflow import planned_jobs, snakemake

pytestmark = pytest.mark.workflow

PAGES = "reports/tiny/episodes"
PAGE = f"{PAGES}/loopbench/cycle/random/n3/s0.html"
CELLS = "results/episodes/tiny/loopbench/cycle"


def hivebench(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "hivebench", *args, "config.yaml"]
    return subprocess.run(command, cwd=workdir, capture_output=True, text=True)


def status(workdir: Path) -> dict:
    result = hivebench(workdir, "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def counts(report: dict, state: str) -> int:
    return sum(row.get(state, 0) for row in report["cells"])


def small_config() -> dict:
    """tiny_config() with one population and five seeds: two jobs, one drawn page each."""
    config = tiny_config()
    config["studies"]["tiny"].update(populations=[3], seeds=5)
    return config


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("pages")
    write_config(workdir / "config.yaml", small_config())
    snakemake(workdir)
    return workdir


def dead_links(workdir: Path) -> list[str]:
    """The episode pages the study's report page links that are not there."""
    page = (workdir / "reports/tiny/index.html").read_text()
    links = re.findall(r'href="(episodes/[^"]+)"', page)
    assert links, "the report page links no episode page"
    return [link for link in links if not (workdir / "reports/tiny" / link).is_file()]


@pytest.mark.parametrize("deleted", [PAGE, PAGES], ids=["a page", "the folder"])
def test_deleted_episode_pages_are_named_and_redone(finished: Path, tmp_path: Path, deleted: str) -> None:
    workdir = shutil.copytree(finished, tmp_path / "study", symlinks=True)  # keeps the mtimes
    cells = {p: p.stat().st_mtime_ns for p in (workdir / CELLS).rglob("*.parquet")}
    target = workdir / deleted
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()
    assert dead_links(workdir)
    said = f"{deleted}: missing"
    assert f"{said} (the next snakemake run redoes it)" in status(workdir)["problems"]
    verified = hivebench(workdir, "verify")
    assert verified.returncode == 1 and said in verified.stdout.splitlines()
    # the pages, and what links them, only: no episode, table or section is redone
    assert planned_jobs(workdir) == {"episode_pages": 1, "report": 1, "landing": 1, "all": 1}
    snakemake(workdir)
    assert dead_links(workdir) == []
    assert {p: p.stat().st_mtime_ns for p in (workdir / CELLS).rglob("*.parquet")} == cells
    assert status(workdir)["problems"] == []
    assert hivebench(workdir, "verify").returncode == 0
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout


def incomplete_mark(workdir: Path, output: str) -> Path:
    """Where Snakemake marks a job's output while it runs (a short path: one file, URL-safe base64)."""
    return workdir / ".snakemake/incomplete" / base64.urlsafe_b64encode(output.encode()).decode()


def test_the_jobs_of_a_run_killed_with_kill_9_are_interrupted(tmp_path: Path) -> None:
    config = small_config()
    config["tasks"]["cycle"]["steps"] = 1000  # the job runs for seconds: Snakemake is killed as it starts
    config["studies"]["tiny"].update(methods=["random"], populations=[21])
    write_config(tmp_path / "config.yaml", config)
    summary = f"{CELLS}/random/n21/block0-4.parquet"
    command = snakemake_command(tmp_path, "--cores", "1")
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    mark = incomplete_mark(tmp_path, summary)
    deadline = time.monotonic() + 120
    while not mark.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert mark.exists(), "Snakemake never started the episode job"
    os.killpg(run.pid, signal.SIGKILL)  # Snakemake and its job, as the job starts
    run.wait()
    assert not (tmp_path / summary).exists()
    report = status(tmp_path)
    assert (counts(report, "interrupted"), counts(report, "pending"), counts(report, "failed")) == (5, 0, 0)
    said = f"job {summary}: interrupted (its Snakemake run was killed while it ran; the next run redoes it)"
    assert said in report["problems"]
    snakemake(tmp_path, "--unlock")
    assert counts(status(tmp_path), "interrupted") == 5  # Snakemake's mark stays until the job reruns
    snakemake(tmp_path)
    report = status(tmp_path)
    assert (counts(report, "done"), counts(report, "interrupted")) == (5, 0) and report["problems"] == []
    assert not mark.exists()
