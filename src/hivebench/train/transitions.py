"""Stage two's transition corpus: "we execute complete episodes with the fixed benchmark adapters and
runtime on training-only seeds ... Immediately before an active node decodes, we store ℓ_i^t; after
validation we store the admitted d_i^t; and after the synchronous batch is realized we store the next
view ℓ_i^{t+1} for the same node. Terminal records without a well-defined next local update are
masked. ... No synthetic curriculum adjacency contributes to this corpus."

The episodes are a study's cells of a method on the view runtime that keeps its views (`keep_views`):
their `views` tables hold each view shown and the record the runtime admitted on it. A transition is
an agent's view, its admitted record and the agent's next view in the same episode; an agent's last
view has none and is left out. `count` transitions are drawn (all where there are fewer), each marked
eventful or ordinary for the stratified sampler (field.eventful).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from hivebench.train.field import eventful
from hivebench.waggle.study.viewset import SOURCE

EPISODE = list(SOURCE[:6])  # study, suite, task, method, population, seed
COLUMNS = [*SOURCE, "actions", "view", "record", "next_view", "eventful"]


def transitions(views: pd.DataFrame, count: int, seed: int) -> pd.DataFrame:
    """(view, admitted record, next view) of each agent's consecutive views, `count` of them drawn by
    `seed`, in the episodes' order."""
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
    if len(pairs) > count:
        pairs = pairs.iloc[np.sort(np.random.default_rng([seed, 1]).choice(len(pairs), count, replace=False))]
    flags = [
        eventful(json.loads(v), json.loads(r), json.loads(n))
        for v, r, n in zip(pairs["view"], pairs["record"], pairs["next_view"])
    ]
    return pairs.assign(eventful=flags)[COLUMNS].reset_index(drop=True)
