"""View sets (hivebench.waggle.study.viewset): the views a controller was shown, kept per cell; the
validator on a view alone refuses what it refused in the episode; a controller decides a view set
through the ladder; orbits relabel a view as the runtime may; macro-F1, exact match and orbit
consistency against hand-worked values."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_waggle_controller import AGENTS, FuzzBackend, asked_view, cells, fuzzed_controller, rows_of

from hivebench.agents.waggle.ladder import Ladder
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import make_policy, make_task, run
from hivebench.waggle.runtime.records import Decisions, forbidden_keys, parse
from hivebench.waggle.runtime.view import PARTS
from hivebench.waggle.study.viewset import (
    ViewBlock,
    decide,
    evaluate,
    macro_f1,
    orbit,
    orbit_views,
    relabel,
    sample,
)

SILO_CHANGED = {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9, "change_at": 4}


def fuzzed(tmp: Path, seed: int = 0, task: dict | None = None):
    (cell,) = cells(tmp, ["unused"], task=task)
    backend = FuzzBackend(random.Random(seed))
    task = make_task(cell)
    task.reset([cell["seed"]])
    (record,) = run(task, make_policy([cell], target=fuzzed_controller(backend)))
    return record, backend


def test_the_views_table_holds_each_view_as_the_controller_was_asked_it(tmp_path):
    record, backend = fuzzed(tmp_path)
    views = pa.table(record.tables["views"]).to_pandas()
    firsts = [text for first, text, _ in backend.log if first]
    assert len(views) == len(firsts) == AGENTS * 10
    rows = {(r["step"], r["agent"]): r for r in rows_of(record)}
    cut = 0
    for (step, agent, actions, view, admitted), text in zip(views.itertuples(index=False), firsts):
        asked_actions, asked = asked_view(text)
        assert json.loads(view) == asked and json.loads(actions) == asked_actions
        assert set(asked) == set(PARTS) and forbidden_keys(asked) == []
        # the record the runtime admitted: the ladder's (the episode's row) or what the formal system and
        # the validator left of it (a part dropped, an action back to the proposal)
        drafted, kept = json.loads(rows[(step + 1, agent)]["record"]), json.loads(admitted)
        assert kept["task_action"] in (drafted["task_action"], asked["worker_proposal"])
        assert kept["deposits"] in (drafted["deposits"], []) and kept["commit"] in (drafted["commit"], None)
        cut += kept != drafted
    assert views["step"].tolist() == [t for t in range(10) for _ in range(AGENTS)]
    assert 0 < cut < len(views)
    block = ViewBlock([json.loads(v) for v in views["view"]], tuple(json.loads(views["actions"].iloc[0])))
    decisions = Decisions.private(block.proposal)
    for i, kept in enumerate(views["record"]):
        decisions.put(i, parse(json.loads(kept), block.actions))
    assert block.check(decisions).codes == [None] * len(views)  # each admitted whole on its view alone


def test_the_validator_on_a_view_alone_refuses_what_it_refused_in_the_episode(tmp_path):
    """Every first reply that was a bare JSON value: the view-only validator's code (schema or local
    view) is the code the episode recorded; and every record the episode admitted passes it whole."""
    compared, refuted = 0, 0
    # Foraging, and Silo-Bench with a changed shard (where agents refute the claim of the data as dealt)
    for seed, task in [*((seed, None) for seed in range(4)), (0, SILO_CHANGED), (1, SILO_CHANGED)]:
        (tmp_path / f"{seed}-{bool(task)}").mkdir()
        record, backend = fuzzed(tmp_path / f"{seed}-{bool(task)}", seed, task)
        views = pa.table(record.tables["views"]).to_pandas()
        rows = {(r["step"], r["agent"]): r for r in rows_of(record)}
        actions = tuple(json.loads(views["actions"].iloc[0]))
        block = ViewBlock([json.loads(v) for v in views["view"]], actions)
        refuted += len(block.refuted)
        ladder = Ladder(actions, block.proposal, block.check)
        replies = [text for (first, _, _), text in zip(backend.log, backend.texts) if first]
        for i, (step, agent) in enumerate(zip(views["step"], views["agent"])):
            try:
                value = json.loads(replies[i])
            except json.JSONDecodeError:
                continue
            assert ladder.read({i: (value, None)})[i].code == rows[(step + 1, agent)]["first_code"], replies[i]
            compared += 1
        decisions = Decisions.private(block.proposal)
        for i, (step, agent) in enumerate(zip(views["step"], views["agent"])):
            decisions.put(i, parse(json.loads(rows[(step + 1, agent)]["record"]), actions))
        assert block.check(decisions).codes == [None] * len(views)
    assert compared > 300 and refuted > 0  # of 480 first replies, those that were JSON


def view_set(tmp_path: Path, rows: int) -> pd.DataFrame:
    """The first `rows` views of a fuzzed episode, labelled as a view set's rows (study, cell, seed)."""
    record, _ = fuzzed(tmp_path)
    views = pa.table(record.tables["views"]).to_pandas().head(rows)
    for key, value in {
        "study": "s",
        "suite": "swarmbench",
        "task": "t",
        "method": "m",
        "population": 8,
        "seed": 0,
    }.items():
        views[key] = value
    return views


def test_a_controller_decides_a_view_set_through_the_ladder(tmp_path):
    views = view_set(tmp_path, 4)
    good = {"task_action": "STAY", "response": None, "deposits": [], "commit": None}
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in [good, "{", "nonsense", good, good, "{"]))
    params = {"backend": "scripted", "model": str(script), "temperature": 0.0, "top_p": 1.0, "max_tokens": 64}
    out = decide(views, params, tmp_path / "calls.jsonl", seed=0)
    # views 1 and 2 are regenerated (in order: view 1's reply "good", view 2's "{")
    assert out["rung"].tolist() == ["executable", "repaired", "fallback", "executable"]
    assert out["calls"].tolist() == [1, 2, 2, 1]
    assert json.loads(out["record"].iloc[0]) == good


def test_sample_draws_views_from_the_cells_in_a_seeded_order(tmp_path):
    paths = []
    for seed in range(2):
        (tmp_path / str(seed)).mkdir()
        record, _ = fuzzed(tmp_path / str(seed), seed)
        path = tmp_path / f"s{seed}.views.parquet"
        pq.write_table(pa.table(record.tables["views"]), path)
        paths.append(
            {
                "path": path,
                "study": "x",
                "suite": "swarmbench",
                "task": "t",
                "method": "m",
                "population": 8,
                "seed": seed,
            }
        )
    drawn = sample(paths, 50, seed=7)
    assert len(drawn) == 50 and drawn.equals(sample(paths, 50, seed=7))
    assert not drawn.equals(sample(paths, 50, seed=8))
    assert set(drawn["seed"]) == {0, 1} and len(sample(paths, 10_000, seed=7)) == 2 * AGENTS * 10


VIEW = {
    "task_contract": {"actions": ["STAY", "UP"]},
    "private_state": {"evidence": [{"claim": 11, "direction": "N"}, {"claim": 22, "refuted": True}]},
    "worker_proposal": "UP",
    "incident_fields": [
        {"channel": 5, "claim": 22, "novelty": 3, "support": 3, "conflict": 0, "ttl": 4},
        {"channel": 9, "claim": 33, "novelty": 2, "support": 4, "conflict": 0, "ttl": 3, "direction": "E"},
    ],
    "local_commitment": {"claim": 33, "confidence_bin": 2},
    "budget_bin": 3,
}


def test_an_orbit_relabels_channels_and_claims_and_reshuffles_the_incident_records():
    moved, maps = orbit(VIEW, np.random.default_rng(0))
    assert sorted(maps["channel"]) == [5, 9] and sorted(maps["claim"]) == [11, 22, 33]
    assert len(set(maps["channel"].values())) == 2 and len(set(maps["claim"].values())) == 3
    back = {v: k for k, v in maps["claim"].items()}
    assert sorted((back[t["claim"]], t["ttl"]) for t in moved["incident_fields"]) == [(22, 4), (33, 3)]
    assert moved["local_commitment"]["claim"] == maps["claim"][33]
    assert [back[e["claim"]] for e in moved["private_state"]["evidence"]] == [11, 22]
    record = {
        "task_action": "UP",
        "response": None,
        "deposits": [{"channel": 9, "claim": 33, "novelty": 1, "support": 3, "conflict": 0, "ttl": 2}],
        "commit": {"claim": 33, "confidence_bin": 1},
    }
    moved_record = relabel(record, maps)
    assert moved_record["deposits"][0]["channel"] == maps["channel"][9]
    assert moved_record["deposits"][0]["claim"] == moved_record["commit"]["claim"] == maps["claim"][33]
    # the view-only validator admits the relay on the view and its image on the orbit alike
    for view, rec in ((VIEW, record), (moved, moved_record)):
        block = ViewBlock([view], ("STAY", "UP"))
        d = Decisions.private(block.proposal)
        d.put(0, parse(rec, ("STAY", "UP")))
        assert block.check(d).codes == [None] and block.modes([json.dumps(rec)]) == ["synthesize"]


def test_macro_f1_and_exact_match_and_orbit_consistency_by_hand():
    assert macro_f1(["relay", "relay", "private"], ["relay", "private", "private"]) == pytest.approx(
        (2 / 3 + 2 / 3) / 2
    )
    assert macro_f1(["wait"], ["wait"]) == 1.0
    views = pd.DataFrame({"actions": [json.dumps(["STAY", "UP"])] * 2, "view": [json.dumps(VIEW)] * 2})
    private = {"task_action": "UP", "response": None, "deposits": [], "commit": None}
    deposit = {
        **private,
        "deposits": [{"channel": 0, "claim": 11, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3}],
    }
    records = {
        "ref": pd.DataFrame({"rung": ["executable"] * 2, "record": [json.dumps(deposit), json.dumps(private)]}),
        "other": pd.DataFrame(
            {"rung": ["executable", "projected"], "record": [json.dumps(deposit), json.dumps(deposit)]}
        ),
    }
    orbit_set = orbit_views(views, seed=1)
    maps = [json.loads(m) for m in orbit_set["maps"]]
    claim11 = [dict(map(tuple, m["claim"]))[11] for m in maps]
    # "ref" answers its orbit with the relabelled record for the first view only
    ref_orbit = [
        json.dumps({**deposit, "deposits": [{**deposit["deposits"][0], "claim": claim11[0]}]}),
        json.dumps(deposit),
    ]
    table = evaluate(views, records, "ref", {"ref": (orbit_set, pd.DataFrame({"record": ref_orbit}))}).set_index(
        "controller"
    )
    assert table.loc["ref", "exact match (%)"] == 100 and table.loc["other", "exact match (%)"] == 50
    assert table.loc["ref", "mode macro-F1 (%)"] == 100
    assert table.loc["other", "mode macro-F1 (%)"] == pytest.approx(100 * (2 / 3 + 0) / 2)  # deposit F1 2/3, private 0
    assert table.loc["ref", "orbit consistency (%)"] == 50 and pd.isna(table.loc["other", "orbit consistency (%)"])
    assert table.loc["other", "projected"] == 1 and table.loc["other", "executable (%)"] == 50


@pytest.mark.workflow
def test_a_view_set_through_snakemake_scores_each_controller(tmp_path):
    """Views drawn from a scripted controller's Foraging episodes (two replicates, each keeping its
    views), decided by scripted controllers (one always whole; one of two replicates, the first of
    which has its second half unreadable twice: the fallback) on the set and its orbit; the scores
    against the first, a row per replicate, and nothing left to do after."""
    from conftest import write_config
    from test_workflow import planned_jobs, snakemake

    good = {"task_action": "STAY", "response": None, "deposits": [], "commit": None}
    (tmp_path / "whole.jsonl").write_text("".join(json.dumps(good) + "\n" for _ in range(12)))
    (tmp_path / "half.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [good] * 6 + ["{"] * 12))
    config = {
        "tasks": {"forage": {"kind": "swarmbench", "task": "foraging", "rounds": 5}},
        "methods": {
            "rule": {"kind": "scripted_controller", "replicates": {f"r{i}": {"keep_views": True} for i in (0, 1)}},
            "whole": {"kind": "waggle", "backend": "scripted", "model": "whole.jsonl"},
            "half": {
                "kind": "waggle",
                "backend": "scripted",
                "model": "half.jsonl",
                "replicates": {"a": {}, "b": {"model": "whole.jsonl"}},
            },
        },
        "studies": {"w": {"tasks": ["forage"], "methods": ["rule"], "populations": [4], "seeds": 1}},
        "viewsets": {
            "forage-views": {
                "study": "w",
                "method": "rule",
                "views": 12,
                "controllers": ["whole", "half"],
                "reference": "whole",
            }
        },
        "report": {"bootstrap_resamples": 200},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)

    views = pd.read_parquet(tmp_path / "results/viewsets/forage-views/views.parquet")
    assert len(views) == 12 and set(views["method"]) == {"rule"}
    table = pd.read_csv(tmp_path / "reports/viewsets/forage-views/evaluation.csv").set_index("controller")
    assert list(table.index) == ["whole", "half@a", "half@b"]  # each replicate decides every view
    assert table.loc["whole", "executable"] == 12 and table.loc["half@a", "executable"] == 6
    assert table.loc["half@a", "fallback"] == 6 and table.loc["half@b", "executable"] == 12
    # a fallback is the private proposal: the same record as "whole" where the proposal is to stay
    proposals = [json.loads(v)["worker_proposal"] for v in views["view"]][6:]
    assert table.loc["half@a", "exact match (%)"] == pytest.approx(100 * (6 + proposals.count("STAY")) / 12)
    assert table.loc["whole", "exact match (%)"] == table.loc["half@b", "exact match (%)"] == 100
    assert table.loc["whole", "private (%)"] == 100
    assert table.loc["whole", "orbit consistency (%)"] == table.loc["half@a", "orbit consistency (%)"] == 100
    assert planned_jobs(tmp_path) == {}


def test_a_view_sets_method_keeps_views_in_every_replicate_or_is_refused():
    config = {
        "tasks": {"forage": {"kind": "swarmbench", "task": "foraging", "rounds": 5}},
        "methods": {
            "rule": {"kind": "scripted_controller", "replicates": {"r0": {"keep_views": True}, "r1": {}}},
            "model": {"kind": "waggle", "backend": "scripted", "model": "x.jsonl", "replicates": {"a": {}, "b": {}}},
        },
        "studies": {"w": {"tasks": ["forage"], "methods": ["rule"], "populations": [4], "seeds": 1}},
        "viewsets": {"v": {"study": "w", "method": "rule", "controllers": ["model"], "reference": "model"}},
    }
    with pytest.raises(ConfigError) as refused:
        validate(config, "viewsets.yaml")
    problems = str(refused.value)
    assert "viewsets.v.method: 'rule' (its replicate 'r1') keeps no views" in problems
    assert "'r0'" not in problems  # the replicate that keeps them passes, whatever the base entry says
    assert "viewsets.v.reference: 'model' is not one of the view set's controllers (model@a, model@b" in problems
