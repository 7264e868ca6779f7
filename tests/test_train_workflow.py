"""Training through Snakemake: a corpus's studies played, its views drawn and labelled by the rule
teacher, and a LoRA adapter distilled on the tiny model into models/trained/; a rerun does nothing; a
corpus whose training seeds an evaluation study plays is refused, naming both."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import snakemake_command, write_config

from hivebench.config import ConfigError, validate


def config(model: str) -> dict:
    return {
        "tasks": {
            "silo26": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9, "change_at": 5},
            "silo04": {"kind": "silobench", "task": "I-04", "topology": "regular3", "rounds": 9},
            "silo11": {"kind": "silobench", "task": "II-11", "topology": "regular3", "rounds": 9},
        },
        "methods": {
            "rule": {"kind": "scripted_controller", "keep_views": True, "seeds_per_job": 32},
            "fixedswarm": {"kind": "fixedswarm"},
        },
        "studies": {
            "bundles": {"tasks": ["silo26", "silo04", "silo11"], "methods": ["rule"], "populations": [16], "seeds": 32},
            "evaluation": {"tasks": ["silo26"], "methods": ["fixedswarm"], "populations": [16], "seeds": [500, 501]},
        },
        "corpora": {
            "small": {
                "suites": {
                    "silobench": {
                        "native": {"study": "bundles", "method": "rule", "views": 16},
                        "synthetic": {
                            "study": "bundles",
                            "method": "rule",
                            "bundles": 2,
                            "seeds_per_bundle": 8,
                            "validation": 1,
                            "test": 0,
                        },
                    }
                }
            }
        },
        "trainings": {
            "tiny": {
                "corpus": "small",
                "model": model,
                "rank": 4,
                "alpha": 8,
                "batch": 4,
                "micro_batch": 2,
                "updates": 4,
                "checkpoint_every": 2,
                "threads": 1,
            }
        },
        "report": {"episode_pages": 0},
    }


def test_a_corpus_is_labelled_and_an_adapter_trained_through_snakemake(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "tiny")
    write_config(tmp_path / "config.yaml", config("tiny"))
    run = subprocess.run(snakemake_command(tmp_path, "--cores", "2"), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    labels = pd.read_parquet(tmp_path / "results/corpora/small/labels.parquet")
    assert len(labels) == 16 + 2 * 8 and labels["accepted"].all()
    assert sorted(labels.drop_duplicates("bundle")["split"].unique()) == ["train", "validation"]
    manifest = json.loads((tmp_path / "models/trained/tiny/seed0/manifest.json").read_text())
    assert manifest["training"] == "tiny" and manifest["updates"] == 4 and manifest["selected_update"] in (2, 4)
    assert (tmp_path / "models/trained/tiny/seed0/adapter/adapter_model.safetensors").is_file()
    acceptance = pd.read_csv(tmp_path / "results/corpora/small/acceptance.csv")
    assert acceptance["views"].sum() == len(labels)
    again = subprocess.run(snakemake_command(tmp_path, "--cores", "2", "-n"), capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_training_seeds_an_evaluation_study_plays_are_refused_naming_both():
    overlapping = config("SmolLM2-135M-Instruct")
    overlapping["studies"]["bundles"]["seeds"] = [1, 501]
    with pytest.raises(
        ConfigError,
        match=r"study 'bundles' plays task 'silo26' at N = 16 on seeds 501, which study "
        r"'evaluation' evaluates \('silo26'\)",
    ):
        validate(overlapping, str(Path("train.yaml")))
    validate(config("SmolLM2-135M-Instruct"), "train.yaml")  # seeds 0-31 against 500 and 501: disjoint
