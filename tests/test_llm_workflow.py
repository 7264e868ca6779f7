"""A LoopBench study with SmolLM2 through the real Snakemake workflow: the model is converted by
its rule, the LLM cells run beside a classical baseline, costs come from the price table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import write_config
from test_workflow import planned_jobs, snakemake

pytestmark = pytest.mark.workflow


def test_smollm2_episodes_through_snakemake(tmp_path: Path) -> None:
    config = {
        "tasks": {"cycle": {"kind": "coloring", "steps": 3}},
        "methods": {
            "random": {"kind": "random", "seeds_per_job": 10},
            "smollm2": {
                "kind": "llm",
                "backend": "transformers",
                "model": "SmolLM2-135M-Instruct",
                "history": 2,
                "notes_chars": 30,
                "max_tokens": 48,
                "seeds_per_job": 1,
            },
        },
        "studies": {
            "llm": {
                "tasks": ["cycle"],
                "methods": ["random", "smollm2"],
                "populations": [3],
                "seeds": 4,
                "method_seeds": {"smollm2": 1},
            }
        },
        "prices": {"SmolLM2-135M-Instruct": {"input": 0.5, "output": 2.0}},
        "report": {"bootstrap_resamples": 200},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)

    assert (tmp_path / "models/SmolLM2-135M-Instruct/config.json").is_file()
    episodes = pd.read_parquet(tmp_path / "results/llm/episodes.parquet")
    llm = episodes[episodes.method == "smollm2"].iloc[0]
    assert llm.llm_calls == 9 and llm.valid + llm.repaired + llm.fallback == 9
    assert llm.cost_usd == pytest.approx((llm.input_tokens * 0.5 + llm.output_tokens * 2.0) / 1e6)
    assert episodes[episodes.method == "random"].cost_usd.isna().all()
    cell = tmp_path / "results/episodes/llm/loopbench/cycle/smollm2/n3/s0.parquet"
    assert pq.read_table(cell).column("notes").length() == 4 * 3
    assert (tmp_path / "results/episodes/llm/loopbench/cycle/smollm2/n3/s0.calls.jsonl").is_file()
    table = pd.read_csv(tmp_path / "reports/llm/loopbench/table1.csv")
    assert set(table.method) == {"random", "smollm2"}
    log = (tmp_path / "logs/episodes/llm/loopbench/cycle/smollm2/n3/block0-0.log").read_text()
    assert "round 3/3, 9 calls" in log  # progress of a long episode, in the job's log
    assert planned_jobs(tmp_path) == {}  # nothing left to do
