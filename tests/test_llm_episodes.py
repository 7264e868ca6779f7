"""LoopBench LLM episodes with the tiny local model: notes fed forward and recorded, the response
cache (replay, resume after a kill), repair and fallback, initial notes, estimates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from hivebench.agents.llm.agent import NOTES_RULE, Chats, decision_schema
from hivebench.agents.llm.estimate import episode_estimate
from hivebench.cells import study_blocks
from hivebench.config import validate
from hivebench.engine.writer import write_episode
from hivebench.estimate import estimate
from hivebench.models import ChatRequest, ChatResult, Sampling, Usage
from hivebench.models.cache import ResponseCache
from hivebench.models.decide import FALLBACK, REPAIRED, VALID, Decider
from hivebench.paths import calls_path, cell_path
from hivebench.suites.loopbench.task import ColoringTask
from hivebench.suites.loopbench.text import ColoringView, user_prompt


def llm_config(model: Path, steps: int = 4, populations: tuple[int, ...] = (3,), **method: Any) -> dict[str, Any]:
    return validate(
        {
            "tasks": {"cycle": {"kind": "coloring", "steps": steps}},
            "methods": {
                "tiny": {
                    "kind": "llm",
                    "backend": "transformers",
                    "model": str(model),
                    "notes_chars": 30,
                    "max_tokens": 64,
                    **method,
                }
            },
            "studies": {"s": {"tasks": ["cycle"], "methods": ["tiny"], "populations": list(populations), "seeds": 2}},
        },
        "test",
    )


def first_cell(config: dict[str, Any], base: Path = Path(".")) -> dict[str, Any]:
    return next(study_blocks(config, "s", base)[0].cells())


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_notes_are_fed_forward_and_recorded_at_every_step(tiny_model, in_tmp, monkeypatch):
    asked: list[ChatRequest] = []  # every round's requests, agent by agent, as the model gets them
    decide = Decider.decide

    def recording(self, requests, episodes):
        asked.extend(requests)
        return decide(self, requests, episodes)

    monkeypatch.setattr(Decider, "decide", recording)
    cell = first_cell(llm_config(tiny_model, steps=4))
    summary = write_episode(cell, cell_path(cell))
    table = pq.read_table(cell_path(cell)).to_pydict()
    assert len(table["notes"]) == 5 * 3 and table["notes"][:3] == ["", "", ""]
    assert table["decision"][:3] == [None] * 3 and set(table["decision"][3:]) == {VALID}
    assert summary["llm_calls"] == 12 and summary["valid"] == 12
    assert summary["input_tokens"] == sum(t for t in table["input_tokens"] if t is not None)
    # The recorded notes are the replies' notes.
    calls = [json.loads(line) for line in Path(calls_path(cell)).read_text().splitlines()]
    replies = {json.loads(c["result"]["text"])["notes"] for c in calls}
    assert set(table["notes"][3:]) <= replies
    # Each agent's notes after round t (table row t + 1) end its prompt for round t + 1; the reply's
    # format, notes of at most notes_chars included, ends the system message.
    assert len(asked) == 4 * 3
    reply = 'Reply with only a JSON object: {"color": <an integer from 0 to 1>, "notes": "<at most 30 characters>"}'
    for t in range(4):
        for v in range(3):
            notes = table["notes"][3 * t + v]
            messages = asked[3 * t + v].messages  # full history: the earlier rounds between these two
            system, prompt = messages[0]["content"], messages[-1]["content"]
            assert prompt.endswith(f"Your notes from last round: {notes or '(none yet)'}"), (t, v, notes, prompt)
            assert system.endswith(f"{NOTES_RULE}\n{reply}") and "Reply with" not in prompt
    assert any(table["notes"][3:9]), "some notes to carry forward"


def test_prompt_holds_own_and_neighbour_colours_history_and_notes():
    task = ColoringTask({"graph": "cycle", "colors": 2, "steps": 6, "init": "same", "metric_window": "from_initial"}, 5)
    task.reset([0])
    for colors in ([1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 0, 1, 0]):
        task.step(colors)
    views = task.observe()
    three = user_prompt(views, 1, 3)
    assert (
        "You are agent 1. Round 4 of 6." in three
        and "Now: you 1; agent 0: 0, agent 2: 0 (0 conflict with you)." in three
    )
    assert (
        "start: you 0, neighbours 0 0; after round 1: you 0, neighbours 1 0; after round 2: you 1, neighbours 1 0."
        in three
    )
    last = user_prompt(views, 1, 1)
    assert "Earlier (oldest first): after round 2: you 1, neighbours 1 0." in last and "start" not in last
    assert "Earlier" not in user_prompt(views, 1, 0)
    # the agent adds its notes (none yet: said so) and the notes field
    system, turn = Chats(ColoringView(), {"history": 3, "notes_chars": 40, "tagged_notes": False}).chat(
        views, 1, "[NEW] hold after a flip"
    )
    assert (
        turn["content"].startswith(three) and "Your notes from last round: [NEW] hold after a flip" in turn["content"]
    )
    reply = 'Reply with only a JSON object: {"color": <an integer from 0 to 1>, "notes": "<at most 40 characters>"}'
    assert system["content"].endswith(f"{NOTES_RULE}\n{reply}")
    _, fresh = Chats(ColoringView(), {"history": 3, "notes_chars": 40, "tagged_notes": False}).chat(views, 1, "")
    assert "Your notes from last round: (none yet)" in fresh["content"]


def test_in_a_block_an_agent_reads_its_own_episode_with_ids_within_it():
    task = ColoringTask({"graph": "cycle", "colors": 2, "steps": 6, "init": "same", "metric_window": "from_initial"}, 5)
    task.reset([0, 1])
    task.step([1, 0, 0, 0, 0] + [0, 0, 0, 1, 1])
    views, view = task.observe(), ColoringView()
    assert view.turn(views, 8, 3) == user_prompt(views, 8, 3)
    prompt = view.turn(views, 8, 3)  # agent 3 of the second episode
    assert (
        "You are agent 3." in prompt and "agent 2: 0, agent 4: 1" in prompt and "start: you 0, neighbours 0 0" in prompt
    )
    assert view.system(views, 8) == view.system(views, 0), "one task statement for every agent"


def test_full_history_is_a_chat_that_only_grows():
    """Each round's chat is the last round's chat, its reply and one new user message: what lets a
    local model keep an agent's KV cache from round to round."""
    task = ColoringTask({"graph": "cycle", "colors": 2, "steps": 3, "init": "same", "metric_window": "full"}, 3)
    task.reset([0])
    chats = Chats(ColoringView(), {"history": "full", "notes_chars": 10, "tagged_notes": False})
    previous = None
    for t in range(3):
        views = task.observe()
        chat = chats.chat(views, 1, f"note {t}")
        if previous is not None:
            assert chat[: len(previous)] == previous
            assert chat[len(previous)] == {"role": "assistant", "content": f"reply {t - 1}"}
            assert len(chat) == len(previous) + 2
        assert (
            chat[-1]["role"] == "user" and f"note {t}" in chat[-1]["content"] and "Earlier" not in chat[-1]["content"]
        )
        chats.replied(1, f"reply {t}")
        previous = chat
        task.step(views.colors)
    windowed = Chats(ColoringView(), {"history": 2, "notes_chars": 10, "tagged_notes": True})
    chat = windowed.chat(task.observe(), 1, "")
    assert (
        len(chat) == 2
        and "[NEW]" in chat[0]["content"]
        and "Earlier (oldest first): after round 1" in chat[1]["content"]
    )


def replayed_without_the_model(cell: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The cell's file, deleted and written again with the model out of reach (a replay must not call it)."""
    Path(cell_path(cell)).unlink()

    def no_model(*args):
        raise AssertionError("a replay must not reach the model")

    monkeypatch.setattr("hivebench.models.local.load_model", no_model)
    write_episode(cell, cell_path(cell))
    return Path(cell_path(cell)).read_bytes()


def test_replay_from_the_cache_is_byte_identical_and_calls_no_model(tiny_model, in_tmp, monkeypatch):
    cell = first_cell(llm_config(tiny_model))
    write_episode(cell, cell_path(cell))
    original = Path(cell_path(cell)).read_bytes()
    assert replayed_without_the_model(cell, monkeypatch) == original


def test_a_killed_episode_resumes_without_repeating_finished_calls(tiny_model, in_tmp, monkeypatch):
    cell = first_cell(llm_config(tiny_model, steps=4))
    write_episode(cell, cell_path(cell))
    done = pq.read_table(cell_path(cell)).drop(["latency_s"])
    lines = Path(calls_path(cell)).read_text().splitlines(keepends=True)
    # As if killed in round 3, mid-write: two rounds kept, and a torn line.
    Path(cell_path(cell)).unlink()
    Path(calls_path(cell)).write_text("".join(lines[:6]) + lines[6][:25])
    assert len(ResponseCache(calls_path(cell)).entries) == 6
    complete, made = Decider.complete, []

    def counting(self, requests, episodes):
        results = complete(self, requests, episodes)
        made.append(self.calls_made)
        return results

    monkeypatch.setattr(Decider, "complete", counting)
    write_episode(cell, cell_path(cell))
    assert made[-1] == 6, "only the 6 unfinished calls are made again"
    # Same replies as the uninterrupted run (each reply depends only on its request): same episode,
    # apart from the wall-clock latencies of the calls made again.
    assert pq.read_table(cell_path(cell)).drop(["latency_s"]).equals(done)
    assert len(ResponseCache(calls_path(cell)).entries) == 12  # the torn line skipped, the file readable


class Scripted:
    """A stand-in backend for the repair logic only: replies from a list, in order."""

    name, model = "scripted", "scripted"

    def __init__(self, replies: list[str]):
        self.replies = replies
        self.seen: list[ChatRequest] = []

    def complete(self, requests, on_result):
        results = []
        for i, request in enumerate(requests):
            self.seen.append(request)
            results.append(ChatResult(self.replies.pop(0), Usage(10, 5, 0.1, 0)))
            on_result(i, results[-1])
        return results


def test_an_invalid_reply_gets_one_repair_quoting_the_error_then_a_fallback(tmp_path):
    schema = decision_schema({"color": {"type": "integer", "minimum": 0, "maximum": 1}}, 20)
    request = ChatRequest(({"role": "user", "content": "go"},), schema, Sampling(), 1)
    backend = Scripted(['{"color": 3, "notes": ""}', "not json", '{"color": 1, "notes": "ok"}', "{}"])
    decider = Decider(backend, [ResponseCache(tmp_path / "calls.jsonl")])
    repaired, failed = decider.decide([request, ChatRequest(request.messages, schema, Sampling(), 2)], [0, 0])
    assert (repaired.status, repaired.value, repaired.calls) == (REPAIRED, {"color": 1, "notes": "ok"}, 2)
    assert repaired.usage == Usage(20, 10, 0.2, 0)
    assert (failed.status, failed.value) == (FALLBACK, None)
    repair_prompt = backend.seen[2].messages[-1]["content"]
    assert "color: 3 is greater than the maximum of 1" in repair_prompt
    assert "not valid JSON" in backend.seen[3].messages[-1]["content"]


def test_initial_notes_from_another_episode_final_notes(tiny_model, in_tmp):
    source = first_cell(llm_config(tiny_model, steps=3))
    write_episode(source, cell_path(source))
    final = pq.read_table(cell_path(source)).to_pydict()["notes"][-3:]
    config = llm_config(tiny_model, steps=2, populations=(5,), initial_notes={"episode": cell_path(source)})
    cell = first_cell(config, in_tmp)
    assert len(cell["method"]["params"]["initial_notes"]["sha256"]) == 64
    write_episode(cell, "distilled.parquet")
    start = pq.read_table("distilled.parquet").to_pydict()["notes"][:5]
    assert start == [final[v % 3] for v in range(5)]


def test_estimate_counts_calls_and_real_prompt_tokens(tiny_model, in_tmp):
    config = llm_config(tiny_model, steps=4, populations=(3, 5), history=2)
    rows = {r.population: r for r in estimate(study_blocks(config, "s", Path(".")))}
    assert rows[3].calls == 2 * 3 * 4 and rows[5].calls == 2 * 5 * 4 and rows[3].cells == 2
    assert rows[3].output_tokens_max == rows[3].calls * 64 and not rows[3].approximate
    cell = first_cell(config)
    used = write_episode(cell, cell_path(cell))["input_tokens"]
    # Estimated prompts carry plain-English notes of the full allowed length; the random model writes
    # full-length notes of odd characters, so the two land close but on either side.
    assert abs(rows[3].input_tokens / 2 - used) < 0.25 * used


def test_the_bound_holds_a_cell_whose_calls_are_repaired(tiny_model, in_tmp):
    """Replies cut at a cap too short for their notes fail their schema, so calls are repaired: the
    cell makes more calls and input tokens than the expected figure (every reply valid the first
    time), and no more than the bound (every call repaired, its refused reply and error at their
    longest)."""
    config = llm_config(tiny_model, steps=3, max_tokens=16)
    (row,) = estimate(study_blocks(config, "s", Path(".")))
    summary = write_episode(first_cell(config), cell_path(first_cell(config)))
    made = (summary["llm_calls"], summary["input_tokens"], summary["output_tokens"])
    assert summary["repaired"] + summary["fallback"] > summary["llm_calls"] / 4  # many second calls
    assert made[0] > row.calls / row.cells and made[1] > row.input_tokens / row.cells
    bound = (row.calls_bound, row.input_tokens_bound, row.output_tokens_bound)
    assert bound[0] == 2 * row.calls and all(m <= b / row.cells for m, b in zip(made, bound))


def test_the_bound_counts_every_send_a_remote_backend_may_make(in_tmp):
    """A server's backend resends a call up to `max_retries` times (429, 5xx, timeouts): the bound
    counts each send as billed; a local model resends nothing."""
    server = {"backend": "openai", "base_url": "http://localhost:1/v1", "max_retries": 3}
    (remote,) = estimate(study_blocks(llm_config(Path("m"), steps=3, **server), "s", Path(".")))
    assert remote.calls == 2 * 3 * 3 and remote.calls_bound == 2 * remote.calls * (1 + 3)
    assert remote.output_tokens_bound == 2 * remote.output_tokens_max * (1 + 3)
    assert remote.input_tokens_bound > 2 * remote.input_tokens * (1 + 3)  # each repair's chat holds its call's


def test_a_tear_inside_a_multibyte_character_leaves_the_cache_readable(tmp_path):
    cache = ResponseCache(tmp_path / "calls.jsonl")
    cache.put("a", ChatResult('{"color": 0, "notes": "ok"}'), "tiny:float32")
    cache.put("b", ChatResult('{"color": 1, "notes": "漢字のメモ"}'), "tiny:float32")
    data = (tmp_path / "calls.jsonl").read_bytes()
    cut = data.index("漢".encode()) + 1  # mid-character
    (tmp_path / "calls.jsonl").write_bytes(data[:cut])
    reopened = ResponseCache(tmp_path / "calls.jsonl")
    assert set(reopened.entries) == {"a"}
    reopened.put("c", ChatResult("{}"), "tiny:float32")
    assert set(ResponseCache(tmp_path / "calls.jsonl").entries) == {"a", "c"}


def test_estimate_keeps_tasks_apart(tiny_model, in_tmp):
    config = llm_config(tiny_model, steps=4)
    config["tasks"]["long"] = {**config["tasks"]["cycle"], "steps": 8}
    config["studies"]["s"]["tasks"] = ["cycle", "long"]
    rows = {(r.task, r.population): r for r in estimate(study_blocks(config, "s", Path(".")))}
    assert rows[("cycle", 3)].calls == 2 * 3 * 4 and rows[("long", 3)].calls == 2 * 3 * 8
    assert rows[("long", 3)].input_tokens > 2 * rows[("cycle", 3)].input_tokens  # longer histories too


def test_backoff_waits_at_least_what_the_server_asks():
    import random

    from hivebench.models.remote import RetryPolicy

    policy = RetryPolicy(base_s=0.5, cap_s=60)
    rng = random.Random(0)
    assert all(policy.delay(0, rng, 7.5) >= 7.5 for _ in range(20))
    assert all(0 <= policy.delay(3, rng, None) <= 4 for _ in range(20))
    assert policy.delay(0, rng, 600) == 60  # capped


def test_the_same_agent_plays_agentsnet_with_a_local_model_under_its_schemas(tiny_model, in_tmp):
    """A random two-layer model, constrained to AgentsNet's per-agent schemas (messages only to its
    own neighbours, at most message_chars each; then one of its own answers): every decision valid,
    every message to a neighbour within the cap, every answer one of the agent's options."""
    config = validate(
        {
            "tasks": {
                "t": {
                    "kind": "agentsnet",
                    "problem": "matching",
                    "family": "delaunay",
                    "rounds": 2,
                    "message_chars": 12,
                }
            },
            "methods": {
                "tiny": {
                    "kind": "llm",
                    "backend": "transformers",
                    "model": str(tiny_model),
                    "notes_chars": 10,
                    "max_tokens": 96,
                }
            },
            "studies": {"s": {"tasks": ["t"], "methods": ["tiny"], "populations": [4], "seeds": 1}},
        },
        "test",
    )
    cell = first_cell(config)
    summary = write_episode(cell, cell_path(cell))
    assert summary["llm_calls"] == summary["valid"] == 4 * 3  # R + 1 = 3 decisions per agent
    messages = pq.read_table(cell_path(cell).replace(".parquet", ".messages.parquet")).to_pylist()
    agents = pq.read_table(cell_path(cell)).to_pydict()
    from hivebench.suites.agentsnet.graphs import instance

    graph = instance("delaunay", 4, cell["seed"])
    assert messages, "the agents sent no message"
    assert all(m["size"] <= 12 and m["receiver"] in graph.neighbours(m["sender"]) for m in messages)
    answers = agents["answer"][-4:]
    assert all(a in [graph.names[u] for u in graph.neighbours(v)] + ["None"] for v, a in enumerate(answers))
    assert summary["messages"] == len(messages) and summary["valid_answers"] == 4


def test_estimate_asks_the_agent_for_an_agentsnet_episode(tiny_model, in_tmp):
    config = validate(
        {
            "tasks": {"t": {"kind": "agentsnet", "problem": "consensus", "family": "watts_strogatz", "rounds": 3}},
            "methods": {"tiny": {"kind": "llm", "backend": "transformers", "model": str(tiny_model)}},
            "studies": {"s": {"tasks": ["t"], "methods": ["tiny"], "populations": [4, 8], "seeds": 3}},
        },
        "test",
    )
    rows = estimate(study_blocks(config, "s", Path(".")))
    assert [(r.population, r.cells, r.calls) for r in rows] == [(4, 3, 3 * 4 * 4), (8, 3, 3 * 8 * 4)]
    assert all(
        r.input_tokens > r.calls * 100 and not r.approximate for r in rows
    )  # real prompts, the model's tokenizer


def test_a_reply_with_a_lone_surrogate_is_invalid_not_a_crash_when_stored():
    from hivebench.models.decide import check

    value, error = check('{"notes": "\\ud800"}', {"type": "object"})
    assert value is None and "lone surrogate" in error
    assert check('{"notes": "\\ud83d\\ude00"}', {"type": "object"}) == ({"notes": "\U0001f600"}, None)  # a pair is text


def test_the_reply_format_closes_the_system_message_and_a_round_that_changes_it_restates_it(tmp_path):
    """AgentsNet's rounds ask for messages and its last round for an answer: the system message gives
    the first, the answer round's message the second."""
    (tmp_path / "replies.jsonl").write_text('"never asked"\n')  # a reply: an empty file is refused
    task = {"kind": "agentsnet", "problem": "consensus", "family": "watts_strogatz", "rounds": 2}
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "notes_chars": 20}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    shared = study_blocks(validate(config, str(tmp_path / "c.yaml")), "s", tmp_path)[0].shared
    chats: list[list[dict[str, str]]] = []
    episode_estimate(shared, lambda messages: chats.append(messages) or 0)
    assert len(chats) == 3 * 4  # rounds 0, 1 and the answer round, 4 agents
    messages = '{"messages": {"<neighbour name>": "<message>", ...}, "notes": "<at most 20 characters>"}'
    for number, chat in enumerate(chats):
        system, turn = chat[0], chat[-1]  # full history: the earlier rounds between them
        assert system["content"].endswith(f"Reply with only a JSON object: {messages}")
        answering = number >= 8
        assert ('Reply with only a JSON object: {"answer": <one of' in turn["content"]) == answering
        assert turn["content"].count("Reply with") == int(answering)
