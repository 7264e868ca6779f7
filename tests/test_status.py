"""`hivebench status`: done, damaged, failed, interrupted, running and pending cells from the files on
disk and the jobs' records."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from hivebench.cells import all_jobs
from hivebench.config import validate
from hivebench.engine.jobs import run_job
from hivebench.paths import cell_path
from hivebench.status import status, table
from hivebench.verify import deep_damage, record_job_damage


def write_record(block, **record):
    path = Path(block.record_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"summary": block.summary_path, "host": socket.gethostname(), **record}))


def test_status_counts_each_state(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = all_jobs(validate(config, "test"), tmp_path)
    random_blocks = [b for b in blocks["tiny"] if b.shared["method"]["name"] == "random"]
    run_job(random_blocks[0].spec(), random_blocks[0].summary_path)  # 5 cells done
    Path(cell_path(next(random_blocks[0].cells()))).write_bytes(b"not parquet")  # ... of which 1 damaged
    write_record(random_blocks[1], state="failed", exit=2, error="boom")  # 5 cells failed
    write_record(random_blocks[2], state="running", pid=os.getpid())  # 5 cells running (this process lives)
    # a log that mentions a Traceback decides nothing: the record does
    Path(random_blocks[3].record_path).with_suffix("").with_suffix(".log").write_text(
        "Traceback (most recent call last):\n"
    )
    report = status(blocks, {})
    rows = {r["method"]: r for r in report.rows}
    counts = [rows["random"][k] for k in ("cells", "done", "damaged", "failed", "running", "pending")]
    assert counts == [20, 4, 1, 5, 5, 5]
    assert (rows["soft_fp"]["done"], rows["soft_fp"]["pending"]) == (0, 20)
    assert report.problems == [
        f"{cell_path(next(random_blocks[0].cells()))}: changed after its job finished "
        "(the next snakemake run redoes it)",
        f"job {random_blocks[1].summary_path}: failed (exit 2): boom",
    ]
    config["tasks"]["cycle"]["steps"] = 16  # a parameter change: finished cells become stale
    stale = {r["method"]: r for r in status(all_jobs(validate(config, "test"), tmp_path), {}).rows}
    assert stale["random"]["done"] == 0


def test_tables_for_people_and_for_scripts(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = status(all_jobs(validate(config, "test"), tmp_path), {}).rows
    people = table(rows).splitlines()
    assert people[0].split() == [
        "study",
        "method",
        "cells",
        "done",
        "damaged",
        "failed",
        "interrupted",
        "unfinished",
        "running",
        "pending",
        "llm_calls",
        "input_tokens",
        "output_tokens",
        "cost_usd",
    ]
    assert len({len(line) for line in people}) == 1  # aligned
    assert table(rows, "tsv").splitlines()[1].split("\t") == [
        "tiny",
        "random",
        "20",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "20",
        "0",
        "0",
        "0",
        "0.0000",
    ]


def test_status_counts_what_verify_recorded_and_names_a_study_table_that_is_not_whole(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = all_jobs(validate(config, "test"), tmp_path)
    block = blocks["tiny"][0]
    run_job(block.spec(), block.summary_path)
    cell = Path(cell_path(next(block.cells())))
    before = cell.stat()
    cell.write_bytes(cell.read_bytes().replace(b'"steps": 15', b'"steps": 16'))  # Parquet's copy of the summary
    os.utime(cell, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert status(blocks, {}).rows[0]["done"] == 5  # times and framing intact
    record_job_damage(block, deep_damage(block), os.stat(block.summary_path).st_mtime_ns)
    report = status(blocks, {})
    assert (report.rows[0]["done"], report.rows[0]["damaged"]) == (4, 1)
    assert report.problems == [
        f"{cell}: its footer's two copies of its metadata differ (the next snakemake run redoes it)"
    ]
    table = Path("results/tiny/episodes.parquet")
    table.parent.mkdir(parents=True)
    table.write_bytes(b"PAR1 cut")
    assert f"{table}: not a whole Parquet file (the next snakemake run redoes it)" in status(blocks, {}).problems
    run_job(block.spec(), block.summary_path)  # the rerun writes a new summary: the record no longer applies
    assert status(blocks, {}).rows[0]["damaged"] == 0
