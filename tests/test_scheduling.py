"""Scheduler resources: jobs of server-backed LLM methods hold one slot of their endpoint's resource."""

from __future__ import annotations

import re

import pytest
from conftest import tiny_config, write_config
from test_workflow import snakemake

pytestmark = pytest.mark.workflow


def test_server_methods_hold_one_slot_of_their_endpoint(tmp_path):
    config = tiny_config()
    server = {"kind": "llm", "backend": "openai", "model": "m", "api_key_env": None, "seeds_per_job": 10}
    config["methods"]["vllm_a"] = {**server, "base_url": "http://127.0.0.1:9/v1"}
    config["methods"]["vllm_b"] = {**server, "base_url": "http://127.0.0.1:10/v1", "llm_slots": "llm_slots_b"}
    config["studies"]["tiny"]["methods"] += ["vllm_a", "vllm_b"]
    write_config(tmp_path / "config.yaml", config)
    plan = snakemake(tmp_path, "-n", "--resources", "llm_slots=1", "llm_slots_b=1").stdout
    jobs = re.findall(r"output: (\S+)\n(?:.*\n)*?\s+resources: (.*)", plan)
    held = {out.split("/")[5]: res for out, res in jobs if out.startswith("results/episodes/")}
    assert "llm_slots=1" in held["vllm_a"] and "llm_slots_b=0" in held["vllm_a"]
    assert "llm_slots_b=1" in held["vllm_b"] and "llm_slots=0" in held["vllm_b"]
    assert "llm_slots=0" in held["random"] and "llm_slots_b=0" in held["random"]


def test_a_local_model_job_asks_for_the_memory_its_batches_need(tmp_path, tiny_model):
    config = tiny_config()
    local = {"kind": "llm", "backend": "transformers", "model": str(tiny_model), "max_tokens": 32}
    config["methods"]["small"] = {**local, "seeds_per_job": 1, "batch_rows": 1}
    config["methods"]["wide"] = {**local, "seeds_per_job": 2, "batch_rows": 64, "history": "full"}
    config["methods"]["pinned"] = {**local, "resources": {"mem_mb": 1234}}
    config["studies"]["tiny"]["methods"] += ["small", "wide", "pinned"]
    write_config(tmp_path / "config.yaml", config)
    plan = snakemake(tmp_path, "-n").stdout
    jobs = re.findall(r"output: (\S+)\n(?:.*\n)*?\s+resources: (.*)", plan)
    memory: dict[str, dict[str, int]] = {}  # method -> population -> mem_mb
    for out, res in jobs:
        if out.startswith("results/episodes/"):
            method, population = out.split("/")[5:7]
            memory.setdefault(method, {})[population] = int(re.search(r"mem_mb=(\d+)", res)[1])
    assert set(memory["pinned"].values()) == {1234} and set(memory["random"].values()) == {1000}
    for population, small in memory["small"].items():
        # more rows, and the kept caches of full history, need more memory
        assert 1300 < small < memory["wide"][population]
