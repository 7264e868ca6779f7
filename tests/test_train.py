"""Decision distillation with the tiny random model (tests/tiny_model.py): what the loss covers, that
it falls, that a seed fixes it, that an adapter round-trips, that a resumed training is the
uninterrupted one, and that vLLM serves an adapter as peft computes it. The decisions are the
scripted controller's records on its own views of a small Pursuit and Silo-Bench III-26 cell."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import require_vllm

from hivebench.agents.scripted_controller.rule import record_for
from hivebench.agents.waggle.prompt import messages, record_schema
from hivebench.cells import all_blocks
from hivebench.config import filled_method, validate
from hivebench.engine.loop import play_block
from hivebench.ids import canonical_json
from hivebench.models.adapter import ADAPTER, lora_module, trained_folder
from hivebench.train.distill import Settings, answer_loss, latest_checkpoint, load_student, train
from hivebench.train.examples import IGNORED, Example, encode
from hivebench.train.schedule import schedule

SMALL = Settings(
    rank=4, alpha=8, dropout=0.1, learning_rate=1e-2, batch=4, micro_batch=2, updates=6, checkpoint_every=3
)


def scripted_views() -> list[list[dict[str, Any]]]:
    """The `views` rows of the scripted controller on a small Pursuit and a III-26 cell, per cell."""
    config = {
        "tasks": {
            "pursuit": {"kind": "swarmbench", "task": "pursuit", "rounds": 3},
            "silo": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 3},
        },
        "methods": {"rule": {"kind": "scripted_controller", "keep_views": True}},
        "studies": {"s": {"tasks": ["pursuit", "silo"], "methods": ["rule"], "populations": [4], "seeds": 1}},
    }
    blocks = all_blocks(validate(config, "train.yaml"), Path("."))["s"]
    return [record.table("views").to_pylist() for block in blocks for record in play_block(list(block.cells()))]


@pytest.fixture(scope="module")
def decisions() -> list[tuple[dict[str, Any], list[str], dict[str, Any]]]:
    """(view, action names, the scripted controller's record) for a Pursuit and a III-26 cell."""
    out = []
    for rows in scripted_views():
        for row in rows:
            view = json.loads(row["view"])
            out.append((view, json.loads(row["actions"]), record_for(view)))
    return out


@pytest.fixture(scope="module")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture(scope="module")
def examples(decisions: list, tokenizer: Any) -> list[Example]:
    return [encode(tokenizer, view, actions, record) for view, actions, record in decisions]


def run(tiny_model: Path, tokenizer: Any, examples: list[Example], out: Path, settings: Settings = SMALL) -> dict:
    return train(tiny_model, tokenizer.pad_token_id, examples[:8], examples[8:12], settings, out)


def test_an_example_is_the_deployed_prompt_then_the_record_as_the_decoder_writes_it_and_its_end(decisions, tokenizer):
    """The answer is the teacher's record, token by token one the deployed schema-constrained decoder
    (llguidance on the record schema, as models/local.py asks it) lets through, and then its end."""
    from llguidance import LLMatcher
    from llguidance.hf import from_tokenizer

    view, actions, record = next(d for d in decisions if d[2]["deposits"])  # a record with a trace
    example = encode(tokenizer, view, actions, record)
    deployed = tokenizer.apply_chat_template(list(messages(view, actions)), add_generation_prompt=True, tokenize=False)
    assert example.tokens[: example.prompt] == tokenizer(deployed, add_special_tokens=False)["input_ids"]
    answer = example.tokens[example.prompt :]
    assert answer[-1] == tokenizer.eos_token_id and json.loads(tokenizer.decode(answer[:-1])) == record
    grammar = LLMatcher.grammar_from_json_schema(record_schema(actions), defaults={"whitespace_flexible": False})
    matcher = LLMatcher(from_tokenizer(tokenizer, n_vocab=len(tokenizer)), grammar)
    assert all(matcher.consume_token(token) for token in answer[:-1]), matcher.get_error()
    assert matcher.is_accepting()
    # sorted keys (canonical JSON) are a record the decoder never writes: refused at its first key
    refused = LLMatcher(from_tokenizer(tokenizer, n_vocab=len(tokenizer)), grammar)
    assert not all(
        refused.consume_token(t) for t in tokenizer(canonical_json(record), add_special_tokens=False)["input_ids"]
    )
    assert example.labels == [IGNORED] * example.prompt + answer


def test_the_masked_loss_covers_exactly_the_answers_tokens(tiny_model, tokenizer):
    """A hand-made example of five tokens, the last two the answer: the loss is the cross-entropy of
    predicting token 3 from position 2 and token 4 from position 3, nothing else."""
    import torch

    tokens = tokenizer("agent hold switch keep wait", add_special_tokens=False)["input_ids"][:5]
    assert len(tokens) == 5
    example = Example(tokens, prompt=3)
    model = load_student(tiny_model, SMALL).eval()
    with torch.no_grad():
        total, count = answer_loss(model, [example], tokenizer.pad_token_id, "cpu")
        logits = model(input_ids=torch.tensor([tokens])).logits[0].float()
    by_hand = -(torch.log_softmax(logits[2], -1)[tokens[3]] + torch.log_softmax(logits[3], -1)[tokens[4]])
    assert count == 2 and float(total) == pytest.approx(float(by_hand), rel=1e-6)
    # padding beside a longer example changes nothing of it
    longer = Example(tokens + tokens, prompt=7)
    with torch.no_grad():
        both, both_count = answer_loss(model, [example, longer], tokenizer.pad_token_id, "cpu")
        alone, _ = answer_loss(model, [longer], tokenizer.pad_token_id, "cpu")
    assert both_count == 5 and float(both) == pytest.approx(float(total + alone), rel=1e-5)


def test_the_loss_falls_on_a_fixed_batch(tiny_model, tokenizer, examples, tmp_path):
    settings = replace(SMALL, rank=16, alpha=32, learning_rate=5e-3, micro_batch=4, updates=8, checkpoint_every=8)
    manifest = train(tiny_model, tokenizer.pad_token_id, examples[:4], examples[:4], settings, tmp_path)
    losses = [loss for _, loss in manifest["history"]["train"]]
    assert losses[-1] < losses[0] - 0.3  # nats per answer token (a random two-layer model: about 5.8 to 5.3)
    assert manifest["validation_loss"] < losses[0] - 0.3  # the same batch, measured without dropout


def test_two_trainings_with_one_seed_give_the_same_losses_and_another_seed_others(
    tiny_model, tokenizer, examples, tmp_path
):
    first = run(tiny_model, tokenizer, examples, tmp_path / "a")["history"]
    again = run(tiny_model, tokenizer, examples, tmp_path / "b")["history"]
    for (u1, l1), (u2, l2) in zip(first["train"] + first["validation"], again["train"] + again["validation"]):
        assert u1 == u2 and l1 == pytest.approx(l2, abs=1e-6)
    other = run(tiny_model, tokenizer, examples, tmp_path / "c", replace(SMALL, seed=1))["history"]
    assert [loss for _, loss in other["train"]] != pytest.approx([loss for _, loss in first["train"]], abs=1e-6)


def test_a_saved_adapter_loads_with_the_same_logits(tiny_model, tokenizer, examples, tmp_path):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    manifest = run(tiny_model, tokenizer, examples, tmp_path)
    ids = torch.tensor([examples[0].tokens])
    trained = load_student(tiny_model, SMALL)
    state = torch.load(tmp_path / "checkpoints" / f"update-{manifest['selected_update']:06d}" / "state.pt")
    trained.load_state_dict(state["weights"], strict=False)
    loaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model), tmp_path / "adapter")
    untrained = AutoModelForCausalLM.from_pretrained(tiny_model)
    with torch.no_grad():
        ours, theirs, base = (m.eval()(input_ids=ids).logits for m in (trained, loaded, untrained))
    assert torch.equal(ours, theirs) and not torch.allclose(ours, base)
    assert manifest["validation_loss"] == min(loss for _, loss in manifest["history"]["validation"])


def test_a_resumed_training_equals_an_uninterrupted_one(tiny_model, tokenizer, examples, tmp_path):
    """Killed after its checkpoint at update 3 (the later ones, a half-written one and the products
    gone), a training resumes there, its dropout and optimizer as they were, and ends where the
    uninterrupted one does."""
    whole = run(tiny_model, tokenizer, examples, tmp_path / "whole")
    cut = tmp_path / "cut"
    run(tiny_model, tokenizer, examples, cut)
    shutil.rmtree(cut / "checkpoints" / "update-000006")
    shutil.rmtree(cut / "adapter")
    (cut / "manifest.json").unlink()
    (cut / "checkpoints" / "update-000006.partial").mkdir()  # a checkpoint the kill cut short
    assert latest_checkpoint(cut) == cut / "checkpoints" / "update-000003"
    resumed = run(tiny_model, tokenizer, examples, cut)
    assert resumed["history"] == pytest.approx(whole["history"])  # updates and losses
    assert resumed["adapter_digest"] == whole["adapter_digest"]
    # a training resumed with nothing left to do keeps the seconds the runs before it spent
    again = run(tiny_model, tokenizer, examples, cut)
    assert again["seconds"]["updates"] == resumed["seconds"]["updates"] > 0


def test_checkpoints_of_other_settings_are_not_resumed(tiny_model, tokenizer, examples, tmp_path):
    """A training killed after a checkpoint, then asked again with another learning rate, starts from
    the beginning: it ends as a fresh training of the new settings does, not as a resumed one."""
    cut = tmp_path / "cut"
    run(tiny_model, tokenizer, examples, cut)
    shutil.rmtree(cut / "checkpoints" / "update-000006")
    other = replace(SMALL, learning_rate=5e-3)
    changed = run(tiny_model, tokenizer, examples, cut, other)
    fresh = run(tiny_model, tokenizer, examples, tmp_path / "fresh", other)
    assert (
        changed["history"] == pytest.approx(fresh["history"]) and changed["adapter_digest"] == fresh["adapter_digest"]
    )


def test_the_schedule_is_the_seeds_and_a_shorter_run_reads_a_prefix_of_a_longer_one():
    long, short = schedule(10, 4, 7, seed=3), schedule(10, 4, 3, seed=3)
    assert (long[:3] == short).all() and (schedule(10, 4, 7, seed=3) == long).all()
    assert sorted(long.ravel()[:10]) == list(range(10))  # an epoch reads every example once
    assert (schedule(10, 4, 7, seed=4) != long).any()


TOP = 5


def local_top(model_folder: Path, adapter: Path | None, prompt: list[int]) -> dict[int, float]:
    """The next token's TOP log-probabilities from transformers (with the peft adapter, or the base)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32)
    if adapter is not None:
        model = PeftModel.from_pretrained(model, adapter)
    with torch.no_grad():
        logits = model.eval()(input_ids=torch.tensor([prompt])).logits[0, -1]
    values, ids = torch.log_softmax(logits, dim=-1).topk(TOP)
    return dict(zip(ids.tolist(), values.tolist()))


def served_top(url: str, model: str, prompt: list[int]) -> dict[int, float]:
    """The same from the server's completions endpoint (the prompt as token ids, one greedy token)."""
    from openai import OpenAI

    client = OpenAI(base_url=f"{url}/v1", api_key="none")
    reply = client.completions.create(
        model=model,
        prompt=prompt,
        max_tokens=1,
        temperature=0,
        logprobs=TOP,
        extra_body={"return_tokens_as_token_ids": True},  # tokens as "token_id:<id>"
    )
    top = reply.choices[0].logprobs.top_logprobs[0]
    return {int(token.removeprefix("token_id:")): value for token, value in top.items()}


def test_vllm_serves_a_trained_adapter_as_a_lora_module(
    tiny_model, tokenizer, decisions, examples, tmp_path, monkeypatch
):
    """A trained adapter served by vLLM (its CPU build) as a LoRA module: the `waggle` method's openai
    backend asks for the module by name, and the server's next-token distribution under the adapter
    (and without it) is the one transformers computes with peft over the same tiny model."""
    from servers import CPU_SAFE_FLAGS, start_vllm, stop_vllm

    require_vllm()
    monkeypatch.chdir(tmp_path)
    params = filled_method(
        {"kind": "waggle", "backend": "openai", "model": "tiny", "base_url": "http://x/v1", "adapter": "small"}
    )
    folder = trained_folder("small", 0)
    run(tiny_model, tokenizer, examples, folder, SMALL)
    module = lora_module(params)
    assert module == "small-seed0"
    lora = ("--enable-lora", "--max-lora-rank", "8", "--lora-modules", f"{module}={folder / ADAPTER}")
    process, url = start_vllm(tiny_model, "tiny", tmp_path / "server.log", CPU_SAFE_FLAGS + lora)
    try:
        prompt = examples[0].tokens[: examples[0].prompt]
        trained = served_top(url, module, prompt)
        base = served_top(url, "tiny", prompt)
        # The waggle method's openai backend asks for the module: a view decided through the server.
        import pandas as pd

        from hivebench.waggle.study.viewset import decide

        view, actions, _ = decisions[0]
        decided = decide(
            pd.DataFrame({"actions": [json.dumps(actions)], "view": [json.dumps(view)]}),
            {**params, "base_url": f"{url}/v1", "adapter_seed": 0, "max_tokens": 64},
            tmp_path / "calls.jsonl",
            seed=0,
        )
    finally:
        stop_vllm(process)
    for served, adapter in ((trained, folder / ADAPTER), (base, None)):
        local = local_top(tiny_model, adapter, prompt)
        assert served.keys() == local.keys()
        assert all(served[token] == pytest.approx(value, abs=2e-3) for token, value in local.items())
    # the adapter moves the distribution well beyond that tolerance
    assert max(abs(value - base.get(token, -100.0)) for token, value in trained.items()) > 0.05
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert len(decided) == 1 and calls and all(call["model"].startswith(f"tiny+{module}@") for call in calls)


def test_a_base_model_named_by_hub_id_is_read_from_the_local_cache_and_never_downloaded(tiny_model, tmp_path):
    import os
    import subprocess
    import sys

    cache = tmp_path / "hub"
    snapshot = cache / "models--org--tiny" / "snapshots" / "abc123"
    shutil.copytree(tiny_model, snapshot)
    (cache / "models--org--tiny" / "refs").mkdir()
    (cache / "models--org--tiny" / "refs" / "main").write_text("abc123")
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "0"}  # offline or not: nothing is fetched
    ask = "from hivebench.models.open import local_path; import sys; print(local_path(sys.argv[1]))"
    found = subprocess.run([sys.executable, "-c", ask, "org/tiny"], env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == snapshot
    missing = subprocess.run([sys.executable, "-c", ask, "org/absent"], env=env, capture_output=True, text=True)
    assert "org/absent: neither a model folder nor in the Hugging Face cache" in missing.stderr
    assert "hf download org/absent" in missing.stderr
