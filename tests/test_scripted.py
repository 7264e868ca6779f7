"""The scripted backend (replies from a file, in request order) and the replay method (replies by
step and agent), from config, on both suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play
from hivebench.models import BackendError
from hivebench.paths import cell_path


def only_cell(tmp_path: Path, task: dict, method: dict, population: int) -> dict:
    config = {
        "tasks": {"t": task},
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": 1}},
    }
    source = str(tmp_path / "config.yaml")
    return next(all_blocks(validate(config, source), Path(source).parent)["s"][0].cells())


def lines(path: Path, values: list) -> str:
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path.name


def test_a_scripted_loopbench_episode_follows_its_script_and_repairs_from_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # C3, 2 rounds: 3 requests a round; round 1's second reply is invalid, its repair is the next line
    script = [
        {"color": 1, "notes": "a"},
        {"color": 7, "notes": "b"},
        {"color": 0, "notes": "c"},
        {"color": 1, "notes": "b2"},
        {"color": 0, "notes": "d"},
        {"color": 0, "notes": "e"},
        "not json at all",
        "still not json",
    ]
    method = {"kind": "llm", "backend": "scripted", "model": lines(tmp_path / "replies.jsonl", script)}
    cell = only_cell(tmp_path, {"kind": "coloring", "steps": 2}, method, 3)
    assert cell["method"]["params"]["model"] == "replies.jsonl" and len(cell["method"]["params"]["model_sha256"]) == 64
    record = play(cell)
    colors = record.agents["color"].tolist()
    assert colors == [
        0,
        0,
        0,
        1,
        1,
        0,
        0,
        0,
        0,
    ]  # state 0, then rounds 1 and 2 (the third agent's round-2 reply is bad twice)
    assert record.summary["repaired"] == 1 and record.summary["fallback"] == 1 and record.summary["llm_calls"] == 8
    assert record.agents["notes"].to_pylist()[3:6] == ["a", "b2", "c"]
    assert not Path(cell_path(cell)).with_suffix("").with_suffix(".calls.jsonl").exists()  # no cache


def test_a_scripted_agentsnet_episode_sends_its_messages_and_answers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = {"kind": "agentsnet", "problem": "consensus", "family": "watts_strogatz", "rounds": 1}  # n = 4: K4
    names = play(only_cell(tmp_path, task, {"kind": "distributed"}, 4)).agents["name"].to_pylist()[:4]
    round0 = [{"messages": {names[(v + 1) % 4]: f"hi from {names[v]}"}, "notes": ""} for v in range(4)]
    answers = [{"answer": "1", "notes": "agreed"}] * 4
    lines(tmp_path / "replies.jsonl", round0 + answers)
    record = play(only_cell(tmp_path, task, {"kind": "llm", "backend": "scripted", "model": "replies.jsonl"}, 4))
    messages = record.table("messages").to_pylist()
    assert [(m["sender"], m["receiver"], m["text"]) for m in messages] == [
        (v, (v + 1) % 4, f"hi from {names[v]}") for v in range(4)
    ]
    assert record.summary["score"] == 1.0 and record.summary["valid"] == 8


def test_a_script_that_runs_out_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    method = {
        "kind": "llm",
        "backend": "scripted",
        "model": lines(tmp_path / "short.jsonl", [{"color": 1, "notes": ""}]),
    }
    with pytest.raises(BackendError, match="short.jsonl: 1 scripted replies, and request 2 needs one more"):
        play(only_cell(tmp_path, {"kind": "coloring", "steps": 2}, method, 3))


def test_replay_takes_each_agents_reply_by_step_and_counts_what_it_cannot_use(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = [
        {"step": 0, "agent": 0, "reply": {"color": 1}},
        {"step": 0, "agent": 1, "reply": {"color": 5}},
        {"step": 1, "agent": 2, "reply": {"color": 1, "notes": "late"}},
    ]
    cell = only_cell(
        tmp_path, {"kind": "coloring", "steps": 2}, {"kind": "replay", "file": lines(tmp_path / "run.jsonl", script)}, 3
    )
    record = play(cell)
    assert record.agents["color"].tolist() == [0, 0, 0, 1, 0, 0, 1, 0, 1]  # agent 1's colour 5 is invalid: it keeps 0
    assert {k: record.summary[k] for k in ("replayed", "missing", "invalid")} == {
        "replayed": 2,
        "missing": 3,
        "invalid": 1,
    }


def test_missing_files_are_config_errors(tmp_path):
    for method, key in (
        ({"kind": "replay", "file": "none.jsonl"}, "methods.m.file"),
        ({"kind": "llm", "backend": "scripted", "model": "none.jsonl"}, "methods.m.model"),
    ):
        config = {
            "tasks": {"t": {"kind": "coloring"}},
            "methods": {"m": method},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [3], "seeds": 1}},
        }
        with pytest.raises(ConfigError, match=f"{key}: no such file"):
            validate(config, str(tmp_path / "c.yaml"))
