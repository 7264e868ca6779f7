"""SwarmSys on Silo-Bench: the matching's equations, the organisation's loop with a backend that plays
each role by a fixed rule (posts reach only an event's participants, a validated answer travels as a
message, calls are counted apart from messages), config errors, and a real local model end to end."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from hivebench.agents.swarmsys.agent import SwarmSys
from hivebench.agents.swarmsys.matching import compatibility, embed, exploration, join_probability
from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import make_policy, make_task, play_block, run
from hivebench.models import ChatResult, Usage
from hivebench.models.cache import ResponseCache
from hivebench.models.decide import Decider
from hivebench.paths import calls_path

ANSWER = [7, 7]  # what the scripted validator terminates the whole task with


def study(method: dict[str, Any], task: dict[str, Any], n: int = 6, seeds: int = 1) -> dict[str, Any]:
    return {
        "tasks": {"t": task},
        "methods": {"m": {"kind": "swarmsys", **method}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [n], "seeds": seeds}},
    }


SILO = {"kind": "silobench", "task": "I-09", "rounds": 6}
SCRIPTED = {"backend": "scripted", "model": "unused.jsonl", "subevents": 1}


def cells_of(config: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / "unused.jsonl").write_text('"{}"\n')
    (block,) = all_blocks(validate(config, str(tmp_path / "config.yaml")), Path(str(tmp_path / "config.yaml")).parent)[
        "s"
    ]
    return list(block.cells())


# -- the matching ---------------------------------------------------------------------------------------


def test_compatibility_and_join_probability_follow_the_papers_equations():
    agents = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    events = np.array([[1.0, 0.0], [-1.0, 0.0]])
    # Eq. 6: (cos + 1) / 2; a zero vector's cosine is 0
    assert compatibility(agents, events).tolist() == [[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]]
    # Eq. 7 at S = 0.5, 0 and 1
    assert exploration(np.array([0.5, 0.0, 1.0])) == pytest.approx([0.15, 0.25, 0.05])
    # Eq. 10 at C = 1, eps = 0.15, gamma = 10: 0.15 * 1 + 0.85 / (1 + e^-5)
    p = join_probability(np.array([[1.0, 0.5]]), np.array([0.15]), 10.0)
    assert p[0, 0] == pytest.approx(0.15 + 0.85 / (1 + math.exp(-5)))
    assert p[0, 1] == pytest.approx(0.15 * 0.55 + 0.85 * 0.5)


def test_hashed_embedding_is_unit_length_and_shares_words():
    vectors = embed(["sum the numbers", "the sum of numbers", "sort names", ""], 256)
    assert np.linalg.norm(vectors[:3], axis=1) == pytest.approx([1.0, 1.0, 1.0])
    assert not vectors[3].any()
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


# -- the loop, with a backend that plays the roles by rule ---------------------------------------------


class RoleBackend:
    """Plays each role by rule: an explorer posts a plan and opens one sub-task; a worker posts its data
    (and asks to become `workers_want`); a validator accepts every agent listed in its messages,
    terminates a sub-task in its first iteration and the whole task in its second (in its first, with
    `empty_ending`, it terminates with no answer); an agent asked for its answer gives [0]."""

    name, model, cacheable = "roles", "roles", False

    def __init__(self, workers_want: str = "worker", empty_ending: bool = False) -> None:
        self.workers_want, self.empty_ending = workers_want, empty_ending
        self.asked: list[dict[str, Any]] = []  # every request's schema fields and user message

    def complete(self, requests, on_result):
        results = []
        for index, request in enumerate(requests):
            fields = request.schema["properties"]
            text = request.messages[1]["content"]
            self.asked.append({"fields": list(fields), "text": text, "system": request.messages[0]["content"]})
            profile = {
                "ability": "sums",
                "status": "busy",
                "role": self.workers_want if "post" in fields else "validator",
            }
            if "answer" in fields and "summary" not in fields:
                reply: dict[str, Any] = {"answer": [0]}
            elif "summary" in fields:
                senders = sorted(
                    {int(line.split()[2].rstrip(":")) for line in text.splitlines() if "from agent" in line}
                )
                whole = "answer" in fields
                second = "progress: none yet" not in text.lower()
                reply = {
                    "summary": "checked",
                    "accepted": senders,
                    "terminate": second or self.empty_ending or not whole,
                }
                if whole:
                    reply["answer"] = ANSWER if second else None
                reply |= profile
            elif "subevents" in fields:
                reply = {
                    "post": "plan: everyone sends",
                    "subevents": ["sum the first half"],
                    **profile,
                    "role": "explorer",
                }
            else:
                reply = {"post": text.splitlines()[1], **profile}
            results.append(ChatResult(json.dumps(reply), Usage(10, 5), mode="scripted"))
            on_result(index, results[-1])
        return results


def play_with(backend: Any, cells: list[dict[str, Any]]):
    class Scripted(SwarmSys):
        def __init__(self, params, rng, cache_paths):
            super().__init__(params, rng, cache_paths)
            self.decider = Decider(backend, [ResponseCache(path) for path in cache_paths])

    task = make_task(cells[0])
    task.reset([cell["seed"] for cell in cells])
    policy = make_policy(cells, target=Scripted)
    return run(task, policy), policy


def test_posts_reach_only_the_events_participants_and_the_answer_travels_as_a_message(tmp_path):
    backend = RoleBackend()
    records, policy = play_with(backend, cells_of(study(SCRIPTED, SILO), tmp_path))
    (record,) = records
    s = record.summary
    events = record.tables["events"].to_pylist()
    # one sub-task opened in the first iteration, closed in the second; the whole task terminated in the second
    assert s["events"] == 2 and s["events_closed"] == 2 and s["terminated"]
    assert [(e["round"], e["event"], e["open"]) for e in events] == [
        (2, "E0", True),
        (2, "E1", True),
        (5, "E0", False),
        (5, "E1", False),
    ]
    # every call is one request answered validly; calls and tokens are counted apart from the messages
    assert s["model_calls"] == len(backend.asked) == s["valid"]
    assert s["input_tokens"] == 10 * s["model_calls"] and s["model_tokens"] == 15 * s["model_calls"]
    rows = pa.table(record.agents).to_pylist()
    assert sum(r["calls"] for r in rows) == s["model_calls"]
    # every message went from one participant of an event to another, in that event's iteration, and
    # every post of a valid reply reached every other participant
    members = {(e["round"] // 3, e["event"]): set(e["participants"]) for e in events}
    messages = record.tables["messages"].to_pylist()
    assert messages and s["messages"] == len(messages)
    for m in messages:
        keys = [line.split("]")[0].lstrip("[") for line in m["text"].split("\n")]
        assert all({m["sender"], m["receiver"]} <= members[(m["step"] // 3, key)] for key in keys)
    e0 = members[(0, "E0")]
    assert len([m for m in messages if m["step"] == 0]) == len(e0) - 1  # the explorer's opening
    # an agent that heard the terminated answer gives it without a call; the others are asked once
    final = [r for r in rows if r["answer"] is not None]
    carried = [r for r in final if json.loads(r["answer"]) == ANSWER]
    assert len(carried) == s["answers_carried"] >= 2
    asked_last = sum(1 for a in backend.asked if a["fields"] == ["answer"])
    assert asked_last == 6 - s["answers_carried"]
    assert s["contributions"] >= s["accepted"] > 0


def test_an_episode_plays_the_same_alone_as_in_a_block_and_seeds_differ(tmp_path):
    cells = cells_of(study(SCRIPTED, SILO, n=8, seeds=2), tmp_path)
    together, _ = play_with(RoleBackend(), cells)
    alone, _ = play_with(RoleBackend(), cells[1:])
    for name in ("messages", "events"):
        assert together[1].tables[name].to_pylist() == alone[0].tables[name].to_pylist()
    assert together[1].summary == alone[0].summary
    assert together[0].tables["messages"].to_pylist() != together[1].tables["messages"].to_pylist()


def test_a_role_switch_keeps_a_holder_of_every_role(tmp_path):
    """Six agents: one explorer, one validator, four workers who all ask to validate in agent order;
    three may, the last worker may not (its role would have no holder left)."""
    (record,), policy = play_with(RoleBackend(workers_want="validator"), cells_of(study(SCRIPTED, SILO), tmp_path))
    assert record.summary["role_switches"] == 3
    assert [p.role for p in policy.profiles].count("worker") == 1
    events = record.tables["events"].to_pylist()
    assert all("worker" in e["roles"] for e in events if e["participants"])


def test_the_whole_task_ends_only_with_an_answer(tmp_path):
    """A validator that terminates the whole task with no answer has given a summary: E0 stays open,
    and the next iteration's validator ends it with the answer."""
    (record,), _ = play_with(RoleBackend(empty_ending=True), cells_of(study(SCRIPTED, SILO), tmp_path))
    e0 = [(e["round"], e["open"]) for e in record.tables["events"].to_pylist() if e["event"] == "E0"]
    assert e0 == [(2, True), (5, False)] and record.summary["terminated"]


def test_on_a_segmented_task_the_terminated_answer_is_not_carried(tmp_path):
    """II-11: each agent answers its own slice, so only the validator gives the answer it terminated
    with; the five others are asked."""
    backend = RoleBackend()
    (record,), _ = play_with(backend, cells_of(study(SCRIPTED, {**SILO, "task": "II-11"}), tmp_path))
    assert record.summary["terminated"] and record.summary["answers_carried"] == 1
    assert sum(1 for a in backend.asked if a["fields"] == ["answer"]) == 5


@pytest.mark.parametrize(
    ("task", "n", "error"),
    [
        ({**SILO, "topology": "regular3"}, 6, "topology: regular3: a swarmsys method routes its own messages"),
        ({**SILO, "protocol": "broadcast"}, 6, "protocol: broadcast, topology: complete: a swarmsys method"),
        (SILO, 2, "needs at least 3 agents"),
        ({"kind": "swarmbench", "task": "pursuit"}, 6, "runs silobench tasks only (not swarmbench)"),
    ],
)
def test_settings_it_cannot_run_are_config_errors(tmp_path, task, n, error):
    (tmp_path / "unused.jsonl").write_text('"{}"\n')
    with pytest.raises(ConfigError, match=re.escape(error)):
        source = str(tmp_path / "config.yaml")
        all_blocks(validate(study(SCRIPTED, task, n=n), source), Path(source).parent)


def test_smollm2_plays_every_role_of_a_small_cell_through_its_response_cache(smollm2, tmp_path, monkeypatch):
    """Offline, end to end: every reply constrained to its role's JSON Schema; calls and tokens are
    counted per row and per episode, and every call went through the cell's response cache."""
    monkeypatch.chdir(tmp_path)
    method = {"backend": "transformers", "model": str(smollm2), "max_tokens": 96, "post_chars": 48, "profile_chars": 16}
    cells = cells_of(study(method, {"kind": "silobench", "task": "I-01", "rounds": 3}, n=3), tmp_path)
    (record,) = play_block(cells)
    s = record.summary
    rows = pa.table(record.agents).to_pylist()
    assert s["model_calls"] == sum(r["calls"] for r in rows) >= 5  # an explorer, a worker, a validator, answers
    assert s["valid"] + 2 * (s["repaired"] + s["fallback"]) == s["model_calls"] and s["input_tokens"] > 0
    acted = [r for r in rows if r["calls"]]
    assert all((r["role"] is None) == (r["step"] == 4) for r in acted)  # round R's calls are answers
    cached = (tmp_path / calls_path(cells[0])).read_text().splitlines()
    assert len(cached) == s["model_calls"]
    assert s["messages"] == len(record.tables["messages"]) and s["messages"] > 0
    from hivebench.agents.swarmsys.estimate import cell_estimate

    calls, input_tokens, output_tokens = cell_estimate({k: v for k, v in cells[0].items() if k != "seed"}, 1).bound()
    assert s["model_calls"] <= calls and s["input_tokens"] <= input_tokens and s["output_tokens"] <= output_tokens


def test_the_estimate_counts_each_role_once_per_iteration_and_every_answer(tmp_path):
    """Three agents, one iteration, no sub-tasks: one explorer, one worker, one validator (each event
    has one of each and no agent holds two roles), then three answers."""
    from hivebench.agents.swarmsys.estimate import cell_estimate

    task = {"kind": "silobench", "task": "I-01", "rounds": 3}
    (cell,) = cells_of(study({**SCRIPTED, "subevents": 0}, task, n=3), tmp_path)
    shared = {k: v for k, v in cell.items() if k != "seed"}
    one = cell_estimate(shared, 1)
    assert (one.calls, one.output_tokens_max, one.approximate) == (6, 6 * 256, True)
    assert one.input_tokens > 6 * 100  # every prompt holds the task, the agent's data and its profile
