"""The transformers backend with constrained decoding: a tiny random model and SmolLM2, no network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from hivebench.agents.llm.agent import decision_schema
from hivebench.models import ChatRequest, Sampling
from hivebench.models.decide import check
from hivebench.models.local import TransformersBackend, end_tokens

SCHEMA = decision_schema({"color": {"type": "integer", "minimum": 0, "maximum": 1}}, notes_chars=40)


SAMPLING = Sampling(temperature=1.0, top_p=1.0, max_tokens=64)


def requests(n: int, sampling: Sampling = SAMPLING) -> list[ChatRequest]:
    return [
        ChatRequest(
            (
                {"role": "system", "content": f"You are agent {v} of {n} on a cycle; pick colour 0 or 1."},
                {"role": "user", "content": f"Your colour: 0. Neighbours: 0, 0. Notes: none. Step {v}."},
            ),
            SCHEMA,
            sampling,
            1000 + v,
        )
        for v in range(n)
    ]


def test_tiny_model_batched_sampled_replies_are_all_schema_valid(tiny_model: Path) -> None:
    backend = TransformersBackend("tiny", str(tiny_model))
    seen: list[int] = []
    results = backend.complete(requests(11), lambda i, r: seen.append(i))
    assert sorted(seen) == list(range(11))
    for result in results:
        value, error = check(result.text, SCHEMA)
        assert error is None, result.text
        assert value["color"] in (0, 1) and len(value["notes"]) <= 40
        assert result.usage.input_tokens > 0 and 0 < result.usage.output_tokens <= 64
        assert result.mode == "constrained"
    # A random model under sampling: the notes differ across agents.
    assert len({r.text for r in results}) > 1


def test_a_reply_does_not_depend_on_its_batch(tiny_model: Path) -> None:
    """Each request has its own sampler, seeded by its sample index: what a batch may change is only
    floating-point rounding (docs/llm-agents.md's promise), so in float64, where rounding is far too small to
    move a sampled token, the replies batched are those alone."""
    backend = TransformersBackend("tiny", str(tiny_model), dtype="float64")
    batch = [r.text for r in backend.complete(requests(6), lambda i, r: None)]
    alone = [backend.complete([r], lambda i, x: None)[0].text for r in requests(6)]
    assert batch == alone


def test_greedy_decoding_is_deterministic_and_a_tiny_top_p_is_greedy(tiny_model: Path) -> None:
    backend = TransformersBackend("tiny", str(tiny_model))
    greedy = requests(3, Sampling(temperature=0.0, top_p=1.0, max_tokens=64))
    first = [r.text for r in backend.complete(greedy, lambda i, r: None)]
    assert first == [r.text for r in backend.complete(greedy, lambda i, r: None)]
    # The nucleus of a vanishing top_p is the single likeliest allowed token, whatever the temperature.
    narrow = requests(3, Sampling(temperature=1.0, top_p=1e-9, max_tokens=64))
    assert [r.text for r in backend.complete(narrow, lambda i, r: None)] == first
    sampled = requests(3, Sampling(temperature=1.0, top_p=1.0, max_tokens=64))
    assert [r.text for r in backend.complete(sampled, lambda i, r: None)] != first


def test_smollm2_gives_schema_valid_decisions_batched_and_sampled(smollm2: Path) -> None:
    backend = TransformersBackend("SmolLM2-135M-Instruct", str(smollm2))
    results = backend.complete(requests(5), lambda i, r: None)
    values = [check(r.text, SCHEMA) for r in results]
    assert all(error is None for _, error in values), [r.text for r in results]
    assert np.all([v["color"] in (0, 1) for v, _ in values])


def test_reused_kv_caches_give_the_replies_of_whole_prompts(tiny_model: Path) -> None:
    """A shared system message pre-filled once, and with full history each agent's last chat and reply
    kept from round to round: greedy replies are those of every prompt pre-filled whole, alone."""
    greedy = Sampling(temperature=0.0, top_p=1.0, max_tokens=48)
    system = {"role": "system", "content": "Agents on a cycle pick colour 0 or 1 each round; keep notes."}
    chats = [(system, {"role": "user", "content": f"You are agent {v}. Round 1. Neighbours: 0, 0."}) for v in range(5)]
    # float64: a reused cache changes only the rounding (shapes of the products), too little to move a token
    reusing = TransformersBackend("tiny", str(tiny_model), dtype="float64")
    whole = TransformersBackend("tiny", str(tiny_model), dtype="float64", reuse=False)
    for round_ in range(3):
        asked = [ChatRequest(chat, SCHEMA, greedy, v, keep_state=True) for v, chat in enumerate(chats)]
        replies = [r.text for r in reusing.complete(asked, lambda i, r: None)]
        assert replies == [whole.complete([r], lambda i, x: None)[0].text for r in asked]
        chats = [
            (
                *chat,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"Round {round_ + 2}. Neighbours: 1, {v % 2}."},
            )
            for v, (chat, reply) in enumerate(zip(chats, replies))
        ]
    prompt_tokens = reusing.prefilled["reused"] + reusing.prefilled["computed"]
    assert whole.prefilled["reused"] == 0 and reusing.prefilled["reused"] > prompt_tokens / 2


def test_the_end_tokens_are_the_generation_configs_and_the_tokenizers():
    tokenizer = SimpleNamespace(eos_token_id=2)
    for configured, ends in ((7, {2, 7}), ([7, 9, 2], {2, 7, 9}), (None, {2})):
        model = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=configured))
        assert end_tokens(model, tokenizer) == ends


def test_a_free_text_reply_ends_at_any_end_token_of_the_generation_config(tiny_model: Path, tmp_path: Path) -> None:
    """A chat model's end of turn may be another token than its tokenizer's end of text: the generation
    config names them all. Here it names every token but the tokenizer's own, so a free-text reply ends
    at its first token, which its text leaves out; a JSON reply still ends where its grammar does."""
    folder = Path(shutil.copytree(tiny_model, tmp_path / "tiny"))
    generation = json.loads((folder / "generation_config.json").read_text())
    vocab = json.loads((folder / "config.json").read_text())["vocab_size"]
    generation["eos_token_id"] = [t for t in range(vocab) if t != generation["eos_token_id"]]
    (folder / "generation_config.json").write_text(json.dumps(generation))
    backend = TransformersBackend("tiny", str(folder))
    messages = ({"role": "user", "content": "go"},)
    free, constrained = (ChatRequest(messages, schema, SAMPLING, 5) for schema in (None, SCHEMA))
    text, json_reply = backend.complete([free, constrained], lambda i, r: None)
    assert (text.text, text.usage.output_tokens, text.mode) == ("", 1, "text")
    assert check(json_reply.text, SCHEMA)[1] is None and json_reply.usage.output_tokens > 1
