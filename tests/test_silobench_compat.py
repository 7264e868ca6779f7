"""Silo-Bench where it differs from the reference: each difference a named setting that `compat:
reference` sets at once; early submission (an agent that answers stops sending and is scored, the
episode ends once all have answered); the received data kept in a windowed prompt; the store read
by calls; and partial credit that an answer of the wrong size cannot take to 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_scripted import lines, only_cell

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.jobs import summary_row
from hivebench.engine.loop import play, play_block
from hivebench.ids import digest
from hivebench.suites.silobench.instances import instance
from hivebench.suites.silobench.report import pooled_table, settled
from hivebench.suites.silobench.scoring import judge
from hivebench.suites.silobench.task import SiloTask
from hivebench.suites.silobench.text import SiloView

BASE = {"protocol": "p2p", "topology": "complete", "message_chars": 200, "store_chars": 1000, "writes_per_round": 2}


# Partial credit of an over-long answer (before: 1, since only the expected entries were counted)


def test_own_prefix_sums_padded_with_five_junk_entries_get_15_of_20():
    own = instance("II-11", 4, 0).expected(1)
    assert len(own) == 15
    assert judge([*own, -1, -2, -3, -4, -5], own, "II") == (
        False,
        15 / 20,  # the 15 right positions over the 20 given
        "wrong size: 20 entries, expected 15; wrong entries",
    )


def test_the_whole_sorted_list_instead_of_the_slice_gets_20_of_80():
    inst = instance("III-21", 4, 0)
    whole = sorted(value for shard in inst.shards for value in shard)  # all 4 x 20 numbers
    own = inst.expected(2)
    assert own == whole[40:60]
    # the slice is a run of the whole list: 20 entries in order, over the 80 given
    assert judge(whole, own, "III") == (False, 20 / 80, "wrong size: 80 entries, expected 20; wrong entries")


def test_three_centroids_padded_with_two_more_get_3_of_5():
    centroids = instance("III-25", 4, 0).expected(0)
    assert len(centroids) == 3
    padded = [*centroids, list(centroids[0]), [0.0, 0.0]]
    assert judge(padded, centroids, "III") == (False, 3 / 5, "wrong size: 5 entries, expected 3; wrong entries")


# compat: the differences as a cell stores them


def cells(task: dict, method: str = "distributed", population: int = 4) -> list[dict]:
    config = {
        "tasks": {"t": {"kind": "silobench", "task": "I-01", **task}},
        "methods": {"m": {"kind": method}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": 1}},
    }
    return [
        cell for block in all_blocks(validate(config, "x.yaml"), Path("x.yaml").parent)["s"] for cell in block.cells()
    ]


def test_compat_reference_sets_every_difference_that_acts_and_hivebench_keeps_the_cells_identity():
    def params(task: dict) -> dict:
        (cell,) = cells(task)
        return {k: v for k, v in cell["task"]["params"].items() if k in ("submission", "received", "store_view")}

    assert params({"compat": "reference", "protocol": "store"}) == {
        "submission": "any_round",
        "received": "all",
        "store_view": "calls",
    }
    assert params({"compat": "reference"}) == {"submission": "any_round", "received": "all"}  # p2p: no store
    assert params({"compat": "reference", "submission": "end"}) == {"received": "all"}  # hivebench's: left out
    assert params({"submission": "any_round"}) == {"submission": "any_round"}
    plain = cells({})
    assert cells({"compat": "hivebench"}) == plain and digest(cells({"compat": "hivebench"})[0]) == digest(plain[0])
    assert "compat" not in cells({"compat": "reference"})[0]["task"]["params"]
    # an oracle answers at once: its cell is the same in both modes
    assert cells({"compat": "reference", "oracle": True}) == cells({"oracle": True})


# Early submission


def test_an_early_submitter_stops_sending_is_not_asked_again_and_is_scored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n, inst = 3, instance("II-11", 3, 0)
    right = [inst.expected(v) for v in range(n)]
    script = [
        # round 0: agent 0 answers (its own prefix sums need no one else's data) and sends
        (0, 0, {"messages": {"1": "a", "2": "b"}, "answer": right[0]}),
        (0, 1, {"messages": {"0": "c"}, "answer": None}),
        (0, 2, {"messages": {}, "answer": None}),
        # round 1: agent 0 has answered; its line is never read
        (1, 0, {"messages": {"1": "never sent"}, "answer": None}),
        (1, 1, {"messages": {"2": "d"}, "answer": right[1]}),
        (1, 2, {"messages": {"0": "e"}, "answer": None}),
        # round 2: the last agent answers, a message beside its answer; the episode ends (R = 5)
        (2, 2, {"messages": {"1": "f"}, "answer": right[2][:-1]}),
    ]
    replay = lines(tmp_path / "replay.jsonl", [{"step": t, "agent": v, "reply": r} for t, v, r in script])
    task = {"kind": "silobench", "task": "II-11", "rounds": 5, "submission": "any_round"}
    record = play(only_cell(tmp_path, task, {"kind": "replay", "file": replay}, n))
    sent = [(m["step"], m["sender"], m["receiver"]) for m in record.table("messages").to_pylist()]
    assert sent == [(0, 0, 1), (0, 0, 2), (0, 1, 0), (1, 1, 2), (1, 2, 0), (2, 2, 1)]
    assert record.summary["replayed"] == 1 + 2 + 3  # each agent asked until it answered
    states = 4  # state 0 and rounds 0, 1 and 2
    assert record.agents["step"].tolist() == np.repeat(np.arange(states), n).tolist()
    assert record.agents["sent"].reshape(states, n).tolist() == [[0, 0, 0], [2, 1, 0], [0, 1, 1], [0, 0, 1]]
    final = slice(-n, None)
    assert record.agents["submitted"].to_pylist()[final] == [0, 1, 2]
    assert record.agents["exact"].to_pylist()[final] == [True, True, False]
    assert record.agents["partial"].to_pylist()[final] == pytest.approx([1, 1, 14 / 15])
    summary = record.summary
    assert (summary["rounds"], summary["rounds_used"], summary["answered_early"]) == (5, 3, 3)
    assert summary["messages"] == 6 and summary["density"] == 6 / (n * (n - 1))
    assert summary["compat"] == "submission: any_round"


def test_an_llm_agent_that_answers_early_is_asked_no_more(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inst, quiet = instance("II-11", 3, 0), {"messages": {}, "answer": None, "notes": ""}
    replies = [
        {**quiet, "answer": inst.expected(0)},  # round 0: agent 0 answers, 1 and 2 do not
        quiet,
        quiet,
        quiet,  # round 1: agents 1 and 2
        quiet,
        {"answer": inst.expected(1), "notes": "x"},  # round 2 (R): agents 1 and 2
        {"answer": inst.expected(2), "notes": ""},
    ]
    method = {"kind": "llm", "backend": "scripted", "model": lines(tmp_path / "replies.jsonl", replies)}
    task = {"kind": "silobench", "task": "II-11", "rounds": 2, "submission": "any_round"}
    record = play(only_cell(tmp_path, task, method, 3))
    table = pa.table(record.agents)  # the task's states and the agent's columns line up: 4 states x 3 agents
    assert table.num_rows == 12 and record.summary["llm_calls"] == 3 + 2 + 2
    assert table.column("decision").to_pylist()[3:] == ["valid"] * 3 + [None, "valid", "valid"] * 2
    assert table.column("submitted").to_pylist()[-3:] == [0, 2, 2] and record.summary["exact"] == 1.0


def test_an_agent_that_has_not_answered_by_round_r_answers_then():
    game = SiloTask({"task": "I-01", **BASE, "rounds": 2, "oracle": False, "submission": "any_round"}, 3)
    game.reset([0])
    view, first = SiloView(), game.observe()
    assert (
        first.early
        and "answer" in view.reply_schema(first, 0)
        and view.reply_format(first, 0).endswith(', "answer": <your answer, or null to answer later>')
    )
    assert "An agent may give it in any round" in view.system(first, 0)
    answer = max(max(shard) for shard in instance("I-01", 3, 0).shards)
    quiet = {"messages": {}, "notes": "", "answer": None}
    game.step(view.actions(first, [{**quiet, "answer": answer}, quiet, quiet]))
    second = game.observe()
    assert second.active.tolist() == [False, True, True] and view.live(second).tolist() == [False, True, True]
    game.step(view.actions(second, [None, quiet, quiet]))
    last = game.observe()
    assert last.answering and view.reply_format(last, 1) == '"answer": <your answer>'
    game.step(view.actions(last, [None, {"answer": answer, "notes": ""}, None]))
    assert game.done
    (record,) = game.record()
    assert record.agents["submitted"].to_pylist()[-3:] == [0, 2, 2] and record.summary["rounds_used"] == 2
    assert record.agents["reason"].to_pylist()[-3:] == [None, None, "no answer"]


@pytest.mark.parametrize(("protocol", "messages"), [("p2p", 8 * 7), ("broadcast", 8), ("store", 8)])
def test_distributed_answers_once_it_holds_every_shard_and_has_passed_on_its_own(protocol, messages):
    """Complete topology (and the store): each agent sends its shard in round 0 and holds them all at
    the start of round 1, with nothing left to pass on: all answer in round 1, exactly."""
    task = {"task": ["I-01", "II-11", "III-21"], "protocol": protocol, "rounds": 6}
    for (_, early), (_, end) in zip(played({**task, "submission": "any_round"}, 8), played(task, 8)):
        assert early.agents["submitted"].to_pylist()[-8:] == [1] * 8
        assert early.summary["rounds_used"] == 2 and len(early.agents["step"]) == 3 * 8
        assert early.summary["success"] == end.summary["success"] == 1.0
        assert early.summary["messages"] == end.summary["messages"] == messages
        assert early.agents["answer"].to_pylist()[-8:] == end.agents["answer"].to_pylist()[-8:]
        assert early.agents["held"].to_pylist()[-8:] == [8] * 8


def test_a_flood_answers_early_as_it_would_at_the_end_and_local_answers_at_round_r():
    """Degree-three ports: an agent answers once it holds every shard and has passed them all on, so
    the others learn what they did before: the same answers and messages in fewer rounds."""
    task = {"task": ["II-11", "III-23"], "topology": "regular3", "rounds": 9}
    for (_, early), (_, end) in zip(played({**task, "submission": "any_round"}, 16), played(task, 16)):
        assert early.summary["success"] == end.summary["success"] == 1.0
        assert early.summary["messages"] == end.summary["messages"]
        assert early.table("messages").equals(end.table("messages"))
        submitted = early.agents["submitted"].to_pylist()[-16:]
        assert max(submitted) < 9 and early.summary["rounds_used"] == max(submitted) + 1
    for _, local in played({**task, "submission": "any_round"}, 16, "local"):
        assert local.agents["submitted"].to_pylist()[-16:] == [9] * 16 and local.summary["rounds_used"] == 9


def played(task: dict, n: int, method: str = "distributed") -> list:
    config = {
        "tasks": {"t": {"kind": "silobench", **task}},
        "methods": {"m": {"kind": method}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [n], "seeds": 1}},
    }
    out = []
    for block in all_blocks(validate(config, "x.yaml"), Path("x.yaml").parent)["s"]:
        group = list(block.cells())
        out += list(zip(group, play_block(group)))
    return out


# What the prompt keeps


def test_received_all_keeps_what_arrived_before_the_window_in_the_prompt():
    view = SiloView()
    turns = {}
    for received in ("window", "all"):
        game = SiloTask({"task": "I-01", **BASE, "rounds": 5, "oracle": False, "received": received}, 3)
        game.reset([0])
        for step in range(4):
            replies = [None, {"messages": {"0": "alpha"}, "notes": ""} if step == 0 else None, None]
            game.step(view.actions(game.observe(), replies))
        turns[received] = view.turn(game.observe(), 0, 2)  # round 5 of 6; the window: rounds 3 and 4
    assert "alpha" not in turns["window"]
    assert "Before your last 2 rounds:\nRound 2: you received\n  from agent 1: alpha\n" in turns["all"]
    assert (
        turns["all"].replace("Before your last 2 rounds:\nRound 2: you received\n  from agent 1: alpha\n", "")
        == (turns["window"])
    )


def test_the_store_read_by_calls_is_answered_next_round():
    params = {"task": "I-01", **BASE, "protocol": "store", "rounds": 3, "oracle": False, "store_view": "calls"}
    game = SiloTask(params, 3)
    game.reset([0])
    view, first = SiloView(), game.observe()
    assert {"writes", "list", "read"} <= set(view.reply_schema(first, 1)) and "You do not see" in view.system(first, 1)
    nothing = {"writes": {}, "list": False, "read": [], "notes": ""}
    game.step(
        view.actions(
            first,
            [
                {**nothing, "writes": {"k": "v0"}},
                {**nothing, "list": True, "read": ["k", "zz"]},
                nothing,
            ],
        )
    )
    second = game.observe()
    asked, quiet = view.turn(second, 1, 2), view.turn(second, 2, 2)
    assert "Your store calls of last round:\n  keys: 'k'\n  'k' (agent 0, round 1): v0\n  'zz': no such key" in asked
    assert "Your store calls of last round:\n  none" in quiet and "The store:" not in quiet
    game.step(view.actions(second, [nothing] * 3))
    # a round later the reads are in the window's history
    assert "Round 2: you read\n  keys: 'k'\n  'k' (agent 0, round 1): v0" in view.turn(game.observe(), 1, 2)


# The report


def test_tokens_per_round_are_over_the_rounds_used_and_each_behaviour_is_its_own_row():
    common = {"method": "llm", "protocol": "p2p", "topology": "complete", "rounds": 10, "population": 4}
    scores = {"level": "I", "silo_task": "I-01", "success": 1.0, "exact": 1.0, "partial": 1.0, "density": 0.5}
    episodes = pd.DataFrame(
        [
            {**common, **scores, "output_tokens": 300},  # hivebench: every round used
            {**common, **scores, "output_tokens": 300, "rounds_used": 3, "compat": "reference"},
        ]
    )
    table = pooled_table(settled(episodes), ["compat", "level"], 10, 0.95, 0)
    per_level = table[table["level"] == "I"].set_index("compat")["tokens_per_round"]
    assert per_level.to_dict() == {"hivebench": 300 / 10, "reference": 300 / 3}


def test_the_report_keeps_each_behaviour_apart_and_labels_the_papers_rows_reference(tmp_path):
    from hivebench.report import Section
    from hivebench.suites.silobench.report import render

    tasks = {
        "ours": {"kind": "silobench", "task": "I-01", "rounds": 4},
        "theirs": {"kind": "silobench", "task": "I-01", "rounds": 4, "compat": "reference"},
        "one": {"kind": "silobench", "task": "I-01", "oracle": True},
    }
    config = {
        "tasks": tasks,
        "methods": {"m": {"kind": "distributed"}},
        "studies": {"s": {"tasks": list(tasks), "methods": ["m"], "populations": [4], "seeds": 2}},
    }
    rows = []
    for block in all_blocks(validate(config, "x.yaml"), Path("x.yaml").parent)["s"]:
        group = list(block.cells())
        rows += [summary_row(c, digest(c), r.summary) for c, r in zip(group, play_block(group))]
    published = {"levels": {"provenance": "p", "rows": {"Paper": {"overall": [36.9]}}}}
    html = render(Section(pd.DataFrame(rows), tmp_path, "silobench/", 50, 0.95, 0, published, {}))
    table = pd.read_csv(tmp_path / "silobench.csv")
    played = table[(table["topology"] != "none") & (table["level"] == "all")].set_index("compat")
    assert sorted(played.index) == ["hivebench", "reference"] and (played["episodes"] == 2).all()
    assert (played["success"] == 1.0).all() and (played["rcc"] == 0.0).all()  # both matched to the oracle
    assert "<td>Paper (paper)</td>\n      <td>reference</td>" in html
