"""Methods that read text play a job block in lockstep too: one batch per round for every live agent
of every episode, each episode through its own cell's response cache, so each cell is what it is
played alone. Episodes that end early (AgentsNet rounds by the paper's rule) leave the batch."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.conformance import differences
from hivebench.engine.loop import play, play_block
from hivebench.models.decide import Decider
from hivebench.paths import calls_path

TASKS = {
    "loopbench": ({"kind": "coloring", "graph": "cycle", "steps": 3}, 5),
    # R by the paper's rule (2 * diameter + 1): graphs of different diameters, episodes of different lengths
    "agentsnet": ({"kind": "agentsnet", "problem": "consensus", "family": "barabasi_albert", "message_chars": 8}, 6),
    # the ASCII view, lights and messages
    "swarmbench": ({"kind": "swarmbench", "task": "synchronization", "rounds": 3, "message_chars": 12}, 4),
    # messages to named neighbours on the degree-three ports, then the answer
    "silobench": ({"kind": "silobench", "task": "II-18", "topology": "regular3", "rounds": 2, "message_chars": 12}, 4),
}


def block(tmp_path: Path, suite: str, method: dict[str, Any], seeds: int) -> list[dict[str, Any]]:
    task, population = TASKS[suite]
    config = {
        "tasks": {"t": task},
        "methods": {"m": {**method, "seeds_per_job": seeds}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": seeds}},
    }
    source = str(tmp_path / "config.yaml")
    (blocks,) = [all_blocks(validate(config, source), Path(source).parent)["s"]]
    assert len(blocks) == 1
    return list(blocks[0].cells())


@pytest.mark.parametrize("history", [2, "full"])
@pytest.mark.parametrize("suite", list(TASKS))
def test_an_llm_block_asks_each_cell_what_it_asks_alone(tiny_model, tmp_path, monkeypatch, suite, history):
    monkeypatch.chdir(tmp_path)
    method = {
        "kind": "llm",
        "backend": "transformers",
        "model": str(tiny_model),
        "notes_chars": 12,
        "max_tokens": 48,
        "history": history,
    }
    cells = block(tmp_path, suite, method, seeds=4)
    asked: list[int] = []
    complete = Decider.complete

    def counting(self, requests, episodes):
        asked.append(len(requests))
        return complete(self, requests, episodes)

    monkeypatch.setattr(Decider, "complete", counting)
    together = play_block(copy.deepcopy(cells))
    n = cells[0]["population"]
    rounds = [len(record.agents["step"]) // n - 1 for record in together]  # decision rounds of each episode
    decisions = [sum(r.summary[k] for k in ("valid", "repaired", "fallback")) for r in together]
    assert decisions == [n * r for r in rounds]
    if suite == "agentsnet":
        assert len(set(rounds)) > 1, "the seeds' graphs should give episodes of different lengths"
        # one batch per round (and one per round with repairs): an ended episode drops out of it
        assert asked[0] == 4 * n and asked[-1] < 4 * n

    def no_model(*args: Any) -> None:
        raise AssertionError("each cell alone must be answered from its own cache")

    monkeypatch.setattr("hivebench.models.local.load_model", no_model)
    for cell, record in zip(cells, together):
        assert Path(calls_path(cell)).is_file()
        assert differences(play(cell), record) == []


def test_a_scripted_block_answers_every_episode_from_the_top_of_its_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "replies.jsonl").write_text(
        "".join(json.dumps({"color": (i // 5) % 2, "notes": f"{i}"}) + "\n" for i in range(15))
    )
    cells = block(tmp_path, "loopbench", {"kind": "llm", "backend": "scripted", "model": "replies.jsonl"}, seeds=3)
    together = play_block(copy.deepcopy(cells))
    assert [differences(play(cell), record) for cell, record in zip(cells, together)] == [[]] * len(cells)
    assert together[0].agents["color"].tolist() == together[2].agents["color"].tolist() == [0] * 10 + [1] * 5 + [0] * 5


def test_a_replay_block_reads_each_episodes_agents_by_their_ids_within_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = [{"step": 0, "agent": 4, "reply": {"color": 1}}, {"step": 1, "agent": 0, "reply": {"color": 1}}]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(line) + "\n" for line in script))
    cells = block(tmp_path, "loopbench", {"kind": "replay", "file": "run.jsonl"}, seeds=3)
    together = play_block(copy.deepcopy(cells))
    assert [differences(play(cell), record) for cell, record in zip(cells, together)] == [[]] * len(cells)
    # states 1 and 2 (an agent without a line keeps its colour)
    assert [r.summary["replayed"] for r in together] == [2, 2, 2] and together[1].agents["color"].tolist()[5:15] == [
        0,
        0,
        0,
        0,
        1,
        1,
        0,
        0,
        0,
        1,
    ]
