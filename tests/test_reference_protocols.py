"""The LLM agent's prompt protocols: `prompt_protocol: reference` (AgentsNet's and SwarmBench's own prompts,
memory and answer parsing, quirks behind `reference_quirks`) and the JSON protocol's `reasoning_chars`.

The scripted episodes reply in free text, reasoning first and the reference's answer marker last; what
each reply must parse to is written out by hand, as the reference's parser reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from test_scripted import lines, only_cell

from hivebench.agents.llm import estimate
from hivebench.agents.llm.agent import ReferenceChats
from hivebench.agents.llm.estimate import episode_estimate
from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play
from hivebench.models import ChatRequest, Sampling
from hivebench.models.decide import FALLBACK, REPAIRED, VALID
from hivebench.models.remote import OpenAIBackend
from hivebench.models.scripted import ScriptedBackend
from hivebench.registry import SUITE_OBJECTS
from hivebench.suite import load
from hivebench.suites.agentsnet.graphs import instance
from hivebench.suites.agentsnet.names import NAMES
from hivebench.suites.agentsnet.text import final_answer, json_messages
from hivebench.suites.swarmbench.text import marked_action, marked_message
from hivebench.suites.swarmbench.world import Worlds

AGENTSNET = {"kind": "agentsnet", "problem": "consensus", "family": "watts_strogatz", "rounds": 1}  # n = 4: K4
SWARMBENCH = {"kind": "swarmbench", "task": "synchronization", "rounds": 3}


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[ChatRequest]:
    """Every request the scripted backend answers, in order."""
    seen: list[ChatRequest] = []
    complete = ScriptedBackend.complete

    def recording(self, requests, on_result):
        seen.extend(requests)
        return complete(self, requests, on_result)

    monkeypatch.setattr(ScriptedBackend, "complete", recording)
    return seen


def scripted(tmp_path: Path, replies: list[Any], **options: Any) -> dict[str, Any]:
    return {"kind": "llm", "backend": "scripted", "model": lines(tmp_path / "replies.jsonl", replies), **options}


def test_an_agentsnet_episode_in_the_reference_protocol(tmp_path, monkeypatch, asked):
    monkeypatch.chdir(tmp_path)
    hannah, ryan, olivia, sarah = instance("watts_strogatz", 4, 0).names  # K4
    replies = [
        # round 1, agents 0..3: reasoning, then the messages as a JSON object
        f'I should share my value first.\n```json\n{{"{ryan}": "I pick 1"}}\n```',
        f'My plan {{tentative}}: agree on 1.\n{{"{hannah}": "1 please", "{olivia}": "1 please"}}',
        "I have nothing to say yet.",  # no JSON object: asked again
        f'{{"{hannah}": "line one\\nline two"}}',  # the reference turns \n into a line break: not JSON any more
        # the repairs of agents 2 and 3
        f'Sorry. {{"{sarah}": "hi", "Mary": "to no neighbour"}}',  # Mary is a name of the list: dropped
        "still nothing",
        # round 2, the answers
        "Everyone said 1.\n### Final Answer ###\n1",
        "At first I thought 0.\n### Final Answer ### 1 (agreed)",
        "The answer is 1.",  # no marker
        "### Final Answer ###\n**1**",  # not an option right after the marker, as the reference reads it
        "### Final Answer ### 1",
        "Let me restate.\n### Final Answer ###\n1",
    ]
    record = play(only_cell(tmp_path, AGENTSNET, scripted(tmp_path, replies, prompt_protocol="reference"), 4))
    sent = [(m["sender"], m["receiver"], m["text"]) for m in record.table("messages").to_pylist()]
    assert sent == [(0, 1, "I pick 1"), (1, 0, "1 please"), (1, 2, "1 please"), (2, 3, "hi")]
    assert record.agents["answer"].to_pylist()[-4:] == ["1"] * 4 and record.summary["score"] == 1.0
    assert (
        record.agents["decision"].to_pylist()[4:]
        == [VALID, VALID, REPAIRED, FALLBACK] + [VALID, VALID] + [REPAIRED] * 2
    )
    assert {k: record.summary[k] for k in ("llm_calls", VALID, REPAIRED, FALLBACK)} == {
        "llm_calls": 12,
        VALID: 4,
        REPAIRED: 3,
        FALLBACK: 1,
    }
    assert record.agents["notes"].to_pylist() == [""] * 12  # the reference keeps no notes
    # The reference's prompts: its system message per agent, its own first and last questions, its own
    # messages asking again; free text (no schema); every agent's whole chat kept, repairs included.
    assert all(request.schema is None for request in asked)
    system, first = asked[0].messages
    assert system["content"].startswith("You are an agent that is connected with other agents (your neighbors)")
    assert f"Your name is {hannah}." in system["content"] and f"({ryan}, {olivia}, {sarah})" in system["content"]
    assert first["content"].startswith("What are the first messages you want to send to your neighbors?")
    assert asked[4].messages[-1]["content"] == (
        "Your messages could not be parsed into JSON. Please check your response and try again."
    )
    last = asked[9].messages  # agent 3's answer round, after a failed repair
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in last[2:5]] == [replies[3], asked[5].messages[-1]["content"], "still nothing"]
    assert last[-1]["content"] == (
        f"Message passing has finished, here are the last messages you got from your neighbors:\n\n"
        f"Message from {olivia}:\n\nhi\n\n"
        f"The following neighbors did not send you a messages in this round: {hannah}, {ryan}\n\n"
        "\n\nElaborate your chain of thought step-by-step first, then answer the following: Please answer with the "
        "value you agreed on. Format your answer as follows: '### Final Answer ###', followed by your final "
        "answer. Don't use any text for your final answer except one of these valid options: 0, 1"
    )
    assert asked[10].messages[-1]["content"] == (
        "Your answer could not be parsed. Please check your answer and try again."
    )


def test_the_agentsnet_parsers_with_and_without_the_quirks():
    groups = [f"Group {k}" for k in range(1, 12)]
    reply = "Group 1 is taken.\n### Final Answer ###\nGroup 10"
    assert final_answer(reply, groups, quirks=True) == "Group 1"  # the options in order: a prefix wins
    assert final_answer(reply, groups, quirks=False) == "Group 10"
    assert final_answer("### Final Answer ### Yesterday", ["Yes", "No"], quirks=True) == "Yes"
    assert final_answer("### Final Answer ### Yesterday", ["Yes", "No"], quirks=False) is None
    assert final_answer("### Final Answer ### maybe\n### Final Answer ### No", ["Yes", "No"], quirks=True) == "No"
    escaped = 'Plan: {"Ryan": "one\\ntwo"}'
    assert json_messages(escaped, set(NAMES), quirks=True) is None
    assert json_messages(escaped, {"Ryan"}, quirks=False) == {"Ryan": "one\ntwo"}
    # from a `{` to the last `}` (quirks: the first such span that is an object of texts by name), or the
    # object that starts at a `{`
    assert json_messages('{"Ryan": "a"} then {"Mary": "b"}', set(NAMES), quirks=True) == {"Mary": "b"}
    assert json_messages('{"Ryan": "a"} then {"Mary": "b"}', set(NAMES), quirks=False) == {"Ryan": "a"}
    assert json_messages('{"Ryan": "a"}\nI hope {this} works.', set(NAMES), quirks=True) is None
    assert json_messages('{"Ryan": "a"}\nI hope {this} works.', {"Ryan"}, quirks=False) == {"Ryan": "a"}
    assert json_messages('{"Ryan": 1}', set(NAMES), quirks=True) is None
    assert json_messages('{"Mary": "b"}', {"Ryan"}, quirks=False) is None  # not a neighbour
    assert json_messages("{}", {"Ryan"}, quirks=True) == {}  # nothing to send is an answer


def test_the_json_protocol_on_agentsnet_without_a_message_cap():
    """`message_chars: null` (the reference's uncapped messages, `compat: reference`): no cap in the
    reply's schema or in the task statement."""
    from hivebench.suites.agentsnet.task import NetTask
    from hivebench.suites.agentsnet.text import NetView

    params = {"problem": "consensus", "family": "watts_strogatz", "rounds": 2, "instances": None}
    for cap, stated in ((None, ""), (50, " (at most 50 characters each)")):
        task = NetTask({**params, "message_chars": cap}, 4)
        task.reset([0])
        views = task.observe()
        text = NetView().reply_schema(views, 0)["messages"]["properties"]["Ryan"]
        assert text == ({"type": "string"} if cap is None else {"type": "string", "maxLength": 50})
        assert f"one message to each neighbour per round{stated}, or leave" in NetView().system(views, 0)


def test_a_swarmbench_episode_in_the_reference_protocol(tmp_path, monkeypatch, asked):
    monkeypatch.chdir(tmp_path)
    long = "x" * 130
    replies = [
        # round 1, agents 0 and 1: analysis, then ACTION: and MSG: lines
        "Analysis: the lights differ.\nDecision: switch.\nACTION: SWITCH\nMSG: switching now",
        f"I will stay, not move.\nACTION: STAY, not UP\nMSG: {long}",  # the first action of its list: UP
        # round 2
        "Let me think.\nAction: LEFT",  # another spelling of the marker; no message
        "No action in this reply.\nMSG: meet at the top",  # no action: STAY, the message still sent
        # round 3
        "ACTION: UP\nOn second thought...\naction: DOWN\nMsg: going down",  # the later spelling wins
        "I will go UPWARD.",  # no marker: STAY, as the reference takes it
    ]
    record = play(only_cell(tmp_path, SWARMBENCH, scripted(tmp_path, replies, prompt_protocol="reference"), 2))
    actions = record.agents["action"].to_pylist()
    assert actions[2:] == ["SWITCH", "UP", "LEFT", "STAY", "DOWN", "STAY"]
    # the reference never asks again (it counts nothing): every reply is a valid one
    assert record.agents["decision"].to_pylist()[2:] == [VALID] * 6
    assert {k: record.summary[k] for k in ("llm_calls", VALID, REPAIRED, FALLBACK)} == {
        "llm_calls": 6,
        VALID: 6,
        REPAIRED: 0,
        FALLBACK: 0,
    }
    sent = [(m["sender"], m["text"]) for m in record.table("messages").to_pylist()]
    assert [sender for sender, _ in sent] == [0, 1, 1, 0] and sent[2][1] == "meet at the top"
    # The reference's prompt, one user message a round (no earlier turns), with the last views and
    # actions: agent 1's third round shows its first two (the message cut to 120 characters and "...",
    # the action of a reply without one NONE).
    assert all(request.schema is None for request in asked)
    assert [len(request.messages) for request in asked] == [2] * 6
    system, prompt = asked[5].messages
    assert system["content"] == "You are a agent. You need to cooperate with other agents and finish a given task."
    text = prompt["content"]
    assert text.startswith("You are Agent Agent_1, operating in a multi-agent environment.") and "Round: 2\n" in text
    assert "Current Step:\n" in text and "1 Steps Before:\n" in text and "2 Steps Before:\n" in text
    assert "3 Steps Before" not in text and "light_on: " in text
    history = text.split("Your action history:\n")[1].split("\n\nSymbol legend:")[0]
    assert history == (
        f'Round 1: Action: UP, Message: "{"x" * 120}..."\nRound 2: Action: NONE, Message: "meet at the top"\n'
    )
    assert text.endswith(
        'End your response clearly with your chosen action: "ACTION: [YOUR_ACTION]" and/or '
        '"MSG: [Your message (no line breaks).]"\n'
    )


def test_without_the_quirks_a_swarmbench_reply_without_an_action_is_asked_again(tmp_path, monkeypatch, asked):
    monkeypatch.chdir(tmp_path)
    replies = [
        # round 1
        "ACTION: SWITCH\nMSG: hi",
        "No action in this reply.\nMSG: lost",  # invalid: asked again
        "ACTION: [DOWN]",  # its repair, without a message
        # round 2
        "ACTION: LEFT",
        "I will go UPWARD.",
        "still no marker",  # its repair fails: the agent stays silent
    ]
    method = scripted(tmp_path, replies, prompt_protocol="reference", reference_quirks=False)
    record = play(only_cell(tmp_path, {**SWARMBENCH, "rounds": 2}, method, 2))
    assert record.agents["action"].to_pylist()[2:] == ["SWITCH", "DOWN", "LEFT", "STAY"]
    assert record.agents["decision"].to_pylist()[2:] == [VALID, REPAIRED, VALID, FALLBACK]
    assert record.summary["llm_calls"] == 6
    assert [(m["sender"], m["text"]) for m in record.table("messages").to_pylist()] == [(0, "hi")]
    assert [len(request.messages) for request in asked] == [2, 2, 4, 2, 2, 4]  # repairs: +reply, +ask
    assert asked[2].messages[-1]["content"] == (
        "Your response could not be parsed: no ACTION: followed by one of UP, DOWN, LEFT, RIGHT, STAY, SWITCH. "
        'End your response clearly with your chosen action: "ACTION: [YOUR_ACTION]" and/or '
        '"MSG: [Your message (no line breaks).]"'
    )
    history = asked[4].messages[1]["content"].split("Your action history:\n")[1].split("\n\nSymbol legend:")[0]
    assert history == 'Round 1: Action: DOWN, Message: ""\n'


def test_a_swarmbench_episode_runs_on_after_every_agent_has_left_the_map(tmp_path, monkeypatch):
    """Transport: once every agent has left the map nobody is asked, but the episode runs to round T:
    the agent's columns still have a row per (state, agent)."""
    monkeypatch.chdir(tmp_path)

    def everyone_leaves(worlds: Worlds) -> np.ndarray:  # every agent left in the first round
        left = worlds.present.copy()
        worlds.present[:] = False
        return left

    monkeypatch.setattr(Worlds, "leave", everyone_leaves)
    task = {"kind": "swarmbench", "task": "transport", "rounds": 3}
    method = scripted(tmp_path, ["ACTION: DOWN", "ACTION: DOWN"], prompt_protocol="reference")
    record = play(only_cell(tmp_path, task, method, 2))
    table = pa.table(record.agents)  # as the episode is written: every column as long as the states
    assert table.num_rows == 4 * 2
    assert table["decision"].to_pylist() == [None, None, VALID, VALID, None, None, None, None]
    assert table["escaped"].to_pylist() == [False, False] + [True] * 6
    assert record.summary["llm_calls"] == 2


def test_the_swarmbench_parser_with_and_without_the_quirks():
    actions = ("UP", "DOWN", "LEFT", "RIGHT", "STAY")
    assert marked_action("ACTION: STAY, not UP", actions, quirks=True) == "UP"
    assert marked_action("ACTION: STAY, not UP", actions, quirks=False) == "STAY"
    assert marked_action("ACTION: UPWARD", actions, quirks=True) == "UP"
    assert marked_action("ACTION: UPWARD", actions, quirks=False) is None
    # the first ACTION: of the reply (quirks), or its last
    reply = "I could take ACTION: LEFT, but no.\nACTION: RIGHT"
    assert marked_action(reply, actions, quirks=True) == "LEFT"
    assert marked_action(reply, actions, quirks=False) == "RIGHT"
    assert marked_action("ACTION: jump\nAction: DOWN", actions, quirks=True) == "DOWN"
    assert marked_action("ACTION: LEFT MSG: go", actions, quirks=True) == "LEFT"
    assert marked_message("ACTION: LEFT MSG: go", quirks=True, cap=120) == "go"
    assert marked_message("MSG: first\nmsg: second", quirks=True, cap=120) == "second"
    assert marked_message("MSG: first\nMSG: second", quirks=True, cap=120) == "first"
    assert marked_message("MSG: first\nMSG: second", quirks=False, cap=120) == "second"
    assert marked_message("MSG: " + "y" * 10, quirks=True, cap=4) == "yyyy..."
    assert marked_message("ACTION: UP", quirks=True, cap=4) == ""


def test_the_json_protocol_may_let_the_model_reason_first(tmp_path, monkeypatch, asked):
    monkeypatch.chdir(tmp_path)
    replies = [
        {"reasoning": "Both neighbours are 0, so I take 1.", "color": 1, "notes": "a"},
        {"reasoning": "r" * 41, "color": 1, "notes": "b"},  # over reasoning_chars
        {"color": 0, "notes": "c"},  # no reasoning
        {"reasoning": "short", "color": 1, "notes": "b2"},
        {"reasoning": "", "color": 0, "notes": "c2"},
        *[{"reasoning": "Hold.", "color": 0, "notes": ""}] * 3,
    ]
    method = scripted(tmp_path, replies, reasoning_chars=40)
    record = play(only_cell(tmp_path, {"kind": "coloring", "steps": 2}, method, 3))
    assert record.agents["color"].tolist()[3:] == [1, 1, 0, 0, 0, 0]
    assert record.agents["decision"].to_pylist()[3:] == [VALID, REPAIRED, REPAIRED] + [VALID] * 3
    schema = asked[0].schema
    assert list(schema["properties"]) == ["reasoning", "color", "notes"]
    assert schema["properties"]["reasoning"] == {"type": "string", "maxLength": 40}
    assert (
        asked[0]
        .messages[0]["content"]
        .endswith(
            'Reply with only a JSON object: {"reasoning": "<reason step by step first: at most 40 characters>", '
            '"color": <an integer from 0 to 1>, "notes": "<at most 200 characters>"}'
        )
    )


def cell_params(tmp_path: Path, **options: Any) -> dict[str, Any]:
    (tmp_path / "replies.jsonl").write_text('"never asked"\n')  # a reply: an empty file is refused
    method = {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", **options}
    return only_cell(tmp_path, AGENTSNET, method, 4)["method"]["params"]


def test_the_options_leave_every_existing_cell_as_it_was(tmp_path):
    plain = cell_params(tmp_path)
    assert cell_params(tmp_path, prompt_protocol="json", reasoning_chars=0) == plain
    assert "prompt_protocol" not in plain and "reasoning_chars" not in plain
    assert cell_params(tmp_path, reasoning_chars=30) == {**plain, "reasoning_chars": 30}
    reference = cell_params(tmp_path, prompt_protocol="reference")
    assert reference == {
        **{k: v for k, v in plain.items() if k not in ("history", "notes_chars", "tagged_notes")},
        "prompt_protocol": "reference",
        "reference_quirks": True,
    }
    assert cell_params(tmp_path, prompt_protocol="reference", reference_quirks=False)["reference_quirks"] is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"prompt_protocol": "reference", "reasoning_chars": 100},
            "methods.m.reasoning_chars: only with prompt_protocol: json",
        ),
        ({"reference_quirks": False}, "methods.m.reference_quirks: only with prompt_protocol: reference"),
        (
            {"prompt_protocol": "reference", "tagged_notes": True},
            "methods.m.tagged_notes: prompt_protocol: reference keeps no notes",
        ),
        (
            {"prompt_protocol": "reference", "initial_notes": {"text": "hi"}},
            "methods.m.initial_notes: prompt_protocol: reference",
        ),
        ({"prompt_protocol": "reference", "history": 3}, "methods.m.history: prompt_protocol: reference keeps no"),
        (
            {"prompt_protocol": "reference", "notes_chars": 40},
            "methods.m.notes_chars: prompt_protocol: reference keeps no",
        ),
        ({"prompt_protocol": "tools"}, "methods.m.prompt_protocol"),
    ],
)
def test_settings_of_the_other_protocol_are_config_errors(tmp_path, options, message):
    (tmp_path / "replies.jsonl").write_text('"never asked"\n')  # a reply: an empty file is refused
    config = {
        "tasks": {"t": AGENTSNET},
        "methods": {"m": {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", **options}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    with pytest.raises(ConfigError, match=message):
        validate(config, str(tmp_path / "c.yaml"))


@pytest.mark.parametrize(
    "task",
    [{"kind": "coloring", "steps": 2}, {"kind": "silobench", "task": "I-01", "rounds": 2}],
    ids=["loopbench", "silobench"],
)
def test_a_suite_without_a_reference_protocol_is_a_config_error(tmp_path, monkeypatch, task):
    monkeypatch.chdir(tmp_path)
    method = scripted(tmp_path, [], prompt_protocol="reference")
    suite = "loopbench" if task["kind"] == "coloring" else "silobench"
    with pytest.raises(ConfigError, match=f"methods.m.prompt_protocol: suite {suite} has no reference prompt protocol"):
        only_cell(tmp_path, task, method, 4)
    with pytest.raises(ValueError, match="the llm method has no reference prompt protocol for this suite"):
        ReferenceChats(load(SUITE_OBJECTS[suite].text_view)(), {"reference_quirks": True, "max_tokens": 64})


def reference_block(tmp_path: Path, task: dict) -> dict[str, Any]:
    """The shared spec of a block of four agents of `task` under the scripted reference protocol."""
    (tmp_path / "replies.jsonl").write_text('"never asked"\n')  # a reply: an empty file is refused
    config = {
        "tasks": {"t": task},
        "methods": {
            "m": {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "prompt_protocol": "reference"}
        },
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    source = str(tmp_path / "c.yaml")
    return all_blocks(validate(config, source), Path(source).parent)["s"][0].shared


@pytest.mark.parametrize("task", [AGENTSNET, SWARMBENCH])
def test_the_estimate_renders_the_reference_prompts(tmp_path, task):
    shared = reference_block(tmp_path, task)
    chats: list[list[dict[str, str]]] = []
    calls, _, _ = episode_estimate(shared, lambda messages: chats.append(messages) or 0)
    assert calls == len(chats) == 4 * (2 if task is AGENTSNET else 3)
    if task is AGENTSNET:  # the chat grows by a reply as long as max_tokens allows
        assert len(chats[-1]) == 4 and len(chats[-1][2]["content"]) == 4 * 128
    else:
        assert all(len(chat) == 2 for chat in chats) and 'Round 2: Action: NONE, Message: ""' in chats[-1][1]["content"]


@pytest.mark.parametrize(("task", "grows"), [(AGENTSNET, True), (SWARMBENCH, False)], ids=["agentsnet", "swarmbench"])
def test_the_memory_estimate_keeps_kv_caches_only_for_a_chat_that_grows(tmp_path, monkeypatch, task, grows):
    """AgentsNet's reference chat grows (each agent's KV cache kept, a batch up to twice the longest
    prompt wide); SwarmBench's asks without earlier turns: no cache kept, a batch one prompt wide."""
    sized: list[tuple[int, int, bool]] = []
    monkeypatch.setattr(
        estimate, "memory_mb", lambda config, dtype, rows, tokens, keeps: sized.append((rows, tokens, keeps)) or 0
    )
    shared = reference_block(tmp_path, task)
    estimate.job_memory_mb(shared, seeds=2, longest=1000, config={})
    # 8 rows (2 seeds of 4 agents); 128 tokens of reply (max_tokens)
    assert sized == [(8, 2 * 1000 + 128, True) if grows else (8, 1000 + 128, False)]


def test_a_free_text_request_asks_a_server_for_no_response_format():
    backend = OpenAIBackend("m", "http://localhost:1/v1", None)
    request = ChatRequest(({"role": "user", "content": "hi"},), None, Sampling(), 1)
    assert "response_format" not in backend._arguments(request, "text")
    schema = {"type": "object"}
    assert (
        backend._arguments(ChatRequest(request.messages, schema, Sampling(), 1), "json_schema")["response_format"][
            "json_schema"
        ]["schema"]
        == schema
    )


def test_a_local_model_answers_a_free_text_request_unconstrained(tiny_model):
    from hivebench.models.local import TransformersBackend

    backend = TransformersBackend("tiny", str(tiny_model))
    free = ChatRequest(({"role": "user", "content": "go"},), None, Sampling(1.0, 1.0, 24), 5)
    schema = {
        "type": "object",
        "properties": {"color": {"enum": [0, 1]}},
        "required": ["color"],
        "additionalProperties": False,
    }
    constrained = ChatRequest(free.messages, schema, Sampling(1.0, 1.0, 24), 5)
    text, json_reply = backend.complete([free, constrained], lambda index, result: None)
    assert text.mode == "text" and text.usage.output_tokens > 0 and json_reply.mode == "constrained"
    assert "color" in json.loads(json_reply.text)


@pytest.mark.parametrize(
    ("task", "n"),
    [
        ({**AGENTSNET, "compat": "reference"}, 4),
        ({"kind": "swarmbench", "task": "pursuit", "rounds": 2, "compat": "reference"}, 2),
    ],
    ids=["agentsnet", "swarmbench"],
)
def test_smollm2_plays_each_suite_in_its_reference_protocol(smollm2, tmp_path, monkeypatch, task, n):
    """Free text from a local model, through each reference's parser, repairs and fallbacks included,
    on the reference's rules (135M parameters seldom reach the answer marker in 32 tokens: the
    pipeline is what is shown)."""
    monkeypatch.chdir(tmp_path)
    method = {
        "kind": "llm",
        "backend": "transformers",
        "model": str(smollm2),
        "prompt_protocol": "reference",
        "max_tokens": 32,
        "temperature": 0.7,
    }
    record = play(only_cell(tmp_path, task, method, n))
    decisions = record.agents["decision"].to_pylist()[n:]
    assert len(decisions) == 2 * n and set(decisions) <= {VALID, REPAIRED, FALLBACK}
    summary = record.summary
    assert summary["llm_calls"] == 2 * n + summary[REPAIRED] + summary[FALLBACK] and summary["output_tokens"] > 0
    replies = [json.loads(line)["result"] for line in next(Path(tmp_path).rglob("*.calls.jsonl")).open()]
    assert len(replies) == summary["llm_calls"] and all(reply["mode"] == "text" for reply in replies)


def test_smollm2_plays_silobench_on_the_reference_rules(smollm2, tmp_path, monkeypatch):
    """Silo-Bench has no reference prompts (its code is not public): on the reference's rules (early
    submission, the received data kept) the JSON protocol plays it, every agent answering by round R."""
    monkeypatch.chdir(tmp_path)
    task = {"kind": "silobench", "task": "I-01", "rounds": 2, "compat": "reference"}
    method = {"kind": "llm", "backend": "transformers", "model": str(smollm2), "max_tokens": 48, "temperature": 0.7}
    n = 3
    record = play(only_cell(tmp_path, task, method, n))
    submitted = [s for s in record.agents["submitted"].to_pylist() if s is not None]
    assert len(submitted) == n and all(0 <= s <= 2 for s in submitted)  # each agent answered once, by round R
    assert set(record.agents["decision"].to_pylist()[n:]) <= {VALID, REPAIRED, FALLBACK, None}
    assert 1 <= record.summary["rounds_used"] <= 2 and record.summary["compat"] == "reference"
