"""Episodes: determinism, the Parquet layout and its metadata, the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import REPO

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.jobs import run_job
from hivebench.engine.writer import write_episode
from hivebench.ids import digest
from hivebench.paths import cell_path
from hivebench.store import CELL_KEY, HASH_KEY, SUMMARY_KEY


def first_cell(config, method="soft_fp", population=5, seed=3):
    blocks = all_blocks(validate(config, "x.yaml"), Path("."))["tiny"]
    for block in blocks:
        for cell in block.cells():
            if (cell["method"]["name"], cell["population"], cell["seed"]) == (method, population, seed):
                return cell
    raise LookupError


def test_same_cell_gives_a_byte_identical_parquet(config, tmp_path):
    cell = first_cell(config)
    write_episode(cell, tmp_path / "a.parquet")
    write_episode(cell, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    other = dict(cell, seed=4)
    write_episode(other, tmp_path / "c.parquet")
    assert not pd.read_parquet(tmp_path / "a.parquet").equals(pd.read_parquet(tmp_path / "c.parquet"))


def test_parquet_rows_and_metadata(config, tmp_path):
    cell = first_cell(config)
    summary = write_episode(cell, tmp_path / "e.parquet")
    frame = pd.read_parquet(tmp_path / "e.parquet")
    assert list(frame.columns) == ["step", "agent", "color", "conflicts", "changed"]
    assert len(frame) == 16 * 5  # states 0..15, five agents
    assert (frame[frame.step == 0].color == 0).all()  # init: same
    per_step = frame.groupby("step").conflicts.sum() // 2  # each conflicting edge counted at both ends
    assert per_step.tolist() == summary["conflicts"]
    metadata = pq.read_schema(tmp_path / "e.parquet").metadata
    assert json.loads(metadata[CELL_KEY]) == cell
    assert metadata[HASH_KEY].decode() == digest(cell)
    assert json.loads(metadata[SUMMARY_KEY]) == summary
    assert summary["graph"] == "C5" and summary["conf_best"] == 1 and summary["initial_conflicts"] == 5


def test_methods_on_the_same_seed_share_the_initial_state(config):
    config["tasks"]["cycle"]["init"] = "random"
    config["studies"]["tiny"]["populations"] = [11]
    starts = set()
    for method in ("random", "soft_fp"):
        cell = first_cell(config, method=method, population=11, seed=7)
        from hivebench.engine.writer import run_episode

        table, _ = run_episode(cell)
        starts.add(tuple(table.to_pandas().query("step == 0").color))
    assert len(starts) == 1


def test_a_block_keeps_cells_already_done_and_redoes_stale_ones(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = next(b for b in all_blocks(validate(config, "x.yaml"), Path("."))["tiny"])
    assert run_job(block.spec(), "summary.parquet") == 5
    first = Path(cell_path(next(block.cells())))
    before = first.stat().st_mtime_ns
    assert run_job(block.spec(), "summary.parquet") == 0
    assert first.stat().st_mtime_ns == before
    stale = block.spec()
    stale["task"] = {**stale["task"], "version": 99}
    assert run_job(stale, "summary.parquet") == 5
    rows = pd.read_parquet("summary.parquet")
    assert len(rows) == 5 and set(rows.columns) >= {"cell_hash", "proximity", "stability", "conflicts"}


def test_a_block_played_in_parts_gives_the_cells_it_gives_whole(config, tmp_path, monkeypatch):
    """A lockstep job plays at most LOCKSTEP_AGENTS agents at once; how it splits changes no cell."""
    import hivebench.engine.jobs as jobs

    monkeypatch.chdir(tmp_path)
    block = next(b for b in all_blocks(validate(config, "x.yaml"), Path("."))["tiny"])
    assert run_job(block.spec(), "whole.parquet") == 5
    whole = [pq.read_table(cell_path(cell)) for cell in block.cells()]
    for cell in block.cells():
        Path(cell_path(cell)).unlink()
    monkeypatch.setattr(jobs, "LOCKSTEP_AGENTS", 2 * block.shared["population"])  # groups of 2, 2, 1
    assert run_job(block.spec(), "parts.parquet") == 5
    assert [pq.read_table(cell_path(cell)) for cell in block.cells()] == whole
    assert pd.read_parquet("parts.parquet").equals(pd.read_parquet("whole.parquet"))


def test_cli_episode_from_flags_and_from_a_cell_json(config, tmp_path):
    from conftest import write_config

    path = write_config(tmp_path / "c.yaml", config)
    run = [sys.executable, "-m", "hivebench"]
    flags = subprocess.run(
        run
        + [
            "episode",
            "-c",
            str(path),
            "--task",
            "cycle",
            "--method",
            "soft_fp",
            "--population",
            "5",
            "--seed",
            "3",
            "--study",
            "tiny",
            "--out",
            str(tmp_path / "flags.parquet"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    cells = subprocess.run(run + ["cells", "-c", str(path), "--json"], capture_output=True, text=True, check=True)
    cell = next(
        c
        for c in map(json.loads, cells.stdout.splitlines())
        if (c["method"]["name"], c["population"], c["seed"]) == ("soft_fp", 5, 3)
    )
    (tmp_path / "cell.json").write_text(json.dumps(cell))
    subprocess.run(
        run + ["episode", "--cell", str(tmp_path / "cell.json"), "--out", str(tmp_path / "json.parquet")],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "flags.parquet").read_bytes() == (tmp_path / "json.parquet").read_bytes()
    assert json.loads(flags.stdout)["graph"] == "C5"


@pytest.mark.parametrize("missing", ["--seed", "--method"])
def test_cli_episode_says_what_is_missing(config, tmp_path, missing):
    args = {"--task": "cycle", "--method": "soft_fp", "--population": "5", "--seed": "1"}
    del args[missing]
    result = subprocess.run(
        [sys.executable, "-m", "hivebench", "episode", *[x for kv in args.items() for x in kv]],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and missing in result.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (
            [
                "episode",
                "-c",
                str(REPO / "config/config.yaml"),
                "--task",
                "cycle",
                "--method",
                "random",
                "--population",
                "2",
                "--seed",
                "0",
            ],
            "a cycle needs at least 3 nodes, got 2",
        ),
        (["episode", "--cell", "-"], "the cell lacks format, method"),
        (["episode", "--cell", "missing.json"], "No such file"),
        (
            ["episode", "--task", "cycle", "--method", "random", "--population", "5", "--seed", "-1"],
            "must be a non-negative integer",
        ),
        (["report", "--episodes", "missing.parquet", "--out", "r"], "error: missing.parquet"),
    ],
)
def test_cli_errors_are_messages_not_tracebacks(tmp_path, args, message):
    result = subprocess.run(
        [sys.executable, "-m", "hivebench", *args],
        input='{"bad": 1}',
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": ""},
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_wrong_conf_best_is_an_error_not_a_proximity_above_100(config):
    from hivebench.engine.writer import run_episode

    config["tasks"]["k4"] = {
        "kind": "coloring",
        "graph": {"edges": [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]},
        "conf_best": 3,
    }
    config["studies"]["tiny"]["tasks"] = ["k4"]
    with pytest.raises(ConfigError, match="tasks.k4.conf_best: 3 is wrong: the optimum is 2"):
        validate(config, "x.yaml")  # found before any job
    del config["tasks"]["k4"]["conf_best"]
    cell = next(all_blocks(validate(config, "x.yaml"), Path("."))["tiny"][0].cells())
    cell["task"]["params"]["conf_best"] = 3  # a cell given by hand (`hivebench episode --cell`) is checked too
    with pytest.raises(ValueError, match="conf_best = 3 is wrong: the optimum of this graph with 2 colours is 2"):
        run_episode(cell)
