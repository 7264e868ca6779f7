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
