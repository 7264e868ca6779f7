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

from hivebench.config import ConfigError, select_methods, validate


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
            "bundles": {"tasks": ["silo26", "silo04", "silo11"], "methods": ["rule"], "populations": [16], "seeds": 48},
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
                            "bundles": 3,
                            "seeds_per_bundle": 8,
                            "validation": 1,
                            "test": 1,
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
    target = ("--cores", "2", "reports/trainings/tiny/index.html")  # the training's, not the studies' reports
    run = subprocess.run(snakemake_command(tmp_path, *target), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    labels = pd.read_parquet(tmp_path / "results/corpora/small/labels.parquet")
    assert len(labels) == 16 + 3 * 8 and labels["accepted"].all()
    assert sorted(labels.drop_duplicates("bundle")["split"].unique()) == ["test", "train", "validation"]
    manifest = json.loads((tmp_path / "models/trained/tiny/seed0/manifest.json").read_text())
    assert manifest["training"] == "tiny" and manifest["updates"] == 4 and manifest["selected_update"] in (2, 4)
    assert (tmp_path / "models/trained/tiny/seed0/adapter/adapter_model.safetensors").is_file()
    acceptance = pd.read_csv(tmp_path / "results/corpora/small/acceptance.csv")
    assert acceptance["views"].sum() == len(labels)
    # The report: the loss curves, the corpus table, the untrained and the trained student on the
    # test bundle's eight views (one of each class) beside the teacher, then the paper's row.
    report = tmp_path / "reports/trainings/tiny"
    students = pd.read_csv(report / "students.csv")
    assert students["student"].tolist() == ["teacher", "untrained", "seed0", "paper (800 views)"]
    assert students["views"].tolist()[:3] == [8, 8, 8]
    assert students.loc[0, "exact match (%)"] == 100 and students.loc[3, "exact match (%)"] == 74.75
    assert students.loc[0, "mode macro-F1 (%)"] == 100 and students.loc[1:2, "mode macro-F1 (%)"].between(0, 100).all()
    losses = pd.read_csv(report / "losses.csv")
    assert len(losses[losses["split"] == "train"]) == 4 and len(losses[losses["split"] == "validation"]) == 2
    assert pd.read_csv(report / "corpus.csv")["views"].sum() == len(labels)
    assert "The student on the test views" in (report / "index.html").read_text()
    again = subprocess.run(snakemake_command(tmp_path, *target, "-n"), capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr
    # What the training's jobs ask a scheduler for is no part of its settings: a GPU retrains nothing,
    # and a training job asks for it.
    settings = config("tiny")
    settings["trainings"]["tiny"]["resources"] = {"mem_mb": 64000, "slurm_extra": "'--gres=gpu:1'"}
    write_config(tmp_path / "config.yaml", settings)
    again = subprocess.run(snakemake_command(tmp_path, *target, "-n"), capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr
    manifest = "models/trained/tiny/seed0/manifest.json"
    forced = subprocess.run(snakemake_command(tmp_path, "-n", "--forcerun", manifest), capture_output=True, text=True)
    distill = (forced.stdout + forced.stderr).split("rule distill:")[1].split("\n\n")[0]
    assert "mem_mb=64000" in distill and "slurm_extra='--gres=gpu:1'" in distill, distill


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


def evaluation_jobs(settings: dict) -> list[str]:
    """The evaluation study's episode jobs (their summaries) as Snakemake targets: the runs make them and
    the adapters they wait for, not the reports after them. Asked from the study folder."""
    from hivebench.cells import all_jobs

    return [job.summary_path for job in all_jobs(validate(settings, "config.yaml"), Path("."))["evaluation"]]


def evaluated_config(model: str) -> dict:
    """`config`, with two trainings and the student with each adapter in an evaluation study: `trained`
    maps training seeds 0 and 1 of `tiny` to replicates, `trained2` lays `tiny2`'s over the same model."""
    settings = config(model)
    settings["trainings"]["tiny"]["seeds"] = 2
    settings["trainings"]["tiny2"] = {**settings["trainings"]["tiny"], "seeds": 1, "learning_rate": 1e-3}
    student = {"kind": "waggle", "backend": "transformers", "model": model, "max_tokens": 32, "seeds_per_job": 2}
    settings["methods"]["trained"] = {
        **student,
        "adapter": "tiny",
        "replicates": {"s0": {"adapter_seed": 0}, "s1": {"adapter_seed": 1}},
    }
    settings["methods"]["trained2"] = {**student, "adapter": "tiny2"}
    settings["studies"]["evaluation"].update(methods=["fixedswarm", "trained", "trained2"], populations=[8])
    return settings


def stored_cells(workdir: Path) -> dict[str, tuple[int, dict]]:
    """Each evaluation cell file: (its modification time, the cell it holds)."""
    import pyarrow.parquet as pq

    from hivebench.store import CELL_KEY

    cells = {}
    for path in sorted((workdir / "results/episodes/evaluation").rglob("s50[01].parquet")):
        metadata = pq.read_schema(path).metadata
        cells[str(path.relative_to(workdir))] = (path.stat().st_mtime_ns, json.loads(metadata[CELL_KEY]))
    return cells


def test_a_retrained_adapter_reruns_exactly_the_cells_that_use_it(tiny_model, tmp_path, monkeypatch):
    shutil.copytree(tiny_model, tmp_path / "tiny")
    monkeypatch.chdir(tmp_path)
    settings = evaluated_config("tiny")
    episodes = ("--cores", "2", *evaluation_jobs(settings))
    write_config(tmp_path / "config.yaml", settings)
    run = subprocess.run(snakemake_command(tmp_path, *episodes), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    before = stored_cells(tmp_path)
    assert len(before) == 2 * (1 + 2 + 1)  # two seeds of fixedswarm, trained (two replicates), trained2

    def digest_of(training: str, seed: int) -> str:
        manifest = json.loads((tmp_path / f"models/trained/{training}/seed{seed}/manifest.json").read_text())
        return manifest["adapter_digest"]

    trained = {"s0": digest_of("tiny", 0), "s1": digest_of("tiny", 1), None: digest_of("tiny2", 0)}
    assert len(set(trained.values())) == 3
    for _, cell in before.values():
        params = cell["method"]["params"]
        if cell["method"]["name"] == "fixedswarm":
            assert "adapter_digest" not in params
        else:  # each replicate holds its own training seed's adapter digest
            assert params["adapter_digest"] == trained[cell.get("replicate")]

    settings["trainings"]["tiny2"]["updates"] = 6  # tiny2 retrained: trained2's cells alone change
    write_config(tmp_path / "config.yaml", settings)
    run = subprocess.run(snakemake_command(tmp_path, *episodes), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    after = stored_cells(tmp_path)
    assert after.keys() == before.keys()
    rerun = sorted(path for path in after if after[path][0] != before[path][0])
    assert rerun == sorted(path for path, (_, cell) in before.items() if cell["method"]["name"] == "trained2")
    assert {after[path][1]["method"]["params"]["adapter_digest"] for path in rerun} == {digest_of("tiny2", 0)}
    assert digest_of("tiny2", 0) != trained[None]

    # The same adapter trained again (seed 0 of tiny, forced): its job reruns and replays nothing.
    forced = "models/trained/tiny/seed0/manifest.json"
    run = subprocess.run(snakemake_command(tmp_path, *episodes, "--forcerun", forced), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert digest_of("tiny", 0) == trained["s0"]
    assert {path: mtime for path, (mtime, _) in stored_cells(tmp_path).items()} == {
        path: mtime for path, (mtime, _) in after.items()
    }
    again = subprocess.run(snakemake_command(tmp_path, *episodes, "-n"), capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_running_only_a_method_with_an_adapter_keeps_what_trains_it():
    settings = validate(evaluated_config("SmolLM2-135M-Instruct"), "train.yaml")
    cut = select_methods(settings, ["trained2"], "train.yaml")
    assert cut["trainings"].keys() == {"tiny", "tiny2"} and cut["corpora"].keys() == {"small"}
    assert cut["studies"]["bundles"]["methods"] == ["rule"]
    assert cut["studies"]["evaluation"]["methods"] == ["trained2"]
    assert select_methods(settings, ["fixedswarm"], "train.yaml")["trainings"] == {}


def test_an_adapter_names_a_training_and_one_of_its_seeds_over_the_model_it_was_trained_on():
    settings = evaluated_config("SmolLM2-135M-Instruct")
    settings["methods"]["trained"]["replicates"]["s2"] = {"adapter_seed": 2}
    settings["methods"]["trained2"]["adapter"] = "tiny3"
    settings["methods"]["other"] = {**settings["methods"]["trained2"], "adapter": "tiny", "model": "elsewhere"}
    with pytest.raises(ConfigError) as refused:
        validate(settings, "train.yaml")
    problems = str(refused.value)
    assert "methods.trained.replicates.s2.adapter_seed: 2 is not a seed of training 'tiny' (0, 1)" in problems
    assert "methods.trained2.adapter: unknown training 'tiny3' (defined: tiny, tiny2)" in problems
    assert (
        "methods.other.model: 'elsewhere', but training 'tiny' trains its adapter on 'SmolLM2-135M-Instruct'"
        in problems
    )
    scripted = evaluated_config("SmolLM2-135M-Instruct")
    scripted["methods"]["trained2"] = {"kind": "waggle", "backend": "scripted", "model": "r.jsonl", "adapter": "tiny"}
    scripted["methods"]["plain"] = {"kind": "waggle", "backend": "openai", "model": "m", "base_url": "http://x/v1"}
    scripted["methods"]["plain"]["adapter_seed"] = 1
    with pytest.raises(ConfigError) as refused:
        validate(scripted, "train.yaml")
    assert "methods.trained2.adapter: a scripted model has no weights to adapt" in str(refused.value)
    assert "methods.plain.adapter_seed: set, but the method names no adapter" in str(refused.value)


def test_a_hub_id_in_the_local_cache_is_a_model_and_a_missing_folder_is_not_one(tiny_model, tmp_path, monkeypatch):
    from hivebench.models.builtin import cached_snapshot

    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / "abc123"
    shutil.copytree(tiny_model, snapshot)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert cached_snapshot("org/tiny") == snapshot and cached_snapshot("org/absent") is None
    settings = evaluated_config("org/tiny")  # the trainings' and the students' model: a cached hub id
    settings["methods"]["absent"] = {**settings["methods"]["trained2"], "model": "org/absent", "adapter": None}
    settings["studies"]["evaluation"]["methods"].append("absent")
    settings["trainings"]["tiny2"]["model"] = "models/typo"  # a folder path here, not a hub id
    (tmp_path / "models").mkdir()
    with pytest.raises(ConfigError) as refused:
        validate(settings, str(tmp_path / "train.yaml"))
    problems = str(refused.value).splitlines()[1:]
    assert sorted(p.split(":")[0].strip(" -") for p in problems) == [
        "methods.absent.model",
        "methods.trained2.model",  # its training's model moved to the missing folder
        "trainings.tiny2.model",
    ]
