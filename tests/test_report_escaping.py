"""The report escapes every text that came from a config or a model."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hivebench.contrasts import contrast_table
from hivebench.cli import main
from hivebench.scores import score_table

HOSTILE = '<script>alert("x")</script>'


def test_names_from_config_are_escaped_in_the_report(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for method in ("plain", HOSTILE):
        for seed in range(6):
            conflicts = list(rng.integers(1, 4, size=6))
            rows.append({
                "study": "s<b>", "suite": "loopbench", "task": "cycle", "method": method, "population": 5,
                "seed": seed, "graph": "C5", "proximity": float(rng.uniform(0, 100)),
                "stability": float(rng.uniform(0, 100)), "conflicts": conflicts,
                "reached_optimum": 1.0, "final_optimal": 0.0, "first_optimal_step": 2.0,
            })  # fmt: skip
    episodes = pd.DataFrame(rows)
    episodes.to_parquet(tmp_path / "episodes.parquet")
    score_table(episodes, 200, 0.95, 0, {}).to_parquet(tmp_path / "scores.parquet")
    spec = {"reference": "plain"}
    contrast_table(episodes, spec, ["proximity"], 200, 0.95, 0).to_parquet(tmp_path / "contrasts.parquet")
    assert main(["report", "--episodes", str(tmp_path / "episodes.parquet"), "--out", str(tmp_path / "r"), "--resamples", "200"]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert HOSTILE not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "s&lt;b&gt;" in page
