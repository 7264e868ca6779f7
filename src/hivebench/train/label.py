"""The teacher's labels: a canonical record for every view of a corpus, and whether the validator
admits it whole on the view alone ("Only canonical JSON records that pass batch-level schema validation
enter D_dec"). The teacher is the rule teacher (teacher.py), or any `waggle` method (a model through any
backend: the paper's GPT-4o at temperature 0.2 through the openai backend) asked through the
admission ladder, every call through a response cache, of which only the first decodes that were
executable count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hivebench.ids import canonical_json
from hivebench.train.teacher import record
from hivebench.waggle.runtime.records import Decisions, parse
from hivebench.waggle.study.viewset import decide, view_blocks

RULE = "rule"  # the rule teacher's name in a config


def rule_labels(corpus: pd.DataFrame) -> pd.DataFrame:
    """The rule teacher's record for every view, and the validator's code (None: admitted whole)."""
    held = corpus["held_before"].astype("object").where(corpus["held_before"].notna(), None)
    records = [record(json.loads(v), None if h is None else int(h)) for v, h in zip(corpus["view"], held)]
    codes: list[str | None] = [None] * len(corpus)
    for positions, block in view_blocks(corpus):
        decisions = Decisions.private(block.proposal)
        for agent, p in enumerate(positions):
            decisions.put(agent, parse(records[p], block.actions))
        for agent, code in enumerate(block.check(decisions).codes):
            codes[positions[agent]] = code
    return corpus.assign(record=[canonical_json(r) for r in records], code=codes, accepted=[c is None for c in codes])


def model_labels(corpus: pd.DataFrame, params: dict[str, Any], cache: str | Path, seed: int) -> pd.DataFrame:
    """A model teacher's records (a `waggle` method's `params`), each reply through the response cache;
    a record counts only where its first decode was executable (a repaired or projected one is the
    ladder's, not the teacher's)."""
    decided = decide(corpus[["actions", "view"]], params, cache, seed)
    executable = (decided["rung"] == "executable").to_numpy()
    codes = np.where(executable, None, decided["first_code"].astype(object).fillna("not executable"))
    return corpus.assign(record=decided["record"].to_numpy(), code=codes, accepted=executable)


def acceptance(labels: pd.DataFrame) -> pd.DataFrame:
    """Per suite, situation class and split: views, records accepted, and the share accepted (%)."""
    grouped = labels.groupby(["suite", "situation", "split"], sort=True)["accepted"]
    table = grouped.agg(views="size", accepted="sum").reset_index()
    return table.assign(**{"accepted (%)": 100 * table["accepted"] / table["views"]})
