"""Damage a fault probe found (issue 21), in real Snakemake runs: what `hivebench verify` and
`hivebench status` say of it must be what `snakemake -n` plans, a dry run must change nothing, and the
rerun must put the results back as they were."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import tiny_config, write_config
from test_integrity import change_summary
from test_workflow import planned_jobs, snakemake

from hivebench.cells import expand_jobs
from hivebench.config import validate
from hivebench.engine.jobs import run_job

CELLS = "results/episodes/tiny/loopbench/cycle"
EPISODES = "results/tiny/episodes.parquet"


@pytest.fixture
def finished(tiny_study: Path, tmp_path: Path) -> Path:
    """A copy of the finished run of tiny_config() (file times kept): tests change their copy."""
    return Path(shutil.copytree(tiny_study, tmp_path / "run", symlinks=True))


def hivebench(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hivebench", *args, "config.yaml"], cwd=workdir, capture_output=True, text=True
    )


def status(workdir: Path) -> dict:
    result = hivebench(workdir, "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def damaged(report: dict) -> int:
    return sum(row["damaged"] for row in report["cells"])


def keep_time(path: Path, data: bytes) -> None:
    """Write new content and give the file back its old modification time (a disk error, `cp -p`)."""
    before = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def damage_a_page(path: Path) -> None:
    """Flip a byte in the last page of a Parquet file's first column chunk, size and time kept: the
    footer still reads, only a full read (page checksums) sees it."""
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    data = bytearray(path.read_bytes())
    start = min(filter(None, (chunk.dictionary_page_offset, chunk.data_page_offset)))
    data[start + chunk.total_compressed_size - 1] ^= 0xFF
    keep_time(path, bytes(data))


def episode_value(workdir: Path, seed: int, column: str) -> object:
    rows = pq.read_table(workdir / EPISODES).to_pylist()
    (row,) = [r for r in rows if r["method"] == "random" and r["population"] == 3 and r["seed"] == seed]
    return row[column]


def snapshot(workdir: Path) -> dict[str, tuple[int, str]]:
    """Every file outside Snakemake's own folder: its modification time and content hash."""
    return {
        str(path.relative_to(workdir)): (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
        for path in workdir.rglob("*")
        if path.is_file() and ".snakemake" not in path.parts
    }


def test_a_changed_summary_in_a_cell_footer_is_found_named_and_redone(finished: Path) -> None:
    """Issue 21: a byte of a cell's stored summary changed, file time kept: verify said "no damage" and
    exited 0, status said done, and a rerun of the block kept the wrong value."""
    cell = finished / CELLS / "random/n3/s2.parquet"
    right = episode_value(finished, 2, "proximity")
    before = cell.stat()
    change_summary(cell)  # the copy of its metadata that pyarrow reads
    os.utime(cell, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert damaged(status(finished)) == 0  # file times and framing are intact: only a full read sees it
    result = hivebench(finished, "verify")
    assert result.returncode == 1, result.stdout
    assert f"{CELLS}/random/n3/s2.parquet: " in result.stdout and "no damage" not in result.stdout
    report = status(finished)  # now status counts it, as Snakemake plans it
    assert damaged(report) == 1 and any(
        line.startswith(f"{CELLS}/random/n3/s2.parquet: ") for line in report["problems"]
    )
    assert planned_jobs(finished)["episodes"] == 1
    snakemake(finished)
    assert episode_value(finished, 2, "proximity") == right
    assert damaged(status(finished)) == 0 and hivebench(finished, "verify").returncode == 0


def test_a_truncated_study_table_is_named_and_collected_again(finished: Path) -> None:
    """Issue 21: neither status nor verify noticed, and the rerun skipped collect ("magic bytes")."""
    table = finished / EPISODES
    table.write_bytes(table.read_bytes()[:300])
    assert any(line.startswith(f"{EPISODES}: ") for line in status(finished)["problems"])
    result = hivebench(finished, "verify")
    assert result.returncode == 1 and f"{EPISODES}: " in result.stdout
    assert planned_jobs(finished)["collect"] == 1
    snakemake(finished)
    assert pq.read_table(finished / EPISODES).num_rows == 40 and status(finished)["problems"] == []


def test_another_cells_file_with_an_older_time_is_damage_to_both(finished: Path) -> None:
    """Issue 21: status said 1 pending with no reason while Snakemake had nothing to do."""
    source, target = (finished / CELLS / f"random/n3/s{seed}.parquet" for seed in (1, 2))
    summary = (finished / CELLS / "random/n3/block0-4.parquet").stat().st_mtime_ns
    target.write_bytes(source.read_bytes())
    os.utime(target, ns=(summary - 10**9, summary - 10**9))
    report = status(finished)
    assert damaged(report) == 1 and sum(row["pending"] for row in report["cells"]) == 0
    (line,) = [line for line in report["problems"] if line.startswith(f"{CELLS}/random/n3/s2.parquet: ")]
    assert "another cell" in line
    assert planned_jobs(finished)["episodes"] == 1
    snakemake(finished)
    report = status(finished)
    assert sum(row["done"] for row in report["cells"]) == 40 and report["problems"] == []


def test_a_dry_run_plans_the_rerun_and_changes_nothing(finished: Path) -> None:
    """Issue 21: `snakemake -n` deleted the damaged block's summary, after which status no longer
    named the damaged file."""
    truncated = finished / CELLS / "random/n3/s2.parquet"
    truncated.write_bytes(truncated.read_bytes()[:200])
    before = snapshot(finished)
    problems = status(finished)["problems"]
    assert planned_jobs(finished)["episodes"] == 1
    assert planned_jobs(finished)["episodes"] == 1  # twice: the first dry run changed nothing it needs
    assert snapshot(finished) == before
    assert status(finished)["problems"] == problems and damaged(status(finished)) == 1


def test_damage_found_by_verify_reruns_under_the_profile(finished: Path) -> None:
    """The rerun verify sets up happens under the default profile too, and only once (a plain run:
    test_a_changed_summary_in_a_cell_footer_is_found_named_and_redone)."""
    cell = finished / CELLS / "soft_fp/n5/s7.parquet"
    damage_a_page(cell)
    assert hivebench(finished, "verify").returncode == 1
    snakemake(finished, "--profile", str(Path(__file__).resolve().parents[1] / "profiles/default"))
    log = (finished / "logs/episodes/tiny/loopbench/cycle/soft_fp/n5/block5-9.log").read_text()
    assert "1 of 5 cells computed, 4 already done" in log
    assert "Nothing to be done" in snakemake(finished, "-n").stdout
    assert hivebench(finished, "verify").returncode == 0


def test_verify_names_the_damaged_side_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: verify named s0.parquet when s0.messages.parquet was damaged."""
    monkeypatch.chdir(tmp_path)
    config = {
        "tasks": {"t": {"kind": "agentsnet", "problem": "coloring", "family": "watts_strogatz", "rounds": 2}},
        "methods": {"m": {"kind": "distributed", "seeds_per_job": 5}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [8], "seeds": 2}},
    }
    write_config(tmp_path / "config.yaml", config)
    (block,) = expand_jobs(validate(config, "config.yaml"), "config.yaml")["s"]
    run_job(block.spec(), block.summary_path)
    folder = Path(block.summary_path).parent
    keep_time(folder / "s0.messages.parquet", (folder / "s1.messages.parquet").read_bytes())
    result = hivebench(tmp_path, "verify")
    assert result.returncode == 1
    named = f"{folder}/s0.messages.parquet: is not the side table its cell file was written with"
    assert named in result.stdout and f"{folder}/s0.parquet: " not in result.stdout


def test_damage_verify_found_in_a_study_table_is_named_and_collected_again(finished: Path) -> None:
    """A page of the study's episodes table damaged in place, size and time kept: only verify's full
    read sees it; what it records, status names and Snakemake plans, until collect writes it again."""
    table = finished / EPISODES
    damage_a_page(table)
    assert status(finished)["problems"] == []  # size, time and framing intact
    result = hivebench(finished, "verify")
    assert result.returncode == 1 and f"{EPISODES}: does not read back whole" in result.stdout
    assert f"{EPISODES}: does not read back whole (the next snakemake run redoes it)" in status(finished)["problems"]
    assert planned_jobs(finished)["collect"] == 1
    snakemake(finished)
    assert pq.read_table(finished / EPISODES).num_rows == 40 and status(finished)["problems"] == []
    assert hivebench(finished, "verify").returncode == 0


@pytest.mark.workflow
def test_a_snakemake_without_the_method_damage_reruns_through_is_refused_on_every_run(tmp_path: Path) -> None:
    """rules/common.smk forces damaged jobs through Snakemake's private Workflow._build_dag: a
    Snakemake without it fails every run (here one with nothing damaged, nothing run), naming its
    version, not only a run that has damage to redo."""
    write_config(tmp_path / "config.yaml", tiny_config())
    repo = Path(__file__).resolve().parents[1]
    code = (
        "import sys; from snakemake.cli import main; import snakemake.workflow as w; "
        "del w.Workflow._build_dag; sys.argv[0] = 'snakemake'; main()"
    )
    args = [
        "-s",
        str(repo / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--configfile",
        str(tmp_path / "config.yaml"),
        "--cores",
        "1",
        "-n",
    ]
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert result.returncode != 0
    assert "Workflow._build_dag, which Snakemake 9." in result.stderr + result.stdout
