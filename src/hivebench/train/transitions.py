"""Stage two's transition corpus: "we execute complete episodes with the fixed benchmark adapters and
runtime on training-only seeds ... Immediately before an active node decodes, we store ℓ_i^t; after
validation we store the admitted d_i^t; and after the synchronous batch is realized we store the next
view ℓ_i^{t+1} for the same node. Terminal records without a well-defined next local update are
masked. ... No synthetic curriculum adjacency contributes to this corpus."

The episodes are a study's cells of a method on the view runtime that keeps its views (`keep_views`):
their `views` tables hold each view shown and the record the runtime admitted on it. A transition is
an agent's view, its admitted record and the agent's next view in the same episode; an agent's last
view has none and is left out. Each is marked eventful or ordinary for the stratified sampler
(field.eventful).

Splits, by whole episodes within each task: a `held_out` share of a task's episodes is kept from
training for the frozen-probe diagnostic ("computed only after selection, on data excluded from
controller training"), half of it to fit the probe (`probe_fit`) and half to measure it
(`probe_test`); of the rest (`train`), `count` transitions are drawn (all where there are fewer).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from hivebench.train.field import eventful
from hivebench.waggle.study.viewset import SOURCE

EPISODE = list(SOURCE[:6])  # study, suite, task, method, population, seed
COLUMNS = [*SOURCE, "actions", "view", "record", "next_view", "eventful", "split"]
SPLITS = ("train", "probe_fit", "probe_test")


def transitions(views: pd.DataFrame, count: int, seed: int, held_out: float = 0.0) -> pd.DataFrame:
    """(view, admitted record, next view) of each agent's consecutive views, with their split; `count`
    of the training split's drawn by `seed`; in the episodes' order."""
    if views.empty:
        raise ValueError("no views: the transitions' study and method showed none")
    missing = views["record"].isna()
    if missing.any():
        where = views.loc[missing].iloc[0]
        raise ValueError(
            f"{int(missing.sum())} views without their admitted record (first: study {where['study']}, task "
            f"{where['task']}, N {where['population']}, seed {where['seed']}): views tables written before the "
            "runtime kept records; rerun those cells (snakemake --forcerun the study's jobs)"
        )
    ordered = views.sort_values([*EPISODE, "agent", "step"]).reset_index(drop=True)
    following = ordered.groupby([*EPISODE, "agent"], sort=False)["view"].shift(-1)
    pairs = ordered.assign(next_view=following).dropna(subset=["next_view"]).reset_index(drop=True)
    pairs["split"] = episode_splits(pairs, held_out, seed)
    train = np.flatnonzero(pairs["split"] == "train")
    if len(train) > count:
        dropped = np.setdiff1d(train, np.random.default_rng([seed, 1]).choice(train, count, replace=False))
        pairs = pairs.drop(index=dropped).reset_index(drop=True)
    flags = [
        eventful(json.loads(v), json.loads(r), json.loads(n))
        for v, r, n in zip(pairs["view"], pairs["record"], pairs["next_view"])
    ]
    return pairs.assign(eventful=flags)[COLUMNS].reset_index(drop=True)


def episode_splits(pairs: pd.DataFrame, held_out: float, seed: int) -> list[str]:
    """Each transition's split, drawn by whole episodes within each task (so that the probe is fitted
    and measured on every task): round(held_out × the task's episodes) of them held out, at least two
    (one to fit, one to measure) and never all, alternately `probe_fit` and `probe_test`."""
    split: dict[tuple[Any, ...], str] = {}
    keys = list(pairs[EPISODE].itertuples(index=False, name=None))
    for task, group in pd.Series(keys).groupby(pairs["task"].to_numpy(), sort=True):
        episodes = list(dict.fromkeys(group))
        held = 0 if held_out == 0 else min(len(episodes) - 1, max(2, round(held_out * len(episodes))))
        if held_out > 0 and held < 2:
            raise ValueError(
                f"task {task!r} has {len(episodes)} episodes: too few to hold out one to fit the probe and one to "
                "measure it and train on the rest (held_out needs three or more a task)"
            )
        order = np.random.default_rng([seed, 2]).permutation(len(episodes))
        for rank, i in enumerate(order):
            split[episodes[i]] = "train" if rank >= held else ("probe_fit", "probe_test")[rank % 2]
    return [split[k] for k in keys]
