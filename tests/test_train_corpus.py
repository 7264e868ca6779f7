"""The decision corpus: a view's class read with its agent's last commitment, native views drawn and
all train, synthetic bundles that hold one view of each of the eight classes, whole in one split."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.train.corpus import assemble, classified, native, synthetic, table
from hivebench.train.teacher import CLASSES

STUDY = {
    "tasks": {
        "pursuit": {"kind": "swarmbench", "task": "pursuit"},
        "sync": {"kind": "swarmbench", "task": "synchronization", "rounds": 20},
        "silo26": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9, "change_at": 5},
        "silo04": {"kind": "silobench", "task": "I-04", "topology": "regular3", "rounds": 9},
        "silo11": {"kind": "silobench", "task": "II-11", "topology": "regular3", "rounds": 9},
    },
    "methods": {"rule": {"kind": "scripted_controller", "keep_views": True}},
    "studies": {
        "bundles": {
            "tasks": ["pursuit", "sync", "silo26", "silo04", "silo11"],
            "methods": ["rule"],
            "populations": [16],
            "seeds": 32,
        },
    },
}


@pytest.fixture(scope="module")
def played() -> pd.DataFrame:
    """Every view the scripted controller was shown, with where (as viewset.read_views gives them)."""
    frames = []
    for block in all_blocks(validate(STUDY, "corpus.yaml"), Path("."))["bundles"]:
        for cell, episode in zip(block.cells(), play_block(list(block.cells()))):
            views = episode.table("views").to_pandas()
            where = {"study": "bundles", "suite": cell["suite"], "task": cell["task"]["name"], "method": "rule"}
            frames.append(views.assign(**where, population=cell["population"], seed=cell["seed"]))
    return pd.concat(frames, ignore_index=True)


def suite(views: pd.DataFrame, name: str) -> pd.DataFrame:
    return views[views["suite"] == name]


def test_a_conflict_on_the_claim_an_agent_was_committed_to_is_a_reopening():
    base = {"budget_bin": 2, "task_contract": {"actions": ["SEND", "HOLD"]}, "worker_proposal": "SEND"}
    trace = {"channel": 5, "claim": 7, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3}
    committed = {
        **base,
        "incident_fields": [trace],
        "local_commitment": {"claim": 7, "confidence_bin": 2},
        "private_state": {"evidence": []},
    }
    refuted = {
        **base,
        "incident_fields": [trace],
        "local_commitment": None,
        "private_state": {"evidence": [{"claim": 7, "refuted": True}]},
    }
    where = {
        "study": "s",
        "suite": "silobench",
        "task": "t",
        "method": "m",
        "population": 4,
        "seed": 0,
        "actions": "[]",
    }
    views = pd.DataFrame(
        [
            {**where, "step": 1, "agent": 0, "view": json.dumps(committed)},
            {**where, "step": 2, "agent": 0, "view": json.dumps(refuted)},
            {**where, "step": 2, "agent": 1, "view": json.dumps(refuted)},  # never committed: a plain conflict
        ]
    )
    assert classified(views)["situation"].tolist() == ["relay", "reopen", "conflict"]


def test_native_views_are_drawn_from_the_seed_and_all_train(played):
    silo = suite(played, "silobench")
    drawn = native(silo, 40, seed=3)
    assert len(drawn) == 40 and (drawn["split"] == "train").all() and (drawn["origin"] == "native").all()
    assert drawn.equals(native(silo, 40, seed=3)) and not drawn.equals(native(silo, 40, seed=4))
    assert set(drawn["bundle"]) <= {f"native/{t}/n16/s{s}" for t in STUDY["tasks"] for s in range(32)}


@pytest.mark.parametrize("name", ["swarmbench", "silobench"])
def test_a_synthetic_bundle_holds_one_view_of_each_class_and_lies_in_one_split(played, name):
    views, counts = synthetic(suite(played, name), bundles=2, seeds_per_bundle=8, validation=0, test=1, seed=0)
    assert counts["bundles"] == 4 and counts["complete"] >= 2  # 32 seeds in bundles of 8
    assert len(views) == 2 * len(CLASSES) and views["bundle"].nunique() == 2
    for _, group in views.groupby("bundle"):
        assert sorted(group["situation"]) == sorted(CLASSES)  # one of each
        assert group["split"].nunique() == 1
        seeds = group["seed"].unique()
        assert seeds.max() - seeds.min() < 8 and len(set(seeds // 8)) == 1  # from its own eight seeds
    assert sorted(views.drop_duplicates("bundle")["split"]) == ["test", "train"]
    again, _ = synthetic(suite(played, name), bundles=2, seeds_per_bundle=8, validation=0, test=1, seed=0)
    assert again.equals(views)


def test_the_bundles_drawn_go_to_test_then_validation_then_train(played):
    views, counts = synthetic(suite(played, "swarmbench"), bundles=3, seeds_per_bundle=8, validation=1, test=1, seed=2)
    assert counts["complete"] >= 3
    splits = views.drop_duplicates("bundle")["split"]
    assert sorted(splits) == ["test", "train", "validation"] and len(views) == 3 * len(CLASSES)


def test_too_few_complete_bundles_is_an_error_naming_what_the_others_lack(played):
    with pytest.raises(ValueError, match=r"bundles hold all eight situation classes, 8 are asked: .*lack: unresolved"):
        synthetic(suite(played, "silobench"), bundles=8, seeds_per_bundle=4, validation=1, test=1, seed=0)
    with pytest.raises(ValueError, match="leave none"):
        synthetic(suite(played, "silobench"), bundles=2, seeds_per_bundle=8, validation=1, test=1, seed=0)


def test_no_bundle_lands_in_two_splits(played):
    views, _ = synthetic(suite(played, "silobench"), bundles=2, seeds_per_bundle=8, validation=0, test=1, seed=0)
    both = assemble([views, native(suite(played, "silobench"), 10, seed=0)])
    counts = table(both)
    assert counts[["train", "validation", "test"]].to_numpy().sum() == len(both)
    broken = views.copy()
    broken.loc[broken.index[0], "split"] = "test" if broken.loc[broken.index[0], "split"] != "test" else "train"
    with pytest.raises(ValueError, match="bundles in two splits: synthetic/silobench"):
        assemble([broken])


def test_the_rule_teachers_labels_are_admitted_and_a_refused_one_is_counted(played):
    from hivebench.train.label import acceptance, rule_labels

    views, _ = synthetic(suite(played, "silobench"), bundles=2, seeds_per_bundle=8, validation=0, test=1, seed=0)
    labels = rule_labels(views)
    assert labels["accepted"].all() and labels["code"].isna().all()
    doctored = views.copy()
    first = json.loads(doctored.loc[0, "view"])
    first["task_contract"]["actions"] = [a for a in first["task_contract"]["actions"] if a != first["worker_proposal"]]
    doctored.loc[0, "view"] = json.dumps(first)  # its proposal no longer legal: the record's action is refused
    refused = rule_labels(doctored)
    assert refused["accepted"].tolist() == [False] + [True] * (len(views) - 1) and refused.loc[0, "code"] == "action"
    counts = acceptance(refused).set_index(["situation", "split"])
    row = counts.loc[(views.loc[0, "situation"], views.loc[0, "split"])]
    assert (row["views"], row["accepted"]) == (2 if views.loc[0, "split"] == "train" else 1, row["views"] - 1)


def test_a_model_teachers_records_count_only_where_its_first_decode_was_executable(played, tmp_path):
    from hivebench.train.label import model_labels, rule_labels

    views, _ = synthetic(suite(played, "swarmbench"), bundles=2, seeds_per_bundle=8, validation=0, test=1, seed=0)
    truth = rule_labels(views)["record"].tolist()
    replies = tmp_path / "teacher.jsonl"
    # a reply per view, the first not JSON; then the ladder's regeneration of it, which repairs it
    replies.write_text("".join(json.dumps(r) + "\n" for r in ["not json", *truth[1:], truth[0]]))
    params = {"backend": "scripted", "model": str(replies), "temperature": 0.2, "top_p": 1.0, "max_tokens": 128}
    labels = model_labels(views, params, tmp_path / "cache.jsonl", seed=0)
    assert labels["accepted"].tolist() == [False] + [True] * (
        len(views) - 1
    )  # repaired: the ladder's, not the teacher's
    assert labels["record"].tolist()[1:] == truth[1:] and labels.loc[0, "code"] is not None
