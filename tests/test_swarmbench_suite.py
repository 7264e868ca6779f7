"""SwarmBench as a suite: config checks, the LLM agent through the text view (a scripted backend),
what it does with long messages and unknown actions, the heuristic against random, and the report."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest
from conftest import write_config
from test_scripted import lines, only_cell
from test_workflow import snakemake

from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play
from hivebench.suites.swarmbench.task import SwarmTask
from hivebench.suites.swarmbench.text import SwarmView, draw


def study(task: dict, population: int, method: dict | None = None) -> dict:
    return {
        "tasks": {"t": task},
        "methods": {"m": method or {"kind": "random"}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": 1}},
    }


@pytest.mark.parametrize(
    ("task", "population", "message"),
    [
        (
            {"kind": "swarmbench", "task": "pursuit", "view": 4},
            8,
            "tasks.t.view: the view is k x k cells around the agent, k odd and at least 3; got 4",
        ),
        ({"kind": "swarmbench", "task": "pursuit", "view": 1}, 8, "k odd and at least 3; got 1"),
        (
            {"kind": "swarmbench", "task": "pursuit", "grid": 10},
            30,
            "a pursuit level on a 10 x 10 map holds at most 25 agents, got 30 (raise grid)",
        ),
        (
            {"kind": "swarmbench", "task": "foraging", "grid": 6},
            9,
            "a foraging level on a 6 x 6 map holds at most 8 agents, got 9",
        ),
        ({"kind": "swarmbench", "task": "herding"}, 8, "tasks.t.task"),
    ],
)
def test_bad_swarmbench_tasks_are_config_errors_that_name_the_key(task, population, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(study(task, population), "x.yaml")


def test_the_view_is_drawn_as_the_reference_draws_it():
    game = SwarmTask(
        {"task": "synchronization", "rounds": 2, "view": 5, "grid": "auto", "message_chars": 120, "to_sender": False}, 8
    )
    game.reset([0])
    views = game.observe()
    text = draw(views, 0)
    header, *rows = text.split("\n")
    row, col = views.position[0]
    assert header.split() == [str(c) for c in range(col - 2, col + 3)]
    assert [r.split()[0] for r in rows] == [str(r) for r in range(row - 2, row + 3)]
    assert rows[2][5:].split()[2] == "Y"
    for i in range(5):
        for j in range(5):
            other = views.ids[0, i, j]
            if other >= 0 and (i, j) != (2, 2):
                cell = rows[i][5 + 4 * j : 9 + 4 * j].strip()
                assert cell == ("" if views.state["light"][other] else "$") + str(other)
    system = SwarmView().system(views, 0)
    assert "SWITCH" in system and "8 agents" in system and "within 2 cells" in system


def test_an_llm_agent_plays_swarmbench_long_messages_are_cut_and_unknown_actions_fall_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n, rounds = 4, 2
    long = "m" * 150
    replies = [
        {"action": "UP", "message": long, "notes": "a"},
        {"action": "LEFT", "message": "", "notes": ""},
        {"action": "STAY", "message": "hi", "notes": ""},
        {"action": "JUMP", "message": "", "notes": ""},
        {"action": "FLY", "message": "", "notes": ""},  # the repair of the fourth agent's reply: still no action
        *[{"action": "STAY", "message": "", "notes": ""}] * n,
    ]
    method = {"kind": "llm", "backend": "scripted", "model": lines(tmp_path / "replies.jsonl", replies)}
    task = {"kind": "swarmbench", "task": "pursuit", "rounds": rounds}
    record = play(only_cell(tmp_path, task, method, n))
    summary = record.summary
    assert summary["llm_calls"] == n * rounds + 1 and summary["repaired"] == 0 and summary["fallback"] == 1
    messages = record.table("messages").to_pylist()
    assert [m["size"] for m in messages] == [120, 2] and summary["truncated_messages"] == 1
    actions = record.agents["action"].to_pylist()
    assert actions[n : 2 * n] == ["UP", "LEFT", "STAY", "STAY"]  # the fallback stays


def summaries(method: str, task: str) -> tuple[MappingProxyType, ...]:
    """Eight episodes of `method` on `task` with 16 agents (their summaries, read-only)."""
    config = study(
        {"kind": "swarmbench", "task": task, "rounds": 100 if task == "transport" else 60}, 16, {"kind": method}
    )
    config["studies"]["s"]["seeds"] = 8
    from hivebench.cells import all_blocks
    from hivebench.engine.loop import play_block

    cells = [c for b in all_blocks(validate(config, "x.yaml"), Path("x.yaml").parent)["s"] for c in b.cells()]
    return tuple(MappingProxyType(r.summary) for r in play_block(cells))


@pytest.fixture(scope="module")
def played() -> Callable[[str, str], tuple[MappingProxyType, ...]]:
    """summaries(method, task), each pair played once for the whole module, on first use: the tests
    below share them and only read them."""
    return functools.cache(summaries)


def test_the_heuristic_beats_random_where_its_rule_can(played):
    for task in ("pursuit", "synchronization", "foraging", "flocking", "transport"):
        heuristic = [s["score"] for s in played("heuristic", task)]
        random = [s["score"] for s in played("random", task)]
        assert np.mean(heuristic) > np.mean(random) + 0.5, (task, heuristic, random)
    assert [s["score"] for s in played("heuristic", "synchronization")] == [60.0] * 8  # the clock agrees every round


def test_random_never_moves_the_box_and_the_heuristic_does(played):
    for summary in played("random", "transport"):
        assert summary["box_path"] == [[0, 0]] * 101 and summary["escaped"] == 0 and summary["score"] == 0
    moved = [max(abs(d) for state in s["box_path"] for d in state) for s in played("heuristic", "transport")]
    assert sum(m > 0 for m in moved) >= 6, moved


@pytest.mark.workflow
def test_a_swarmbench_study_reports_scores_the_aggregate_and_episode_frames(tmp_path):
    tasks = {  # the aggregate's tasks on the rules the anchors were measured under (anchors.yaml: reference)
        t: {"kind": "swarmbench", "task": t, "rounds": 20, "compat": "reference"}
        for t in ("pursuit", "synchronization", "foraging")
    }
    tasks |= {
        t: {"kind": "swarmbench", "task": t.removesuffix("-ours"), "rounds": 20} for t in ("transport", "pursuit-ours")
    }
    config = {
        "tasks": tasks,
        "methods": {"random": {"kind": "random"}, "heuristic": {"kind": "heuristic"}},
        "studies": {
            "sw": {"tasks": list(tasks), "methods": ["heuristic", "random"], "populations": [8, 16], "seeds": 3}
        },
        "report": {"bootstrap_resamples": 200},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)
    scores = pd.read_parquet(tmp_path / "results/sw/scores.parquet")
    anchored = scores[scores["task"].isin(["pursuit", "synchronization", "foraging"])]
    assert anchored["normalised_mean"].notna().all()  # at N = 16 too: the N = 8 anchor applies
    assert scores[scores["task"] == "transport"]["normalised_mean"].isna().all()
    ours = scores[scores["task"] == "pursuit-ours"]  # hivebench's rules: not divided by the reference's anchor
    assert ours["normalised_mean"].isna().all()
    assert (ours["normalisation"] == "not normalised: rules hivebench, the anchors' reference").all()
    section = (tmp_path / "reports/sw/swarmbench/section.html").read_text()
    assert "Waggle aggregate" in section and section.count("<tr>") > 10
    assert (tmp_path / "reports/sw/swarmbench/swarmbench_episodes.png").stat().st_size > 10_000


def test_replay_plays_recorded_swarmbench_actions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = [
        {"step": 0, "agent": 0, "reply": {"action": "RIGHT", "message": "go"}},
        {"step": 0, "agent": 1, "reply": {"action": "SWIM", "message": ""}},
        {"step": 1, "agent": 0, "reply": {"action": "DOWN", "message": ""}},
    ]
    method = {"kind": "replay", "file": lines(tmp_path / "run.jsonl", script)}
    record = play(only_cell(tmp_path, {"kind": "swarmbench", "task": "foraging", "rounds": 2}, method, 4))
    actions = record.agents["action"].to_pylist()
    assert actions[4:8] == ["RIGHT", "STAY", "STAY", "STAY"] and actions[8] == "DOWN"
    assert {k: record.summary[k] for k in ("replayed", "missing", "invalid")} == {
        "replayed": 2,
        "missing": 5,
        "invalid": 1,
    }
    assert record.table("messages").column("text").to_pylist() == ["go"]


def test_wide_ids_keep_their_cells_apart_in_the_drawn_view():
    game = SwarmTask(
        {"task": "synchronization", "rounds": 1, "view": 9, "grid": "auto", "message_chars": 120, "to_sender": False},
        128,
    )
    game.reset([2])
    views = game.observe()
    agent = int(np.argmax((views.ids >= 100).sum(axis=(1, 2))))  # one that sees an agent numbered 100 or more
    assert (views.ids[agent] >= 100).any()
    rows = draw(views, agent).split("\n")[1:]
    assert all(len(row.split()) == 1 + 9 for row in rows)  # the row number, then 9 cells


def test_the_aggregate_is_the_mean_over_tasks_of_score_over_anchor_and_needs_every_anchor():
    from hivebench.suites.swarmbench.report import aggregate_table

    episodes = pd.DataFrame(
        {
            "swarm_task": [
                "pursuit",
                "pursuit",
                "foraging",
                "foraging",
                "synchronization",
                "synchronization",
                "pursuit",
            ],
            "population": 8,
            "method": ["m"] * 6 + ["only_pursuit"],
            "score": [1.0, 3.0, 2.0, 2.0, 3.0, 9.0, 5.0],
        }
    )
    anchors = {
        ("swarmbench", "pursuit"): (2.0, 8, ""),
        ("swarmbench", "foraging"): (4.0, 8, ""),
        ("swarmbench", "synchronization"): (6.0, 8, ""),
    }
    table = aggregate_table(episodes, 100, 0.95, 0, anchors)
    # by hand: pursuit (1 + 3) / 2 / 2 = 1, foraging 2 / 4 = 0.5, synchronization (3 + 9) / 2 / 6 = 1
    assert table[["n", "method", "episodes"]].values.tolist() == [[8, "m", 6]]
    assert table["normalised"].iloc[0] == pytest.approx((1 + 0.5 + 1) / 3)
    assert table["lo"].iloc[0] <= table["normalised"].iloc[0] <= table["hi"].iloc[0]
    for missing in anchors:
        assert aggregate_table(episodes, 100, 0.95, 0, {k: v for k, v in anchors.items() if k != missing}).empty
