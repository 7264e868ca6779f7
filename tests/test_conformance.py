"""What every registered suite must do on the one engine (in the style of PettingZoo's api and seed
tests): the same cell gives the same episode, alone or played in lockstep with other seeds of its job
block, the per-agent table has one row per (state, agent),
side tables are the ones the task kind declares, methods serve only the suites they declare, and a
study spanning every suite runs through the real workflow. A new suite adds its example here."""

from __future__ import annotations

import copy
import json
import re

import pandas as pd
import pyarrow as pa
import pytest

from conftest import REPO, write_config
from hivebench.cells import expand_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play, play_block, stored
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from test_workflow import planned_jobs, snakemake

# A small task of each suite, with the population it runs at.
EXAMPLES = {
    "loopbench": ({"kind": "coloring", "graph": "cycle", "steps": 6}, 5),
    "agentsnet": ({"kind": "agentsnet", "problem": "matching", "family": "delaunay", "rounds": 4}, 8),
    "swarmbench": ({"kind": "swarmbench", "task": "pursuit", "rounds": 12}, 8),
    "silobench": ({"kind": "silobench", "task": "III-24", "protocol": "broadcast", "rounds": 2}, 8),
}


def test_every_suite_has_an_example():
    assert set(EXAMPLES) == set(SUITE_OBJECTS)


def cells(suite: str, method_kind: str, seeds: int = 2) -> list[dict]:
    task, population = EXAMPLES[suite]
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": method_kind}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": seeds}},
    }
    return [cell for block in expand_blocks(validate(config, "x.yaml"), "x.yaml")["s"] for cell in block.cells()]


CLASSICAL = [(suite, kind) for suite, s in SUITE_OBJECTS.items() for kind in s.methods]


def same(a, b) -> bool:
    return (
        stored(pa.table(a.agents)).equals(stored(pa.table(b.agents)))
        and json.dumps(a.summary, sort_keys=True) == json.dumps(b.summary, sort_keys=True)  # NaN equals NaN here
        and a.tables.keys() == b.tables.keys() and all(stored(a.table(k)).equals(stored(b.table(k))) for k in a.tables)
    )  # fmt: skip


@pytest.mark.parametrize(("suite", "kind"), CLASSICAL)
def test_the_same_cell_gives_the_same_episode(suite, kind):
    cell = cells(suite, kind)[0]
    assert same(play(copy.deepcopy(cell)), play(copy.deepcopy(cell)))


@pytest.mark.parametrize(("suite", "kind"), CLASSICAL)
def test_a_cell_gives_the_same_episode_alone_and_in_lockstep_with_its_block(suite, kind):
    block = cells(suite, kind, seeds=5)
    together = play_block(copy.deepcopy(block))
    assert len(together) == 5 and all(same(play(cell), record) for cell, record in zip(block, together))


@pytest.mark.parametrize("suite", list(SUITE_OBJECTS))
def test_the_seed_reaches_the_random_streams(suite):
    """Every suite's `random` baseline plays differently on different seeds."""
    first, second = cells(suite, "random")
    assert not same(play(first), play(second))


@pytest.mark.parametrize(("suite", "kind"), CLASSICAL)
def test_the_record_has_one_row_per_state_and_agent_and_the_declared_tables(suite, kind):
    cell = cells(suite, kind, seeds=1)[0]
    task = task_kind(cell["task"]["kind"]).load()(cell["task"]["params"], cell["population"])
    task.reset([cell["seed"]])
    record = play(cell)
    frame = pa.table(record.agents).to_pandas()
    n = cell["population"]
    assert len(frame) == (task.horizon + 1) * n
    assert (frame.groupby("step")["agent"].apply(list) == [list(range(n))] * (task.horizon + 1)).all()
    assert set(record.tables) == set(task_kind(cell["task"]["kind"]).tables)
    assert {m.name for m in SUITE_OBJECTS[suite].metrics} <= set(record.summary)


@pytest.mark.parametrize("suite", list(SUITE_OBJECTS))
def test_a_method_runs_only_the_suites_it_serves(suite):
    for kind, method in METHODS.items():
        if suite in method.impls:
            continue
        task, population = EXAMPLES[suite]
        config = {
            "tasks": {"t": task},
            "methods": {"m": {"kind": kind}},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": 1}},
        }
        with pytest.raises(ConfigError, match=f"method 'm' \\(kind {kind}, .*\\) cannot run task 't' of suite {suite}"):
            validate(config, "x.yaml")


@pytest.mark.workflow
def test_a_study_spanning_every_suite_runs_through_the_workflow(tmp_path):
    """`random` serves every suite: one study, one method, every suite's example task."""
    tasks = {suite: task for suite, (task, _) in EXAMPLES.items()}
    config = {
        "tasks": tasks,
        "methods": {"random": {"kind": "random", "seeds_per_job": 3}},
        "studies": {
            "all": {"tasks": list(tasks), "methods": ["random"], "populations": [5, 8], "seeds": 3},
        },
        "report": {"bootstrap_resamples": 200},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)
    episodes = pd.read_parquet(tmp_path / "results/all/episodes.parquet")
    assert set(episodes["suite"]) == set(SUITE_OBJECTS) and len(episodes) == len(SUITE_OBJECTS) * 2 * 3
    page = (tmp_path / "reports/all/index.html").read_text()
    assert ("Across suites" in page) == (len(SUITE_OBJECTS) > 1)
    for suite in SUITE_OBJECTS:
        assert f'<section id="{suite}">' in page
        assert (tmp_path / f"reports/all/{suite}/section.html").is_file()
    for suite, (task, _) in EXAMPLES.items():  # each cell's side tables lie beside it
        for name in task_kind(task["kind"]).tables:
            assert next((tmp_path / f"results/episodes/all/{suite}").rglob(f"s0.{name}.parquet")).is_file()
    assert planned_jobs(tmp_path) == {}  # nothing left to do
    snakemake(tmp_path, "--report", str(tmp_path / "report.html"))  # every suite's files have captions
    page = (tmp_path / "report.html").read_text()
    captions = [*(REPO / "rules/captions").glob("*.rst"), *(p for s in SUITE_OBJECTS for p in (REPO / "rules/captions" / s).glob("*.rst"))]
    assert len(captions) > len(SUITE_OBJECTS)
    for caption in captions:
        words = max(re.findall(r"[\w ,]+", caption.read_text()), key=len)  # its longest plain run of words
        assert len(words) > 40 and words in page, f"{caption.relative_to(REPO)}: {words!r} not in the report"
