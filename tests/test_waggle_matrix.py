"""The Waggle matrix scaled down (config/examples/waggle-small.yaml: N <= 8, two seeds, two replicates
of the scripted controller in each learned controller's slot, every control) through the real
workflow: every table of the matrix's report is there, with the paper's figures beside ours, and the
replicates reach the scores and the contrasts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, with_model, write_config
from test_workflow import snakemake

from hivebench.config import load
from hivebench.view.sample import PAGES_FOLDER, read_index

SMALL = REPO / "config/examples/waggle-small.yaml"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("waggle-small")
    config = yaml.safe_load(SMALL.read_text())
    config["anchors"] = str(REPO / "config/anchors.yaml")
    config["report"]["episode_pages"] = 0  # its tables are under test; a replicate's pages: the SmolLM2 test below
    write_config(folder / "config.yaml", config)
    snakemake(folder)
    return folder


def table(folder: Path, study: str, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / "reports" / study / name)


def test_the_matrix_in_full_plans_in_seconds_and_its_classical_part_in_few_jobs():
    config = load(REPO / "config/studies/waggle.yaml")
    assert set(config["methods"]["waggle"]["replicates"]) == {f"seed{k}" for k in range(5)}
    from hivebench.cells import expand_jobs
    from hivebench.config import select_methods

    classical = select_methods(config, ["fixedswarm", "nocomm", "nativemsg"], "waggle.yaml")
    jobs = expand_jobs(classical, str(REPO / "config/studies/waggle.yaml"))
    # (methods x populations x chunks of ten tasks) per study: main SwarmBench 3 x 3 x 1, Silo-Bench
    # 3 x 3 x 3, anchor 3 x 1 x 1 and 3 x 2 x 1, extrapolation (FixedSwarm) 1 x 2 x (3 + 1), horizon
    # 3 x 1 x 15, AgentsNet (FixedSwarm) 1 x 3 x 2, the intervention (FixedSwarm) 1 x 2 x (1 + 1)
    assert {study: len(study_jobs) for study, study_jobs in jobs.items()} == {
        "waggle-swarmbench": 9,
        "waggle-silobench": 27,
        "waggle-anchor-swarmbench": 3,
        "waggle-anchor-silobench": 6,
        "waggle-extrapolation": 8,
        "waggle-horizon": 45,
        "waggle-agentsnet": 6,
        "waggle-intervention": 4,
    }
    # tasks x methods x populations x seeds: 5*3*3*5 + 30*3*3*5 + 5*3*1*10 + 6*3*2*10 + 32*1*2*5
    # + 150*3*1*8 + 15*1*3*5 + 2*1*2*5
    assert sum(len(job.seeds) * len(job.blocks) for study in jobs.values() for job in study) == 6250


@pytest.mark.workflow
def test_the_small_matrix_reports_every_table(played):
    # SwarmBench: raw and anchor-normalised scores per task and N, Flocking and Transport at every N
    swarm = table(played, "waggle-swarmbench", "swarmbench/swarmbench.csv")
    for task in ("pursuit", "foraging", "synchronization", "flocking", "transport"):  # the reference's rules
        assert set(swarm[swarm["task"] == f"{task} (reference)"]["n"]) == {4, 8}, task
    assert swarm["normalised"].notna().any()  # the rules the anchors were measured under
    # Silo-Bench: success and receiver-delivered messages per agent per N; the lower-scale anchor's six tasks
    silo = table(played, "waggle-silobench", "silobench/silobench.csv")
    assert {"success", "delivered_per_agent"} <= set(silo) and set(silo["n"]) == {4, 8}
    anchor = table(played, "waggle-anchor-silobench", "silobench/silobench_tasks.csv")
    assert {"I-04", "I-09", "II-11", "II-16", "III-23", "III-26"} <= set(anchor.astype(str).stack())
    # retention from the second-largest N to the largest, ours beside the paper's
    retention = table(played, "waggle-extrapolation", "matrix/retention.csv")
    ours = retention[retention["method"].isin(["waggle", "fixedswarm"])]
    assert set(ours["measure"]) == {"Silo-Bench success", "delivered per agent", "Pursuit/Foraging normalised"}
    assert (ours["from N"] == 4).all() and (ours["to N"] == 8).all()
    assert set(ours[ours["method"] == "waggle"]["replicates"]) == {2}
    paper = retention.set_index("method").loc["Waggle (paper)"]
    assert 82.9 in paper["retention (%)"].tolist() and 8.25 in paper["mean to"].tolist()
    # the horizon curve: every horizon for every method, the same units at each
    horizon = table(played, "waggle-horizon", "matrix/horizon.csv")
    assert set(horizon["method"]) == {"waggle", "fixedswarm", "nocomm"}
    assert sorted(set(horizon["rounds"])) == [2, 3, 4] and horizon["units"].nunique() == 1
    # the key paired effects beside the paper's
    effects = table(played, "waggle-agentsnet", "matrix/effects.csv")
    assert list(effects["paper"]) == [0.07, 0.06] and (effects["replicates"] == 2).all()
    specialist = table(played, "waggle-silobench", "matrix/effects.csv")
    assert specialist["effect"].str.startswith("Joint - oracle specialist").all()
    assert (specialist["population"] == 8).all() and (specialist["paper"] == -0.017).all()
    # the admission ladder: the paper's counts (the scripted controller decodes nothing: no rows of
    # ours; the default config's waggle-controller study has a model's), and the counters
    ladder = table(played, "waggle-swarmbench", "waggle/ladder.csv")
    assert list(ladder["method"]) == ["Waggle (paper)"] and ladder["executable"].tolist() == [85129]
    counters = table(played, "waggle-silobench", "waggle/counters.csv")
    assert {"commits", "delivered_per_agent"} <= set(counters)


@pytest.mark.workflow
def test_replicates_reach_the_scores_and_the_contrasts(played):
    scores = table(played, "waggle-silobench", "scores.csv")
    waggle = scores[(scores["method"] == "waggle") & (scores["metric"] == "success")]
    assert set(waggle["replicate"]) == {"seed0", "seed1", "all"}
    assert scores[scores["method"] == "fixedswarm"]["replicate"].isna().all()
    contrasts = pd.read_parquet(played / "results/waggle-silobench/contrasts.parquet")
    pairs = contrasts.set_index(["a", "b"])
    assert (pairs.loc[("waggle", "fixedswarm"), "replicates"] == 2).all()
    assert pairs.loc[("waggle", "decision-only"), "method"].str.startswith("hierarchical bootstrap").all()
    episodes = pd.read_parquet(played / "results/waggle-silobench/episodes.parquet")
    assert set(episodes.groupby("method")["replicate"].nunique()) == {0, 2}


def test_the_matrix_section_is_planned_where_one_of_its_tables_has_a_row():
    from hivebench.cells import expand_jobs
    from hivebench.waggle.study.plays import block_plays, has_tables

    source = REPO / "config/studies/waggle.yaml"
    jobs = expand_jobs(load(source), str(source))
    planned = {study: has_tables(block_plays(b.shared for job in js for b in job.blocks)) for study, js in jobs.items()}
    # SwarmBench's anchor plays one N and none of the key pairs (those are AgentsNet's and Silo-Bench's);
    # SwarmSys's studies run no method on the Waggle runtime and still get the section: two populations
    assert planned == {
        "waggle-swarmbench": True,
        "waggle-silobench": True,
        "waggle-anchor-swarmbench": False,
        "waggle-anchor-silobench": True,
        "waggle-extrapolation": True,
        "waggle-swarmsys": True,
        "waggle-anchor-swarmsys": True,
        "waggle-horizon": True,
        "waggle-agentsnet": True,
        "waggle-intervention": True,  # Pursuit and Silo-Bench at two populations
        "collect-swarmbench": False,  # the training corpus's episodes (waggle-train.yaml): one N
        "collect-silobench": False,
        "rollouts": False,  # stage two's transition episodes: one N
        "specialist-rollouts": False,
    }


def test_retention_counts_a_method_off_the_runtime_over_the_units_played_at_both_populations():
    from hivebench.anchors import load_anchors, load_published
    from hivebench.waggle.study.matrix import retention_table

    # SwarmSys-like episodes (no delivered_frames: not on the Waggle runtime); I-03 only at N = 64
    rows = [
        {"method": "swarmsys", "suite": "silobench", "silo_task": task, "seed": seed, "population": n, "success": s}
        for task, seed, n, s in [
            ("I-01", 0, 64, 1.0),
            ("I-01", 1, 64, 1.0),
            ("I-02", 0, 64, 1.0),
            ("I-02", 1, 64, 0.0),
            ("I-01", 0, 128, 1.0),
            ("I-01", 1, 128, 0.0),
            ("I-02", 0, 128, 0.0),
            ("I-02", 1, 128, 0.0),
            ("I-03", 0, 64, 1.0),
        ]
    ]
    anchors = REPO / "config/anchors.yaml"
    table = retention_table(pd.DataFrame(rows), load_anchors(anchors), load_published(anchors, "waggle"), 500, 0.95, 0)
    ours = table[table["method"] == "swarmsys"].iloc[0]
    # by hand over the four units played at both: 3/4 at 64, 1/4 at 128, a third retained
    assert (ours["from N"], ours["to N"], ours["units"]) == (64, 128, 4)
    assert (ours["mean from"], ours["mean to"]) == pytest.approx((0.75, 0.25))
    assert ours["retention (%)"] == pytest.approx(100 / 3)
    assert table.set_index("method").loc["SwarmSys (paper)", "retention (%)"] == 65.7


@pytest.mark.workflow
def test_smollm2_in_a_learned_arms_slot_fills_our_own_ladder_row_beside_the_papers(tmp_path, smollm2):
    """The small matrix's SwarmBench study with SmolLM2 as the `waggle` arm, two replicates (the second
    samples), two seeds, every control: our own admission-ladder counts."""
    config = yaml.safe_load(SMALL.read_text())
    arm = {"kind": "waggle", "backend": "transformers", "model": "SmolLM2-135M-Instruct", "max_tokens": 128}
    config["anchors"] = str(REPO / "config/anchors.yaml")
    config["tasks"] = {"pursuit": {"kind": "swarmbench", "task": "pursuit", "rounds": 1}}
    config["methods"]["waggle"] = {
        **arm,
        "dtype": "auto",
        "replicates": {"seed0": {}, "seed1": {"temperature": 1.0}},
    }
    config["methods"] = {m: config["methods"][m] for m in ("waggle", "fixedswarm", "nocomm", "nativemsg")}
    study = {**config["studies"]["waggle-swarmbench"], "tasks": ["pursuit"], "populations": [4]}
    study["methods"] = list(config["methods"])
    study["contrasts"] = {"pairs": [[m, "waggle"] for m in ("fixedswarm", "nocomm", "nativemsg")]}
    config["studies"] = {"waggle-swarmbench": study}
    write_config(tmp_path / "config.yaml", config)
    with_model(tmp_path, smollm2)  # converted once (its conversion rule: tests/test_llm_workflow.py)
    snakemake(tmp_path)
    ladder = table(tmp_path, "waggle-swarmbench", "waggle/ladder.csv").set_index("method")
    # every agent's every round of every seed and replicate is one first decode: 4 x 1 x 2 x 2
    assert ladder.loc["waggle", "first decodes"] == 16 and ladder.loc["waggle", "suite"] == "swarmbench"
    assert ladder.loc["waggle", "counts"].endswith("2 replicates, 4 episodes")
    assert ladder.loc["Waggle (paper)", "first decodes"] == 85344
    episodes = pd.read_parquet(tmp_path / "results/waggle-swarmbench/episodes.parquet")
    assert sorted(episodes[episodes["method"] == "waggle"]["replicate"]) == ["seed0", "seed0", "seed1", "seed1"]
    scores = table(tmp_path, "waggle-swarmbench", "scores.csv")
    assert set(scores[scores["method"] == "waggle"]["replicate"]) == {"seed0", "seed1", "all"}
    # the report draws a page for each replicate's first seed, as for each control's
    folder = tmp_path / "reports/waggle-swarmbench" / PAGES_FOLDER
    pages = read_index(folder)
    assert sorted((row["method"], row["replicate"]) for row in pages) == [
        ("fixedswarm", None),
        ("nativemsg", None),
        ("nocomm", None),
        ("waggle", "seed0"),
        ("waggle", "seed1"),
    ]
    assert all((folder / row["page"]).is_file() for row in pages)
