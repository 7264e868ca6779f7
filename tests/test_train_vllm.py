"""A trained adapter served by vLLM (its CPU build) as a LoRA module: the `waggle` method's openai
backend asks for the module by name, and the server's next-token distribution under the adapter is
the one transformers computes with peft over the same tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require_vllm
from test_train import SMALL, decisions, examples, run, tokenizer  # noqa: F401  (fixtures)

from hivebench.config import filled_method
from hivebench.models.adapter import ADAPTER, lora_module, trained_folder

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
):  # noqa: F811
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
