"""The decision corpus: local views the runtime showed, each with its local-situation class, its
bundle and its split, before any teacher labels them.

The paper's: "6,400 synthetic and 512 train-only native local views ... 3,456 views to each substrate
... Validation and test each contain 800 synthetic views", "Each synthetic curriculum bundle contains
one independently instantiated example from each of eight local-situation classes", "Bundles, rather
than individual examples, are assigned to splits before teacher labeling". Here, per substrate (suite):

- native views: `views` drawn at random from a study's episodes of a method on the view runtime (its
  cells' `views` tables), on training-only seeds; all of them train;
- synthetic bundles: a study's episodes, played for the purpose on training-only seeds, grouped into
  bundles of `seeds_per_bundle` consecutive seeds at one N, over every task of the suite the study
  plays (so that, say, Synchronization's waits and relocated Pursuit's conflicts meet in one SwarmBench
  bundle). A bundle whose views hold all eight classes is complete and gives one view of each class,
  drawn from the bundle's seed, from its tasks in turn (Silo-Bench's levels share the classes). Every
  such view is one the runtime showed, built by its own view builder. `bundles` complete bundles are
  kept, and `test` and `validation` of them go to those splits, whole, before any label.

A view's class is the teacher's (teacher.situation), with the commitment its agent held when it last
decided (its previous view's), which the runtime has reopened where verified counterevidence
contradicts it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from hivebench.train.teacher import CLASSES, situation
from hivebench.waggle.study.viewset import SOURCE

COLUMNS = [*SOURCE, "actions", "view", "origin", "bundle", "situation", "held_before", "split"]
SPLITS = ("train", "validation", "test")


CELL = ["study", "suite", "task", "method", "population", "seed"]  # the views of one episode


def classified(views: pd.DataFrame) -> pd.DataFrame:
    """The views with their local-situation class, each read with its agent's previous view's
    commitment (none at the agent's first view)."""
    parsed = [json.loads(v) for v in views["view"]]
    held = pd.Series([(v["local_commitment"] or {}).get("claim") for v in parsed], index=views.index, dtype=object)
    ordered = views.sort_values([*CELL, "agent", "step"]).index
    before = held[ordered].groupby([views.loc[ordered, k] for k in [*CELL, "agent"]], sort=False).shift(1)
    previous = before.reindex(views.index)
    kinds = [situation(v, None if pd.isna(b) else int(b))[0] for v, b in zip(parsed, previous)]
    return views.assign(situation=kinds, held_before=previous.astype("Int64"))


def native(views: pd.DataFrame, count: int, seed: int) -> pd.DataFrame:
    """`count` views drawn uniformly without replacement (all where there are fewer), each its episode's
    bundle, all train: "train-only native views"."""
    if len(views) > count:
        views = views.iloc[np.sort(np.random.default_rng([seed, 0]).choice(len(views), count, replace=False))]
    bundle = [f"native/{t}/n{n}/s{s}" for t, n, s in zip(views["task"], views["population"], views["seed"])]
    return classified(views).assign(origin="native", bundle=bundle, split="train")[COLUMNS].reset_index(drop=True)


def bundle_ids(views: pd.DataFrame, seeds_per_bundle: int) -> pd.Series:
    """Each view's bundle: its suite and N, and its seed's group of `seeds_per_bundle` among the seeds
    that suite and N were played on, in order."""
    ids = pd.Series("", index=views.index)
    for (suite, n), group in views.groupby(["suite", "population"], sort=False):
        seeds = sorted(group["seed"].unique())
        rank = {s: i // seeds_per_bundle for i, s in enumerate(seeds)}
        ids[group.index] = [f"synthetic/{suite}/n{n}/b{rank[s]}" for s in group["seed"]]
    return ids


def synthetic(
    views: pd.DataFrame, bundles: int, seeds_per_bundle: int, validation: int, test: int, seed: int
) -> tuple[pd.DataFrame, dict[str, int]]:
    """One view of each class from each of `bundles` complete bundles of one suite's views, and how many
    bundles there were and how many were complete. The bundles kept go to test, then validation, then
    train, in the order drawn."""
    if validation + test >= bundles:
        raise ValueError(f"{validation} validation and {test} test bundles leave none of {bundles} to train on")
    views = classified(views).assign(bundle=bundle_ids(views, seeds_per_bundle))
    classes = views.groupby("bundle", sort=False)["situation"].agg(set)
    complete = [b for b, held in classes.items() if held >= set(CLASSES)]
    counts = {"bundles": len(classes), "complete": len(complete)}
    if len(complete) < bundles:
        raise ValueError(
            f"{len(complete)} of {len(classes)} bundles hold all eight situation classes, {bundles} are asked: "
            f"play more seeds, or more per bundle (the classes the others lack: {lacking(classes)})"
        )
    order = np.random.default_rng([seed, 2]).permutation(len(complete))
    kept = [complete[i] for i in order[:bundles]]
    split = dict.fromkeys(kept[:test], "test") | dict.fromkeys(kept[test : test + validation], "validation")
    rows = []
    for index, bundle in enumerate(kept):
        rng = np.random.default_rng([seed, 1, index])
        mine = views[views["bundle"] == bundle]
        for turn, kind in enumerate(CLASSES):
            of_kind = mine[mine["situation"] == kind]
            tasks = sorted(of_kind["task"].unique())
            task = tasks[(index + turn) % len(tasks)]  # the bundle's tasks in turn
            candidates = of_kind[of_kind["task"] == task]
            rows.append(candidates.iloc[int(rng.integers(len(candidates)))])
    out = pd.DataFrame(rows).assign(origin="synthetic")
    out["split"] = out["bundle"].map(split).fillna("train")
    return out[COLUMNS].reset_index(drop=True), counts


def lacking(classes: pd.Series) -> str:
    """The classes incomplete bundles lack, with how many lack each."""
    missing: dict[str, int] = {}
    for held in classes:
        for kind in set(CLASSES) - held:
            missing[kind] = missing.get(kind, 0) + 1
    return ", ".join(f"{kind} ({count})" for kind, count in sorted(missing.items(), key=lambda kv: -kv[1])) or "none"


def assemble(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The corpus: its parts (each suite's native views and bundles), checked that no bundle lies in two
    splits."""
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    spread = frame.groupby("bundle")["split"].nunique()
    if (spread > 1).any():
        raise ValueError(f"bundles in two splits: {', '.join(spread[spread > 1].index[:5])}")
    return frame


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """Views per situation class, suite and split (the report's corpus table)."""
    counts = frame.groupby(["suite", "situation", "split"]).size().unstack("split", fill_value=0)
    return counts.reindex(columns=list(SPLITS), fill_value=0).reset_index()
