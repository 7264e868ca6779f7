"""Stage two through Snakemake with the tiny model: the warm start's controller plays the transition
study, and the four factorial arms and the Silo-Bench specialist go on from their warm starts; every arm
of a seed shares the warm start, the sources, the schedule and the transitions, so their first update's
losses are one and the same, and the arms part after it. The config check's refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import snakemake_command, write_config
from test_train_workflow import config as stage_one_config

from hivebench.config import ConfigError, select_methods, validate

ARMS = ("decision", "orbit", "field", "joint")


def factorial_config(model: str) -> dict:
    """`tiny` (stage one, a corpus of Silo-Bench bundles and SwarmBench native views) and its four arms;
    `silo` (Silo-Bench alone) and its joint arm, the specialist; both corpora's transitions the warm
    start's controller's on III-26 at N = 4."""
    settings = stage_one_config(model)
    settings["tasks"]["pursuit"] = {"kind": "swarmbench", "task": "pursuit", "rounds": 4}
    settings["studies"]["swarm"] = {"tasks": ["pursuit"], "methods": ["rule"], "populations": [4], "seeds": 2}
    silo_only = settings["corpora"]["small"]
    settings["corpora"]["small"] = json.loads(json.dumps(silo_only))
    settings["corpora"]["small"]["suites"]["swarmbench"] = {"native": {"study": "swarm", "method": "rule", "views": 8}}
    settings["corpora"]["silo"] = silo_only
    settings["methods"]["warm"] = {
        "kind": "waggle",
        "backend": "transformers",
        "model": model,
        "max_tokens": 32,
        "adapter": "tiny",
        "keep_views": True,
        "seeds_per_job": 4,
    }
    settings["tasks"]["silo26-short"] = {**settings["tasks"]["silo26"], "rounds": 4, "change_at": 2}
    settings["studies"]["rollouts"] = {"tasks": ["silo26-short"], "methods": ["warm"], "populations": [4], "seeds": 4}
    for corpus in ("small", "silo"):
        settings["corpora"][corpus]["transitions"] = {"study": "rollouts", "method": "warm"}
    stage_one = settings["trainings"]["tiny"]
    settings["trainings"]["silo-tiny"] = {**stage_one, "corpus": "silo"}
    stage_two = {"updates": 2, "checkpoint_every": 1, "batch": 4, "micro_batch": 2, "transition_batch": 2, "threads": 1}
    for arm in ARMS:
        settings["trainings"][f"tiny-{arm}"] = {"warm_start": "tiny", "arm": arm, **stage_two}
    settings["trainings"]["silo-joint"] = {"warm_start": "silo-tiny", "arm": "joint", **stage_two}
    return settings


def test_the_four_arms_and_the_specialist_go_on_from_their_warm_starts(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "tiny")
    write_config(tmp_path / "config.yaml", factorial_config("tiny"))
    trainings = [f"tiny-{arm}" for arm in ARMS] + ["silo-joint"]
    reports = ["reports/factorials/tiny/index.html", "reports/trainings/tiny-joint/index.html"]
    targets = [f"models/trained/{t}/seed0/manifest.json" for t in trainings] + reports
    run = subprocess.run(snakemake_command(tmp_path, "--cores", "2", *targets), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]

    def manifest(training: str) -> dict:
        return json.loads((tmp_path / f"models/trained/{training}/seed0/manifest.json").read_text())

    transitions = pd.read_parquet(tmp_path / "results/corpora/small/transitions.parquet")
    episodes = tmp_path / "results/episodes/rollouts/silobench/silo26-short/warm/n4"
    views = {seed: pd.read_parquet(episodes / f"s{seed}.views.parquet") for seed in range(4)}
    assert all(v["record"].notna().all() and v.groupby("agent")["step"].count().min() > 1 for v in views.values())
    # each agent's views but its last, which has no next one; of the four episodes, one fits the probe
    # and one measures it (held_out 0.25, at least two), whole
    assert len(transitions) == sum(len(v) - 4 for v in views.values())
    per_episode = transitions.groupby("seed")["split"].unique()
    assert all(len(splits) == 1 for splits in per_episode)
    assert sorted(splits[0] for splits in per_episode) == ["probe_fit", "probe_test", "train", "train"]
    assert transitions["eventful"].dtype == bool
    arms = {arm: manifest(f"tiny-{arm}") for arm in ARMS}
    warm = manifest("tiny")
    for arm, m in arms.items():
        assert m["stage"] == 2 and m["structure"]["arm"] == arm and m["updates"] == 2
        assert m["warm_start_digest"] == warm["adapter_digest"]
        assert m["transitions"] == (transitions["split"] == "train").sum()  # the probe's never trained on
        assert m["settings"]["rank"] == warm["settings"]["rank"] == 4  # the warm start's LoRA shape
        assert [u for u, _ in m["history"]["auxiliary"]] == [1, 2]
    first = {arm: (m["history"]["train"][0], m["history"]["auxiliary"][0]) for arm, m in arms.items()}
    assert len({json.dumps(f) for f in first.values()}) == 1  # one warm start, batch and transition draw
    assert arms["decision"]["history"]["train"][1] != arms["joint"]["history"]["train"][1]  # then they part
    assert len({m["adapter_digest"] for m in arms.values()}) == 4
    specialist = manifest("silo-joint")
    assert specialist["warm_start_digest"] == manifest("silo-tiny")["adapter_digest"] != warm["adapter_digest"]
    assert specialist["corpus_digest"] != arms["joint"]["corpus_digest"]
    # The diagnostics: each arm's probe fitted on one held-out episode's transitions and measured on the
    # other's; the factorial's arms against Decision only with the paper's row; the joint arm's report.
    probe = json.loads((tmp_path / "results/trainings/tiny-joint/seed0/probe.json").read_text())
    assert probe["fit"] == (transitions["split"] == "probe_fit").sum() and probe["fit_loss"] >= 0
    assert probe["test"] == len(probe["test_losses"]) == (transitions["split"] == "probe_test").sum()
    assert probe["adapter_digest"] == arms["joint"]["adapter_digest"]
    factorial = pd.read_csv(tmp_path / "reports/factorials/tiny/factorial.csv")
    assert factorial["arm"].tolist() == [
        *(f"tiny-{arm} ({arm})" for arm in ARMS),
        "paper (Table 16: Joint vs Decision only)",
    ]
    # (a probe loss may be 0: the tiny model writes nothing, so every next view it leaves is alike)
    assert factorial["orbit agreement (%)"][:4].between(0, 100).all() and factorial["probe loss"][:4].ge(0).all()
    versus = "orbit agreement vs tiny-decision (decision) (points)"
    assert pd.isna(factorial[versus][0]) and factorial[versus][4] == 17.0
    diagnostics = pd.read_csv(tmp_path / "reports/trainings/tiny-joint/diagnostics.csv")
    assert diagnostics["seed"].tolist() == [0] and diagnostics["probe loss"][0] == probe["probe_loss"]
    losses = pd.read_csv(tmp_path / "reports/trainings/tiny-joint/losses.csv")
    assert set(losses["split"]) == {"train", "validation", "orbit", "field"}
    again = subprocess.run(snakemake_command(tmp_path, "-n", *targets), capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_stage_two_training_is_checked_against_its_warm_start():
    settings = factorial_config("SmolLM2-135M-Instruct")
    filled = validate(settings, "train.yaml")
    from hivebench.report.landing import trainings_html

    listed = trainings_html(filled)  # the landing page links each arm's report and its factorial
    assert (
        "tiny-joint</a>: SmolLM2-135M-Instruct, corpus small, stage two (joint) from tiny "
        '(<a href="factorials/tiny/index.html">' in listed
    )
    trainings = filled["trainings"]
    assert trainings["tiny-joint"]["corpus"] == "small" and trainings["silo-joint"]["corpus"] == "silo"
    assert trainings["tiny-joint"]["rank"] == 4  # the warm start's, not the schema's default
    bad = factorial_config("SmolLM2-135M-Instruct")
    bad["trainings"]["tiny-orbit"]["warm_start"] = "absent"
    bad["trainings"]["tiny-field"]["warm_start"] = "tiny-joint"
    bad["trainings"]["tiny-joint"] |= {"corpus": "silo", "seeds": [0, 3]}
    with pytest.raises(ConfigError) as refused:
        validate(bad, "train.yaml")
    problems = str(refused.value)
    assert "trainings.tiny-orbit.warm_start: unknown training 'absent'" in problems
    assert "trainings.tiny-field.warm_start: 'tiny-joint' goes on from a warm start itself" in problems
    assert "trainings.tiny-joint.corpus: 'silo', but its warm start 'tiny' has 'small'" in problems
    assert "trainings.tiny-joint.seeds: 3 not among its warm start 'tiny''s seeds" in problems
    untransitioned = factorial_config("SmolLM2-135M-Instruct")
    del untransitioned["corpora"]["silo"]["transitions"]
    untransitioned["corpora"]["small"]["transitions"]["method"] = "fixedswarm"
    untransitioned["studies"]["rollouts"]["methods"].append("fixedswarm")
    with pytest.raises(ConfigError) as refused:
        validate(untransitioned, "train.yaml")
    problems = str(refused.value)
    assert "trainings.silo-joint.warm_start: stage two needs a transition corpus: corpora.silo.transitions" in problems
    assert "corpora.small.transitions.method: 'fixedswarm' (kind fixedswarm) shows no views" in problems


def test_running_only_a_stage_two_adapters_method_keeps_its_transitions():
    settings = factorial_config("SmolLM2-135M-Instruct")
    settings["methods"]["scd"] = {**settings["methods"]["warm"], "adapter": "tiny-joint", "keep_views": False}
    settings["studies"]["evaluation"]["methods"].append("scd")
    cut = select_methods(validate(settings, "train.yaml"), ["scd"], "train.yaml")
    assert cut["studies"]["rollouts"]["methods"] == ["warm"] and "tiny-joint" in cut["trainings"]


@pytest.mark.slow  # plays one episode of each of the corpus's tasks (about 25 s)
def test_the_paper_scale_training_validates_and_is_estimated():
    """config/studies/waggle-train.yaml: the paper's 8,512 corpus views (per substrate 256 native and 500
    bundles of eight), a model teacher's call per view, and per update 16 examples in stage one and in
    stage two 16 sources, their 16 partners and 16 transitions."""
    from hivebench.cells import all_blocks
    from hivebench.config import load
    from hivebench.train.estimate import estimates

    source = Path(__file__).parents[1] / "config/studies/waggle-train.yaml"
    config = load(source)
    assert set(config["trainings"]) == {"warm", *(f"scd-{arm}" for arm in ARMS), "specialist-warm", "specialist"}
    studies = ("collect-swarmbench", "collect-silobench", "rollouts", "specialist-rollouts")
    blocks = {study: b for study, b in all_blocks(config, source.parent).items() if study in studies}
    assert config["corpora"]["decision"]["teacher"] == config["corpora"]["specialist"]["teacher"] == "rule"
    config["corpora"]["decision"]["teacher"] = "gpt-4o"  # a model teacher: one call per view
    corpora, trainings = estimates(config, blocks)
    by_name = {c.corpus: c for c in corpora}
    assert by_name["decision"].views == 2 * (256 + 500 * 8) == 8512 and by_name["decision"].calls == 8512
    assert by_name["specialist"].views == 256 + 500 * 8 and by_name["specialist"].calls == 0
    rows = {t.training: (t.stage, t.seeds, t.updates, t.rows_per_update) for t in trainings}
    assert rows["warm"] == (1, 5, 648, 16) and rows["scd-joint"] == rows["scd-decision"] == (2, 5, 648, 48)
    assert all(t.tokens > 0 for t in trainings)
