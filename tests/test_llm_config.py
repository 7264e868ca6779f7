"""LLM methods in config: what would fail mid-run fails at validation, naming the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_config

from hivebench.cells import Block, all_blocks
from hivebench.config import ConfigError, load
from hivebench.ids import canonical_json, digest


def with_llm(config: dict[str, Any], **method: Any) -> dict[str, Any]:
    config["methods"]["llm"] = {"kind": "llm", **method}
    config["studies"]["tiny"]["methods"].append("llm")
    return config


def problems_of(config: dict[str, Any], tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load(write_config(tmp_path / "study.yaml", config))
    return str(info.value)


def test_openai_method_without_its_key_fails_at_validation(config, tmp_path, monkeypatch):
    monkeypatch.delenv("HIVEBENCH_TEST_KEY", raising=False)
    config = with_llm(
        config,
        backend="openai",
        model="gpt-4.1-nano",
        base_url="https://api.openai.com/v1",
        api_key_env="HIVEBENCH_TEST_KEY",
    )
    assert "methods.llm.api_key_env: the environment variable HIVEBENCH_TEST_KEY is not set" in problems_of(
        config, tmp_path
    )
    monkeypatch.setenv("HIVEBENCH_TEST_KEY", "sk-test-secret")
    loaded = load(write_config(tmp_path / "study.yaml", config))
    cells = [cell for blocks in all_blocks(loaded, tmp_path).values() for b in blocks for cell in b.cells()]
    assert "sk-test-secret" not in repr(cells), "a key never enters a cell"


def test_openai_method_without_an_endpoint(config, tmp_path):
    config = with_llm(config, backend="openai", model="gpt-4.1-nano")
    assert "methods.llm: 'base_url' is a required property" in problems_of(config, tmp_path)


def test_local_model_that_is_neither_builtin_nor_a_folder(config, tmp_path):
    config = with_llm(config, backend="transformers", model=str(tmp_path / "nowhere"))
    assert "methods.llm.model:" in problems_of(config, tmp_path)
    assert "SmolLM2-135M-Instruct" in problems_of(config, tmp_path)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("history", "some", "methods.llm.history"),
        ("temperature", -1, "methods.llm.temperature"),
        ("dtype", "float16", "methods.llm.dtype"),
        ("initial_notes", {"file": "missing.txt"}, "methods.llm.initial_notes.file: no such file"),
    ],
)
def test_bad_llm_parameters(config, tmp_path, key, value, message):
    config = with_llm(config, backend="transformers", model="SmolLM2-135M-Instruct", **{key: value})
    assert message in problems_of(config, tmp_path)


def test_method_seeds_replace_the_study_seeds_for_one_method(config, tmp_path):
    config["studies"]["tiny"]["method_seeds"] = {"soft_fp": [3, 4]}
    loaded = load(write_config(tmp_path / "study.yaml", config))
    seeds: dict[tuple[str, int], list[int]] = {}
    for b in all_blocks(loaded, tmp_path)["tiny"]:
        seeds.setdefault((b.shared["method"]["name"], b.shared["population"]), []).extend(b.seeds)
    assert seeds[("soft_fp", 3)] == [3, 4]
    assert seeds[("random", 3)] == list(range(10))
    config["studies"]["tiny"]["method_seeds"] = {"greedy": 2}
    assert "studies.tiny.method_seeds.greedy: not one of this study's methods" in problems_of(config, tmp_path)


def test_method_populations_replace_the_study_populations_for_one_method(config, tmp_path, monkeypatch):
    config["studies"]["tiny"]["method_populations"] = {"soft_fp": [5]}
    loaded = load(write_config(tmp_path / "study.yaml", config))
    played = {(b.shared["method"]["name"], b.shared["population"]) for b in all_blocks(loaded, tmp_path)["tiny"]}
    assert played == {("random", 3), ("random", 5), ("soft_fp", 5)}
    # the limits count what is played without expanding it: 3 (method, population) pairs of 10 seeds
    monkeypatch.setattr("hivebench.config.MAX_CELLS", 29)
    assert "studies: the config expands to 30 cells; the limit is 29" in problems_of(config, tmp_path)
    config["studies"]["tiny"]["method_populations"] = {"soft_fp": [5, 7]}
    assert "studies.tiny.method_populations.soft_fp[1]: 7 is not one of the study's populations (3, 5)" in problems_of(
        config, tmp_path
    )
    config["studies"]["tiny"]["method_populations"] = {"greedy": [3]}
    assert "studies.tiny.method_populations.greedy: not one of this study's methods" in problems_of(config, tmp_path)


def test_initial_notes_from_a_file_are_inlined_so_an_edit_reruns_the_cell(config, tmp_path):
    config = with_llm(
        config, backend="transformers", model="SmolLM2-135M-Instruct", initial_notes={"file": "notes.txt"}
    )

    def llm_block(notes: str) -> Block:
        (tmp_path / "notes.txt").write_text(notes)
        loaded = load(write_config(tmp_path / "study.yaml", config))
        return next(b for b in all_blocks(loaded, tmp_path)["tiny"] if b.shared["method"]["name"] == "llm")

    block = llm_block("[NEW] wait one round after a conflict")
    assert block.shared["method"]["params"]["initial_notes"] == {"text": "[NEW] wait one round after a conflict"}
    # The job's params (its spec) and every cell's hash change with the file: Snakemake reruns the job
    # and the job recomputes each cell (a kept cell must have the same hash).
    edited = llm_block("[NEW] wait two rounds after a conflict")
    assert canonical_json(edited.spec()) != canonical_json(block.spec())
    hashes = [digest(cell) for cell in block.cells()]
    assert all(digest(cell) != old for cell, old in zip(edited.cells(), hashes))
    assert [digest(cell) for cell in llm_block("[NEW] wait one round after a conflict").cells()] == hashes


def test_the_server_example_is_valid_with_its_key_set(monkeypatch):
    from conftest import REPO

    monkeypatch.setenv("OPENAI_API_KEY", "sk-example")
    config = load(REPO / "config/examples/llm-servers.yaml")
    blocks = all_blocks(config, REPO / "config/examples")["loopbench_llm"]
    assert {b.shared["method"]["name"] for b in blocks} == {"soft_fp", "smollm2", "o3", "gpt41nano", "qwen_vllm"}
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        load(REPO / "config/examples/llm-servers.yaml")
