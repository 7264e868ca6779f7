"""Jobs: the blocks of several of a study's tasks played by one job (tasks_per_job), and a config cut
down to some of its methods (`--config methods=a,b`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hivebench.cells import all_blocks, all_jobs, job_cells
from hivebench.config import ConfigError, select_methods, validate
from hivebench.damage import job_damage
from hivebench.engine.jobs import run_job
from hivebench.ids import digest
from hivebench.paths import cell_path
from hivebench.store import write_json


def silo_config(**method: object) -> dict:
    """Three Silo-Bench tasks (one entry), the flood and an LLM method, two populations, four seeds."""
    return {
        "tasks": {"silo": {"kind": "silobench", "task": ["I-01", "I-02", "II-11"], "rounds": 2}},
        "methods": {
            "flood": {"kind": "distributed", "seeds_per_job": 2, **method},
            "model": {"kind": "llm", "backend": "transformers", "model": "SmolLM2-135M-Instruct"},
        },
        "studies": {"s": {"tasks": ["silo"], "methods": ["flood", "model"], "populations": [3, 4], "seeds": 4}},
    }


def jobs_of(config: dict, method: str) -> list:
    return [
        job for job in all_jobs(validate(config, "x.yaml"), Path("."))["s"] if job.shared["method"]["name"] == method
    ]


def test_a_classical_method_plays_a_studys_tasks_in_one_job_and_a_model_one_task_a_job():
    flood = jobs_of(silo_config(), "flood")
    assert len(flood) == 2 * 2  # populations x seed ranges, each job all three tasks
    assert all(
        [b.shared["task"]["name"] for b in job.blocks] == ["silo.I-01", "silo.I-02", "silo.II-11"] for job in flood
    )
    assert flood[0].summary_path == "results/episodes/s/silobench/silo.I-01..silo.II-11/flood/n3/block0-1.parquet"
    assert flood[0].spec() == {"blocks": [block.spec() for block in flood[0].blocks]}
    model = jobs_of(silo_config(), "model")
    assert len(model) == 3 * 2 and all(len(job.blocks) == 1 for job in model)  # one block: its spec as before
    assert model[0].spec() == model[0].blocks[0].spec()
    two = jobs_of(silo_config(tasks_per_job=2), "flood")
    assert sorted(len(job.blocks) for job in two) == [1] * 4 + [2] * 4  # two tasks, then the third
    # the cells are the same however many tasks a job plays
    cells = {digest(cell) for job in flood for cell in job.cells()}
    assert cells == {digest(cell) for job in two for cell in job.cells()}
    blocks = all_blocks(validate(silo_config(), "x.yaml"), Path("."))["s"]
    assert cells == {
        digest(cell) for block in blocks if block.shared["method"]["name"] == "flood" for cell in block.cells()
    }


def test_a_job_of_several_tasks_writes_every_cell_and_one_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = jobs_of(silo_config(), "flood")[0]
    assert run_job(job.spec(), job.summary_path) == 6
    summary = pq.read_table(job.summary_path).to_pandas()
    assert list(summary["task"]) == ["silo.I-01"] * 2 + ["silo.I-02"] * 2 + ["silo.II-11"] * 2
    assert list(summary["cell_hash"]) == [digest(cell) for cell in job.cells()] == job_cells(job.spec())["hashes"]
    assert run_job(job.spec(), job.summary_path) == 0  # every cell on disk: none computed again
    write_json({"state": "done", **job_cells(job.spec())}, job.record_path)
    assert job_damage(job) == {}
    last = cell_path(list(job.cells())[-1])
    Path(last).unlink()
    assert job_damage(job) == {last: "missing"}


def test_a_config_cut_to_some_methods_keeps_their_cells_and_contrasts():
    config = silo_config()
    config["methods"]["local"] = {"kind": "local"}
    config["studies"]["s"]["methods"] = ["flood", "model", "local"]
    config["studies"]["s"]["contrasts"] = {"pairs": [["model", "flood"], ["local", "flood"]]}
    config["studies"]["llm"] = {"tasks": ["silo"], "methods": ["model"], "populations": [3], "seeds": 1}
    whole = validate(config, "x.yaml")
    cut = select_methods(whole, ["flood", "local"], "x.yaml")
    assert list(cut["studies"]) == ["s"] and cut["studies"]["s"]["methods"] == ["flood", "local"]
    assert cut["studies"]["s"]["contrasts"] == {"pairs": [["local", "flood"]]}
    kept = {digest(c) for job in all_jobs(cut, Path("."))["s"] for c in job.cells()}
    every = {digest(c) for job in all_jobs(whole, Path("."))["s"] for c in job.cells()}
    assert kept < every and len(kept) == 2 * 3 * 2 * 4  # methods x tasks x populations x seeds
    with pytest.raises(ConfigError, match="--config methods: no method 'fload'"):
        select_methods(whole, ["fload"], "x.yaml")


def test_the_estimate_sums_each_methods_rows_and_prices_only_what_has_a_price():
    from hivebench.estimate import Estimate, totals

    rows = [  # the expected figure, then the bound (calls, input and output tokens)
        Estimate("a", "w", "w-0", 4, 10, 100, 2_000_000, 1_000_000, False, None, None, 200, 5_000_000, 2_000_000),
        Estimate("b", "w", "w-0", 8, 10, 300, 3_000_000, 1_000_000, True, None, None, 600, 7_000_000, 2_000_000),
        Estimate("a", "s", "gpt-4o", 4, 5, 50, 1_000_000, 500_000, False, None, None, 100, 2_000_000, 1_000_000),
    ]
    lines = totals(rows, {"gpt-4o": {"input": 2.5, "output": 10.0}}).splitlines()
    assert lines[1:] == [
        "w\t20\t400\t~5000000\t2000000\t-\t800\t~12000000\t4000000\t-",
        "s\t5\t50\t1000000\t500000\t7.50\t100\t2000000\t1000000\t15.00",
    ]


def test_each_replicate_has_its_own_estimate_row_with_its_own_model_and_price():
    from hivebench.estimate import estimate, table, totals

    config = {
        "tasks": {"pursuit": {"kind": "swarmbench", "task": "pursuit", "rounds": 2}},
        "methods": {
            "w": {
                "kind": "waggle",
                "backend": "openai",
                "base_url": "http://localhost:8000/v1",
                "api_key_env": None,
                "model": "w-0",
                "replicates": {"seed0": {}, "seed1": {"model": "w-1"}},
            }
        },
        "studies": {"s": {"tasks": ["pursuit"], "methods": ["w"], "populations": [4], "seeds": 2}},
    }
    from hivebench.agents.waggle.estimate import prompt_tokens

    before = prompt_tokens.cache_info()
    rows = estimate(all_blocks(validate(config, "x.yaml"), Path("."))["s"])
    after = prompt_tokens.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)  # the episode is played once
    assert [(r.label, r.model, r.cells) for r in rows] == [("w (seed0)", "w-0", 2), ("w (seed1)", "w-1", 2)]
    assert rows[0].calls == rows[1].calls > 0
    prices = {"w-1": {"input": 1.0, "output": 1.0}}
    lines = table(rows, prices).splitlines()
    assert lines[1].split("\t")[8] == "-" and lines[2].split("\t")[8] != "-"  # only w-1 has a price
    assert totals(rows, prices).splitlines()[1].split("\t")[:3] == ["w", "4", str(2 * rows[0].calls)]
