"""The report escapes every text that came from a config or a model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import write_config
from test_scripted import lines
from test_workflow import snakemake

from hivebench.cli import main
from hivebench.contrasts import contrast_table
from hivebench.scores import score_table

HOSTILE = '<script>alert("x")</script>'


def test_names_from_config_are_escaped_in_the_report(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for method in ("plain", HOSTILE):
        for seed in range(6):
            conflicts = list(rng.integers(1, 4, size=6))
            rows.append(
                {
                    "study": "s<b>",
                    "suite": "loopbench",
                    "task": "cycle",
                    "method": method,
                    "population": 5,
                    "seed": seed,
                    "graph": "C5",
                    "proximity": float(rng.uniform(0, 100)),
                    "stability": float(rng.uniform(0, 100)),
                    "conflicts": conflicts,
                    "reached_optimum": 1.0,
                    "final_optimal": 0.0,
                    "first_optimal_step": 2.0,
                }
            )
    episodes = pd.DataFrame(rows)
    episodes.to_parquet(tmp_path / "episodes.parquet")
    score_table(episodes, 200, 0.95, 0, {}).to_parquet(tmp_path / "scores.parquet")
    spec = {"reference": "plain"}
    contrast_table(episodes, spec, ["proximity"], 200, 0.95, 0).to_parquet(tmp_path / "contrasts.parquet")
    assert (
        main(
            [
                "report",
                "--episodes",
                str(tmp_path / "episodes.parquet"),
                "--out",
                str(tmp_path / "r"),
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    page = (tmp_path / "r" / "index.html").read_text()
    assert HOSTILE not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "s&lt;b&gt;" in page


@pytest.mark.workflow
def test_model_written_text_never_reaches_a_report_unescaped(tmp_path):
    """An LLM whose messages, notes and answers are HTML (a scripted backend, through the workflow):
    each LLM cell's agent and message tables hold it verbatim, the study's episode page of the LLM
    shows it (its data, escaped), and no report file holds that text raw."""
    n, rounds = 4, 2
    replies = [{"broadcast": HOSTILE, "notes": HOSTILE}] * (n * rounds) + [
        {"answer": HOSTILE, "notes": f"'{HOSTILE}'"}
    ] * n
    config = {
        "tasks": {"silo": {"kind": "silobench", "task": "I-09", "protocol": "broadcast", "rounds": rounds}},
        "methods": {
            "llm": {"kind": "llm", "backend": "scripted", "model": lines(tmp_path / "replies.jsonl", replies)},
            "random": {"kind": "random"},
        },
        "studies": {"s": {"tasks": ["silo"], "methods": ["llm", "random"], "populations": [n], "seeds": 2}},
        "report": {"bootstrap_resamples": 100},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)
    cells = sorted((tmp_path / "results/episodes/s").glob("*/silo/llm/*/s[0-9].parquet"))
    assert len(cells) == 2, cells  # one agent table per seed
    for cell in cells:
        agents = pd.read_parquet(cell)
        messages = pd.read_parquet(cell.with_suffix(".messages.parquet"))
        assert len(messages) == n * rounds and (messages["text"] == HOSTILE).all()
        assert set(agents["notes"].dropna()) - {""} == {HOSTILE, f"'{HOSTILE}'"}
        answers = agents["answer"].dropna()
        assert len(answers) == n and {json.loads(a) for a in answers} == {HOSTILE}  # as JSON strings
    pages = list((tmp_path / "reports").rglob("*.html"))
    assert len(pages) > 2  # the page, the Silo-Bench section, its interactive charts, the episode pages
    # The model's text reaches the LLM's episode page, as JSON whose every "<" is escaped (view/page.py)
    shown = json.dumps(HOSTILE, ensure_ascii=False).replace("<", "\\u003c")[1:-1]
    episode_pages = [p for p in pages if "episodes" in p.relative_to(tmp_path / "reports").parts]
    assert [p for p in episode_pages if "llm" in str(p) and shown in p.read_text()], episode_pages
    for page in pages:  # (a chart's data is JSON inside a <script>: a raw </script> would end it early)
        text = page.read_text()
        assert 'alert("x")' not in text and text.count("</script>") == text.count("<script"), page
