"""Counterfactual replays of a LoopBench cell of the real SmolLM2 with one agent switched to soft_fp:
the forecast comes before any call, the replay's new calls lie between its two figures and equal the
forecast given the replay's own replies, and agents the switch has not reached yet keep their replies."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import smollm2_method, with_model, write_config

from hivebench.cells import resolved_methods, study_blocks
from hivebench.config import load
from hivebench.counterfactual import (
    CounterfactualError,
    forecast,
    own_cache,
    recorded_replies,
    swapped_cell,
)
from hivebench.engine.writer import write_episode
from hivebench.models.cache import cache_records
from hivebench.paths import calls_path, cell_path

CONFIG = {
    "tasks": {"cycle": {"kind": "coloring", "steps": 6}},
    "methods": {
        "smollm2": smollm2_method(dtype="float32"),
        "soft_fp": {"kind": "soft_fp", "p": 0.3},
    },
    "studies": {"s": {"tasks": ["cycle"], "methods": ["smollm2"], "populations": [5], "seeds": 1}},
}


def hivebench(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hivebench", *args], cwd=workdir, capture_output=True, text=True, timeout=600
    )


def test_a_swapped_agent_replays_the_rest_from_the_cache_as_forecast(
    smollm2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_model(tmp_path, smollm2)
    write_config(tmp_path / "config.yaml", CONFIG)
    monkeypatch.chdir(tmp_path)
    config = load("config.yaml")
    cell = next(study_blocks(config, "s", tmp_path)[0].cells())
    write_episode(cell, cell_path(cell))
    original = Path(calls_path(cell))
    calls = sum(1 for _ in cache_records(original))

    dry = hivebench(
        tmp_path, "counterfactual", cell_path(cell), "--swap", "0=soft_fp", "--forecast", "-c", "config.yaml"
    )
    assert dry.returncode == 0, dry.stderr
    figures = re.search(r"forecast (\d+) new calls .* at most (\d+)", dry.stdout)
    assert figures is not None, dry.stdout
    expected, at_most = int(figures.group(1)), int(figures.group(2))
    swapped = swapped_cell(cell, {0: resolved_methods(config, "soft_fp", "loopbench", tmp_path)[0][1]})
    assert not Path(cell_path(swapped)).exists() and not Path(own_cache(swapped)).exists()  # nothing made
    assert 0 < expected <= at_most

    run = hivebench(tmp_path, "counterfactual", cell_path(cell), "--swap", "0=soft_fp", "-c", "config.yaml")
    assert run.returncode == 0, run.stderr
    made = int(re.search(r"(\d+) new calls made", run.stdout).group(1))
    own = Path(own_cache(swapped))
    assert made == sum(1 for _ in cache_records(own)) - calls  # the copy of the cell's cache, and the new calls
    assert expected <= made <= at_most
    # Given the replay's own replies for the calls it made anew, the forecast is exact.
    assert forecast(swapped, original, recorded_replies(swapped, own)).new_calls == made

    # Agent 0 plays soft_fp; until the switch changes what an agent sees, it replies as before.
    before = pq.read_table(cell_path(cell)).to_pylist()
    after = pq.read_table(cell_path(swapped)).to_pylist()
    assert {r["member"] for r in after if r["agent"] == 0 and r["step"] > 0} == {"soft_fp"}
    first = {(r["step"], r["agent"]): r["reply"] for r in before if r["step"] == 1}
    assert all(first[(1, r["agent"])] == r["reply"] for r in after if r["step"] == 1 and r["agent"] != 0)
    # A rerun makes no call again.
    again = hivebench(tmp_path, "counterfactual", cell_path(cell), "--swap", "0=soft_fp", "-c", "config.yaml")
    assert "forecast 0 new calls" in again.stdout and "0 new calls made" in again.stdout
    assert not list(Path("results/episodes").glob(".dry-*"))  # the dry runs left nothing


def test_switches_that_cannot_be_replayed_are_refused_by_name(tmp_path: Path) -> None:
    write_config(tmp_path / "config.yaml", CONFIG)
    config = load(str(tmp_path / "config.yaml"))
    cell = next(study_blocks(config, "s", tmp_path)[0].cells())
    soft_fp = resolved_methods(config, "soft_fp", "loopbench", tmp_path)[0][1]
    with pytest.raises(CounterfactualError, match="agent 5: the cell has agents 0 to 4"):
        swapped_cell(cell, {5: soft_fp})
    with pytest.raises(CounterfactualError, match="calls a model"):
        swapped_cell(cell, {1: cell["method"]})
    with pytest.raises(CounterfactualError, match="every agent is switched"):
        swapped_cell(cell, dict.fromkeys(range(5), soft_fp))
    bad = hivebench(tmp_path, "counterfactual", "nothing.parquet", "--swap", "0=soft_fp", "-c", "config.yaml")
    assert bad.returncode == 2 and "nothing.parquet: no such episode file" in bad.stderr
